"""``/v2/{endpoint_id}/...``: the job interface, translated to ``JobService`` calls.

These are the emulator's hot routes: batches and benchmarks send thousands of requests a
second through them. So they are plain ASGI, matched by ``JobRoutes`` before FastAPI's
stack is entered: FastAPI's routing, dependency solving and middleware cost several times
what a job costs (``benchmarks/emulator_throughput.py`` measures the whole). Everything
else (``/v1``,
``/_emulator``, unknown paths) stays FastAPI's. The routes stay thin: parse, call the
domain, serialise; auth, the rate limiter, body limits and error bodies are the same
helpers the FastAPI routes use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote

from pydantic import ValidationError
from starlette.types import Receive, Scope, Send

from nbext.models import (
    RUN_BODY_LIMIT,
    RUNSYNC_BODY_LIMIT,
    RUNSYNC_WAIT_DEFAULT_MS,
    RUNSYNC_WAIT_MAX_MS,
    RUNSYNC_WAIT_MIN_MS,
    STREAM_WAIT_DEFAULT_MS,
    TTL_MAX_MS,
    TTL_MIN_MS,
    JobSubmission,
)
from nbext.models.v2 import MANAGEMENT_SEGMENTS

from ..domain.errors import DomainError, InvalidInput
from ..emulator import Emulator
from .http import (
    authorize,
    encode,
    error_reply,
    ms_param,
    parse_json,
    read_limited,
    validation_message,
)

PREFIX = "/v2/"
STREAM_WAIT_MAX_MS = 300_000


class ClientGone(Exception):
    """The client hung up while its body was being read: there is nobody to answer."""


class Call:
    """One request to the job interface: what its route needs, parsed only when asked."""

    __slots__ = ("_receive", "_scope", "emulator", "endpoint_id", "job_id")

    def __init__(
        self, emulator: Emulator, endpoint_id: str, job_id: str, scope: Scope, receive: Receive
    ) -> None:
        self.emulator = emulator
        self.endpoint_id = endpoint_id
        self.job_id = job_id
        """The ``{job_id}`` segment ("" for an operation without one)."""
        self._scope = scope
        self._receive = receive

    def header(self, name: bytes) -> str | None:
        """The first header called ``name`` (lower case, as ASGI servers give them)."""
        for key, value in self._scope["headers"]:
            if key == name:
                text: str = value.decode("latin-1")
                return text
        return None

    def query(self, name: str) -> str | None:
        """A query parameter (the last one, when repeated, as Starlette's ``query_params``)."""
        raw: bytes = self._scope.get("query_string", b"")
        if not raw:
            return None
        return dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True)).get(name)

    async def body(self, limit: int) -> bytes:
        """The body, with the 413 rules of ``read_limited``."""
        return await read_limited(self.header(b"content-length"), self._pieces(), limit)

    async def _pieces(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._receive()
            if message["type"] != "http.request":
                raise ClientGone
            yield message.get("body", b"")
            if not message.get("more_body", False):
                return


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Route:
    """One operation: its path segment (also its rate-limit name), methods and handler."""

    operation: str
    methods: tuple[str, ...]
    handler: Handler
    has_id: bool
    query: tuple[str, ...] = ()
    """Query parameters it reads (integer milliseconds), for the OpenAPI description."""


async def _submission(call: Call, limit: int) -> JobSubmission:
    data = parse_json(await call.body(limit))
    if not isinstance(data, dict):
        raise InvalidInput('request body must be a JSON object such as {"input": {...}}')
    try:
        return JobSubmission.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from None


async def run(call: Call) -> Any:
    """Queue a job; answers its id at once."""
    submission = await _submission(call, RUN_BODY_LIMIT)
    job = call.emulator.jobs.submit(call.endpoint_id, submission, sync=False)
    return {"id": job.id, "status": "IN_QUEUE"}


async def runsync(call: Call) -> Any:
    """Run a job and answer its result as soon as it ends, or its state after ``wait`` ms."""
    low, high, default = RUNSYNC_WAIT_MIN_MS, RUNSYNC_WAIT_MAX_MS, RUNSYNC_WAIT_DEFAULT_MS
    wait = ms_param("wait", call.query("wait"), low, high, default)
    submission = await _submission(call, RUNSYNC_BODY_LIMIT)
    assert wait is not None
    return await call.emulator.jobs.run_sync(call.endpoint_id, submission, wait)


async def status(call: Call) -> Any:
    """A job's state and, once it ended, its output or error; ``ttl`` sets its TTL."""
    ttl = ms_param("ttl", call.query("ttl"), TTL_MIN_MS, TTL_MAX_MS, None)
    return call.emulator.jobs.status_wire(call.endpoint_id, call.job_id, ttl)


async def status_sync(call: Call) -> Any:
    """A job's state, waiting up to ``wait`` ms for it to end (the JS SDK's runSync fallback)."""
    low, high, default = RUNSYNC_WAIT_MIN_MS, RUNSYNC_WAIT_MAX_MS, RUNSYNC_WAIT_DEFAULT_MS
    wait = ms_param("wait", call.query("wait"), low, high, default)
    assert wait is not None
    service = call.emulator.jobs
    job = service.job(call.endpoint_id, call.job_id)
    await service.wait_final(job, wait / 1000)
    return service.status_wire(call.endpoint_id, call.job_id)


async def stream(call: Call) -> Any:
    """Stream chunks not handed out before, waiting up to ``wait`` ms for one."""
    wait = ms_param("wait", call.query("wait"), 0, STREAM_WAIT_MAX_MS, STREAM_WAIT_DEFAULT_MS)
    assert wait is not None
    return await call.emulator.jobs.stream(call.endpoint_id, call.job_id, wait)


async def cancel(call: Call) -> Any:
    """Cancel a queued or running job."""
    return call.emulator.jobs.cancel(call.endpoint_id, call.job_id)


async def retry(call: Call) -> Any:
    """Queue a FAILED or TIMED_OUT job again, under the same id."""
    return call.emulator.jobs.retry(call.endpoint_id, call.job_id)


async def purge_queue(call: Call) -> Any:
    """Remove every queued job of the endpoint; running jobs go on."""
    return call.emulator.jobs.purge(call.endpoint_id)


async def health(call: Call) -> Any:
    """Job counters and worker states of the endpoint."""
    return call.emulator.jobs.health(call.endpoint_id)


async def requests(call: Call) -> Any:
    """The endpoint's retained jobs, newest first."""
    return [job.to_wire() for job in call.emulator.jobs.requests(call.endpoint_id)]


ROUTES: dict[str, Route] = {
    route.operation: route
    for route in (
        Route("run", ("POST",), run, has_id=False),
        Route("runsync", ("POST",), runsync, has_id=False, query=("wait",)),
        Route("status", ("GET",), status, has_id=True, query=("ttl",)),
        Route("status-sync", ("GET",), status_sync, has_id=True, query=("wait",)),
        Route("stream", ("GET",), stream, has_id=True, query=("wait",)),
        Route("cancel", ("POST",), cancel, has_id=True),
        Route("retry", ("POST",), retry, has_id=True),
        Route("purge-queue", ("POST",), purge_queue, has_id=False),
        Route("health", ("GET",), health, has_id=False),
        Route("requests", ("GET",), requests, has_id=False),
    )
}
"""Operation -> route, for ``/v2/{endpoint_id}/{operation}[/{job_id}]``."""


Match = tuple[Route, str, str]
"""A matched request: the route, the endpoint id and the job id ("" when none)."""


class JobRoutes:
    """The ASGI side of the job interface for one emulator."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    @staticmethod
    def match(path: str) -> Match | None:
        """The route ``path`` names, or None (FastAPI then answers it, 404 included)."""
        if not path.startswith(PREFIX):
            return None
        parts = path[len(PREFIX) :].split("/")
        if len(parts) < 2 or not parts[0] or parts[0] in MANAGEMENT_SEGMENTS:
            return None  # management's /v2/pods/... is FastAPI's, never a job route
        route = ROUTES.get(parts[1])
        if route is None:
            return None
        if route.has_id:
            return (route, parts[0], parts[2]) if len(parts) == 3 and parts[2] else None
        return (route, parts[0], "") if len(parts) == 2 else None

    async def serve(self, match: Match, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one matched request: 200 with the route's value, or the error's status."""
        route, endpoint_id, job_id = match
        if scope["method"] not in route.methods:
            allowed = ", ".join(route.methods)
            await send_json(
                send,
                405,
                {"error": f"/{route.operation} takes {allowed}, not {scope['method']}"},
                {"Allow": allowed},
            )
            return
        call = Call(self.emulator, endpoint_id, job_id, scope, receive)
        try:
            value = await self._admitted(route, call)
        except DomainError as exc:
            status, body, headers = error_reply(exc, "error")
            await send_json(send, status, body, headers)
            return
        except ClientGone:
            return
        except Exception as exc:
            await send_json(
                send,
                500,
                {"error": f"the emulator failed on this request ({type(exc).__name__}); "
                 "its log has the traceback"},
            )  # fmt: skip
            raise  # the server logs the traceback, and in-process tests see it
        await send_json(send, 200, value)

    async def _admitted(self, route: Route, call: Call) -> Any:
        """Authenticate, check the endpoint exists, hold a rate/concurrency slot, run."""
        emulator = self.emulator
        authorize(emulator, call.header(b"authorization"))
        emulator.bind()
        service = emulator.jobs
        endpoint_id = call.endpoint_id
        service.endpoint(endpoint_id)
        limiter = emulator.rate_limiter
        held = limiter.enabled and limiter.acquire(
            endpoint_id, route.operation, service.running_workers(endpoint_id)
        )
        try:
            return await route.handler(call)
        finally:
            if held:
                limiter.release(endpoint_id, route.operation)


async def redirect(scope: Scope, send: Send, path: str) -> None:
    """307 to ``path`` (with the same query): a job route asked for with a trailing slash."""
    query: bytes = scope.get("query_string", b"")
    location = quote(scope.get("root_path", "") + path) + ("?" + query.decode() if query else "")
    await send(
        {
            "type": "http.response.start",
            "status": 307,
            "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def send_json(
    send: Send, status: int, value: Any, headers: dict[str, str] | None = None
) -> None:
    """Send one complete JSON response."""
    body = encode(value)
    raw = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if headers:
        raw.extend((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items())
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (FastAPI's, for the other routes) with the job routes added, so the
    emulator's ``/_emulator/docs`` lists every route it serves."""

    def param(name: str, where: str, kind: str) -> dict[str, Any]:
        return {"name": name, "in": where, "required": where == "path", "schema": {"type": kind}}

    submission = JobSubmission.model_json_schema(
        by_alias=True, ref_template="#/components/schemas/{model}"
    )
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(submission.pop("$defs", {}))
    schemas["JobSubmission"] = submission
    paths = schema.setdefault("paths", {})
    for route in ROUTES.values():
        tail = "/{job_id}" if route.has_id else ""
        params = [param("endpoint_id", "path", "string")]
        params += [param(tail[2:-1], "path", "string")] if tail else []
        params += [param(name, "query", "integer") for name in route.query]
        operation: dict[str, Any] = {
            "tags": ["jobs"],
            "summary": (route.handler.__doc__ or "").strip().split("\n")[0],
            "parameters": params,
            "responses": {"200": {"description": "the job interface's answer"}},
        }
        if route.operation in ("run", "runsync"):
            operation["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/JobSubmission"}}
                },
            }
        paths[f"/v2/{{endpoint_id}}/{route.operation}{tail}"] = {
            method.lower(): {**operation, "operationId": f"{route.operation}_{method.lower()}"}
            for method in route.methods
        }
    return schema
