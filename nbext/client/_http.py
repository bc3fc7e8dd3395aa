"""``endpoint.http()``: an httpx client for a load-balancing endpoint's own paths, with no
verbs of nbext's (docs/behaviour.md#load-balancing-endpoints-from-the-client)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

import httpx

from nbext.models.v2 import Endpoint as EndpointRecord

from ._calls import Call, error_from_response
from ._errors import BadRequest, PayloadTooLarge
from ._flows import Context
from ._retry import Kind

LOAD_BALANCER = "LOAD_BALANCER"
BODY_LIMIT = 30 * 1024 * 1024
"""The service's limit on a load-balancing request's body (and its answer's)."""
WORKER_HEADER = "X-Runpod-Worker-Id"
"""The worker that answered; sent back (``ID``, ``strict ID``, ``strict-resume ID``) it
asks for that worker (docs/behaviour.md#load-balancing-endpoints-from-the-client)."""


def lb_base(record: EndpointRecord) -> str | None:
    """Where a load-balancing endpoint's worker paths are; None for a queue endpoint."""
    urls = record.request_urls
    return urls.base.rstrip("/") if record.type == LOAD_BALANCER and urls and urls.base else None


def queue_based(endpoint_id: str) -> BadRequest:
    """The one-line refusal of ``http()`` on a queue endpoint."""
    reason = (
        f"endpoint {endpoint_id!r} is queue-based: send it jobs with run() or run_sync(); "
        "http() is for load-balancing endpoints"
    )
    return BadRequest(
        reason, status=400, sent=False, operation="http", endpoint_id=endpoint_id, reason=reason
    )


class Checks:
    """The hooks of one endpoint's httpx client: oversized requests refused, error
    answers raised as the client's errors (read whole first: the error quotes them)."""

    def __init__(self, base: str, endpoint_id: str, ctx: Context, *, checked: bool = True):
        self.prefix = httpx.URL(base).path.rstrip("/")
        """The base's own path (the emulator's ``/lb/ID``): messages name the worker's."""
        self.endpoint_id = endpoint_id
        self.ctx = ctx
        self.checked = checked
        """False: the hooks only record, for a client that raises its own errors (the
        ``openai`` package's): its requests are recorded as ``http()``'s are."""

    def request(self, request: httpx.Request) -> None:
        request.extensions["nbext_sent"] = self.ctx.now()  # a recording's times count from it
        size = int(request.headers.get("content-length") or 0)
        if self.checked and size > BODY_LIMIT:
            reason = f"the body is {size:,} bytes, over the service's {BODY_LIMIT:,}"
            path = self._path(request)
            raise PayloadTooLarge(
                f"{request.method} {path} (endpoint {self.endpoint_id!r}): {reason}",
                status=413,
                sent=False,
                method=request.method,
                path=path,
                operation="http",
                endpoint_id=self.endpoint_id,
                reason=reason,
            )

    def response(self, response: httpx.Response) -> None:
        self._record(response)
        if self.checked and response.is_error:
            response.read()
            raise self._error(response)

    async def arequest(self, request: httpx.Request) -> None:
        self.request(request)

    async def aresponse(self, response: httpx.Response) -> None:
        self._record(response)
        if self.checked and response.is_error:
            await response.aread()
            raise self._error(response)

    def _error(self, response: httpx.Response) -> Exception:
        worker = response.headers.get(WORKER_HEADER)
        subject = f"endpoint {self.endpoint_id!r}" + (f", worker {worker}" if worker else "")
        request = response.request
        call = Call(
            request.method,
            self._path(request),
            "http",
            Kind.IDEMPOTENT,
            self.endpoint_id,
            subject=subject,
        )
        assert self.ctx.secret is not None
        return error_from_response(call, response, self.ctx.secret, self.ctx.key_source)

    def _record(self, response: httpx.Response) -> None:
        """While the client records, the answer goes to the recording as it is read."""
        if (recording := self.ctx.recording) is not None:
            request = response.request  # the path as sent, with its query: as a worker reads it
            path = request.url.raw_path.decode().removeprefix(self.prefix) or "/"
            sent = request.extensions.get("nbext_sent", self.ctx.now())
            recording.tap(self.endpoint_id, path, response, sent, self.ctx.now)

    def _path(self, request: httpx.Request) -> str:
        return request.url.path.removeprefix(self.prefix) or "/"

    def hooks(self, *, awaited: bool) -> dict[str, list[Callable[..., Any]]]:
        """An httpx client's ``event_hooks``."""
        if awaited:
            return {"request": [self.arequest], "response": [self.aresponse]}
        return {"request": [self.request], "response": [self.response]}


class EndpointClient(httpx.Client):
    """``endpoint.http()``'s client: one per endpoint and nbext client, reused by every
    call. A ``with`` block closes it, as it closes any httpx client (the next ``http()``
    makes a new one), and may begin on one an earlier call already opened."""

    def __enter__(self) -> Self:
        try:
            return super().__enter__()
        except RuntimeError:  # httpx: "cannot open a client instance more than once"
            if self.is_closed:
                raise
            return self


class AsyncEndpointClient(httpx.AsyncClient):
    """``endpoint.async_http()``'s client (see ``EndpointClient``)."""

    async def __aenter__(self) -> Self:
        try:
            return await super().__aenter__()
        except RuntimeError:
            if self.is_closed:
                raise
            return self
