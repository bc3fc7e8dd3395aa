"""Load-balancing endpoints over HTTP: a request to an endpoint's own URL, forwarded to a
worker's server as it is, its answer streamed back as the worker writes it.

The service gives each load-balancing endpoint a host of its own,
``https://ENDPOINT_ID.api.runpod.ai``, and the paths under it are the worker's. Here one
port serves everything, so an endpoint is reached two ways (docs/behaviour.md#load-
balancing-endpoints): by the ``Host`` header (``http://ID.localhost:PORT/<path>``, what a
browser or ``curl`` resolves), and by a path prefix any client can use,
``http://127.0.0.1:PORT/lb/ID/<path>``, which ``requestUrls.base`` gives. Both are
handled here, in front of the application's routes, as plain ASGI.

Which worker takes a request, waiting for one, the limits' clocks and billing are the
domain's (``domain/balancer``); this module moves the bytes: the request body (refused
over 30 MB), the answer (chunk by chunk, SSE included, cut over 30 MB), a WebSocket in
both directions, ``X-Runpod-Worker-Id`` on every answer a worker was chosen for, and the
service's error bodies, ``{"error": <the service's reason>, "message": <one line>}``.
The key the client sent is checked and not passed on: a worker never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from ..domain.balancer import BODY_LIMIT, PROCESSING_S, Lease, Refused
from ..domain.clock import sleep
from ..domain.errors import DomainError, NotFound
from ..emulator import Emulator
from .http import authorize, error_reply

log = logging.getLogger("nbext.emulator")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PREFIX = "/lb/"
WORKER_HEADER = "x-runpod-worker-id"
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "authorization",
        "content-length",
        "date",
        "server",
    }
)
"""Not forwarded either way: a hop's own headers, the key, lengths httpx sets, and what
the emulator's server says of itself."""
MB = 1024 * 1024


class LoadBalancing:
    """ASGI middleware: requests to a load-balancing endpoint's URL go to its workers;
    everything else to the application."""

    def __init__(self, app: ASGIApp, emulator: Emulator) -> None:
        self.app = app
        self.emulator = emulator
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = _target(scope) if scope["type"] in ("http", "websocket") else None
        if target is None:
            await self.app(scope, receive, send)
            return
        endpoint_id, path = target
        query = scope.get("query_string", b"").decode("latin-1")
        path_qs = path + (f"?{query}" if query else "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        lease: Lease | None = None
        try:
            self.emulator.bind()
            authorize(self.emulator, headers.get("authorization"))
            if scope["type"] == "http":
                body = await _body(headers.get("content-length"), receive)
            balancer = self.emulator.balancer
            if endpoint_id not in self.emulator.jobs.endpoints:
                raise NotFound(
                    f"endpoint {endpoint_id!r} not found; deployed endpoints: "
                    f"{', '.join(sorted(self.emulator.jobs.endpoints)) or 'none'}"
                )
            if endpoint_id not in balancer.endpoints:
                raise _not_served(self.emulator, endpoint_id)
            method = scope.get("method", "GET")
            lease = await balancer.acquire(
                endpoint_id, method, path, headers.get(WORKER_HEADER, "")
            )
        except _ClientGone:
            return
        except DomainError as exc:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": str(exc)[:120]})
            else:
                await _refuse(send, exc, None)
            return
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send, lease, path_qs, headers)
        else:
            await self._forward(scope, send, lease, path_qs, headers, body)

    # ---- HTTP ------------------------------------------------------------------------

    def client(self) -> httpx.AsyncClient:
        """One connection pool to the workers per loop (a server started anew gets one)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
            self._client = httpx.AsyncClient(timeout=None, limits=limits, trust_env=False)
            self._loop = loop
        return self._client

    async def _forward(
        self,
        scope: Scope,
        send: Send,
        lease: Lease,
        path: str,
        headers: dict[str, str],
        body: bytes,
    ) -> None:
        """Send the request to the lease's worker and stream its answer back, within the
        processing limit of the emulator's clock."""
        worker_id = lease.worker.id
        forwarded = [(k, v) for k, v in headers.items() if k not in HOP_BY_HOP]
        request = self.client().build_request(
            scope["method"], f"http://127.0.0.1:{lease.port}{path}", headers=forwarded, content=body
        )
        clock = self.emulator.clock
        task = asyncio.current_task()
        assert task is not None
        expired: list[bool] = []

        def expire() -> None:
            expired.append(True)
            task.cancel()

        overdue = clock.call_later(PROCESSING_S, expire)
        started = False
        status: int | None = None
        error: str | None = None
        try:
            response = await self.client().send(request, stream=True)
            try:
                status = response.status_code
                declared = response.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
                    status, error = 502, "response too large"
                    raise _Answer(
                        502,
                        error,
                        f"worker {worker_id} answered {int(declared)} bytes, over the "
                        f"{BODY_LIMIT // MB} MB limit of a response",
                    )
                out = [
                    (k.encode("latin-1"), v.encode("latin-1"))
                    for k, v in response.headers.multi_items()
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-encoding"
                ]
                if declared is not None and "content-encoding" not in response.headers:
                    out.append((b"content-length", declared.encode()))
                elif "content-encoding" in response.headers:
                    out.append((b"content-encoding", response.headers["content-encoding"].encode()))
                out.append((WORKER_HEADER.encode(), worker_id.encode()))
                await send({"type": "http.response.start", "status": status, "headers": out})
                started = True
                sent = 0
                gap = lease.endpoint.scenario.chunk_gap() if lease.endpoint.scenario else 0.0
                async for chunk in response.aiter_raw():
                    sent += len(chunk)
                    if sent > BODY_LIMIT:
                        error = f"response over the {BODY_LIMIT // MB} MB limit: cut"
                        raise _Cut(error)
                    if gap > 0:
                        await sleep(clock, gap)  # the slow-stream scenario
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                await response.aclose()
        except _Answer as exc:
            await _refuse(send, exc, worker_id)
        except asyncio.CancelledError:
            if not expired:
                raise
            task.uncancel()  # the processing limit cancelled it, not the client leaving
            error = f"worker {worker_id} took longer than {PROCESSING_S:g} s"
            status = None
            if not started:
                await _refuse(send, _Answer(504, "request timed out", error), worker_id)
            else:
                raise _Cut(error) from None
        except httpx.TransportError as exc:
            error = (
                f"worker {worker_id} closed the connection before it answered "
                f"({type(exc).__name__}): it crashed or exited, and its log says why; the "
                "next request waits for a new worker"
            )
            if not started:
                await _refuse(send, _Answer(502, "worker connection lost", error), worker_id)
            else:
                raise _Cut(error) from None
        finally:
            overdue.cancel()
            self.emulator.balancer.release(lease, status, error)

    # ---- WebSocket -------------------------------------------------------------------

    async def _websocket(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        lease: Lease,
        path: str,
        headers: dict[str, str],
    ) -> None:
        """Open the same path on the worker, then pass messages both ways until either
        side closes; the lease (and the worker's billing) lasts as long."""
        from websockets.asyncio.client import connect  # the one route that needs it
        from websockets.exceptions import ConnectionClosed, WebSocketException

        worker_id = lease.worker.id
        error: str | None = None
        try:
            subprotocols = [
                p.strip() for p in headers.get("sec-websocket-protocol", "").split(",") if p.strip()
            ]
            async with connect(
                f"ws://127.0.0.1:{lease.port}{path}",
                subprotocols=subprotocols or None,  # type: ignore[arg-type]
                max_size=BODY_LIMIT,
                open_timeout=PROCESSING_S,
            ) as upstream:
                await receive()  # websocket.connect
                await send(
                    {
                        "type": "websocket.accept",
                        "subprotocol": upstream.subprotocol,
                        "headers": [(WORKER_HEADER.encode(), worker_id.encode())],
                    }
                )

                async def downstream() -> None:
                    async for message in upstream:
                        key = "bytes" if isinstance(message, bytes) else "text"
                        await send({"type": "websocket.send", key: message})
                    await send({"type": "websocket.close", "code": upstream.close_code or 1000})

                pump = asyncio.ensure_future(downstream())
                try:
                    while True:
                        message = await receive()
                        if message["type"] == "websocket.disconnect":
                            break
                        data = message.get("bytes")
                        await upstream.send(data if data is not None else message.get("text", ""))
                finally:
                    pump.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await pump
        except (OSError, WebSocketException) as exc:
            error = f"worker {worker_id} refused the WebSocket: {exc}"
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1011, "reason": error[:120]})
        finally:
            self.emulator.balancer.release(lease, 101, error)


class _Answer(DomainError):
    """An answer the proxy gives instead of the worker's (status, the service's reason)."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error = status, error


class _TooLarge(_Answer):
    pass


class _ClientGone(Exception):
    """The client left before its request was read whole."""


class _Cut(Exception):
    """An answer already under way that must end as broken, not as complete: the
    connection is dropped, so the client sees a truncated body."""


def _target(scope: Scope) -> tuple[str, str] | None:
    """(endpoint id, the worker's path) when the request is for a load-balancing URL."""
    path: str = scope["path"]
    if path.startswith(PREFIX):
        endpoint_id, _, rest = path[len(PREFIX) :].partition("/")
        return (endpoint_id, "/" + rest) if endpoint_id else None
    for name, value in scope["headers"]:
        if name == b"host":
            host = value.decode("latin-1").rsplit(":", 1)[0].lower()
            if host.endswith(".localhost") and host.count(".") == 1:
                return host[: -len(".localhost")], path
            return None
    return None


async def _body(declared: str | None, receive: Receive) -> bytes:
    if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
        raise _TooLarge(413, "request too large", _over(int(declared)))
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientGone
        piece = message.get("body", b"")
        size += len(piece)
        if size > BODY_LIMIT:
            raise _TooLarge(413, "request too large", _over(None))
        parts.append(piece)
        if not message.get("more_body"):
            return b"".join(parts)


def _over(size: int | None) -> str:
    got = f" ({size} bytes)" if size is not None else ""
    return f"request body{got} is over the {BODY_LIMIT // MB} MB limit of a load-balancing endpoint"


def _not_served(emulator: Emulator, endpoint_id: str) -> DomainError:
    if emulator.endpoint_type(endpoint_id) != "LOAD_BALANCER":
        return _Answer(
            400,
            "not a load-balancing endpoint",
            f"endpoint {endpoint_id!r} is a queue endpoint: send jobs to "
            f"/v2/{endpoint_id}/run or /runsync",
        )
    return Refused(
        503,
        "no workers available",
        f"endpoint {endpoint_id!r} runs an image the emulator has no server for; deploy a "
        "server script (--lb-worker ID=PATH, nbext.deploy(PATH, ID, load_balancer=True)) "
        "or use the image llm-lb",
    )


async def _refuse(send: Send, exc: DomainError, worker_id: str | None) -> None:
    if isinstance(exc, (Refused, _Answer)):
        status, body = exc.status, {"error": exc.error, "message": exc.message}
    else:
        status, reply, _ = error_reply(exc, "error")
        body = reply
    headers = [(b"content-type", b"application/json")]
    if worker_id is not None:
        headers.append((WORKER_HEADER.encode(), worker_id.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
