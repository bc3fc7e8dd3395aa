"""The worker side of the job interface, as the ``runpod`` SDK's worker speaks it.

``/v2/{endpoint_id}/job-take/{worker}``, ``job-take-batch/{worker}``,
``job-stop/{worker}``, ``ping/{worker}``, ``job-stream/{worker}/{job}`` and
``job-done/{worker}/{job}``: plain ASGI like the job routes (``jobs.JobRoutes``), since
a worker polls them continuously. Each call authenticates the worker by the key the
emulator issued for it, sent bare in ``Authorization`` as the SDK sends it. Takes and
stop polls are held open while there is nothing to give (``remote_workers.TAKE_HOLD_S``),
then answered 204, as the SDK expects; docs/workers.md describes the whole protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope, Send

from ..domain.errors import DomainError, InvalidInput
from ..domain.remote_workers import RemoteWorker, WorkerRefused
from ..emulator import Emulator
from .http import STATUS_OF, error_reply
from .jobs import PREFIX, Call, ClientGone, send_json

STATUS_OF[WorkerRefused] = 401

OUTPUT_BODY_LIMIT = 64 * 1024 * 1024
"""A worker's result or chunk; the SDK warns from 20 MB, the limit leaves it room."""
BATCH_MAX = 64
REFUSAL_DELAY_S = 1.0

NO_CONTENT = object()
"""A route's answer meaning 204 with no body."""

Handler = Callable[[Call, RemoteWorker], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class WorkerRoute:
    operation: str
    method: str
    handler: Handler
    has_job: bool


async def take(call: Call, worker: RemoteWorker) -> Any:
    jobs = await call.emulator.remote_workers.take(worker, 1)
    return jobs[0] if jobs else NO_CONTENT


async def take_batch(call: Call, worker: RemoteWorker) -> Any:
    raw = call.query("batch_size") or "1"
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= BATCH_MAX):
        raise InvalidInput(f"batch_size must be an integer from 1 to {BATCH_MAX}, got {raw!r}")
    size = int(raw)
    jobs = await call.emulator.remote_workers.take(worker, size)
    return jobs or NO_CONTENT


async def stop(call: Call, worker: RemoteWorker) -> Any:
    ids = await call.emulator.remote_workers.stops(worker)
    return {"jobsToStop": ids} if ids else NO_CONTENT


async def ping(call: Call, worker: RemoteWorker) -> Any:
    failed = None
    if call.query("status") == "unhealthy":
        failed = f"{call.query('check') or 'a check'} failed: {call.query('reason') or ''}"
    call.emulator.remote_workers.ping(worker, failed)
    return {}


async def stream(call: Call, worker: RemoteWorker) -> Any:
    body = await call.body(OUTPUT_BODY_LIMIT)
    call.emulator.remote_workers.stream(worker, call.job_id, body)
    return {}


async def done(call: Call, worker: RemoteWorker) -> Any:
    body = await call.body(OUTPUT_BODY_LIMIT)
    call.emulator.remote_workers.done(worker, call.job_id, body)
    return {}


ROUTES: dict[str, WorkerRoute] = {
    route.operation: route
    for route in (
        WorkerRoute("job-take", "GET", take, has_job=False),
        WorkerRoute("job-take-batch", "GET", take_batch, has_job=False),
        WorkerRoute("job-stop", "GET", stop, has_job=False),
        WorkerRoute("ping", "GET", ping, has_job=False),
        WorkerRoute("job-stream", "POST", stream, has_job=True),
        WorkerRoute("job-done", "POST", done, has_job=True),
    )
}

Match = tuple[WorkerRoute, str, str, str]
"""The route, endpoint id, worker id and job id ("" when none)."""


class WorkerRoutes:
    """The ASGI side of the worker protocol for one emulator."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    @staticmethod
    def match(path: str) -> Match | None:
        if not path.startswith(PREFIX):
            return None
        parts = path[len(PREFIX) :].split("/")
        if len(parts) < 3 or not parts[0] or not parts[2]:
            return None
        route = ROUTES.get(parts[1])
        if route is None:
            return None
        if route.has_job:
            return (route, parts[0], parts[2], parts[3]) if len(parts) == 4 and parts[3] else None
        return (route, parts[0], parts[2], "") if len(parts) == 3 else None

    async def serve(self, match: Match, scope: Scope, receive: Receive, send: Send) -> None:
        route, endpoint_id, worker_id, job_id = match
        if scope["method"] != route.method:
            await send_json(
                send,
                405,
                {"error": f"/{route.operation} takes {route.method}, not {scope['method']}"},
                {"Allow": route.method},
            )
            return
        call = Call(self.emulator, endpoint_id, job_id, scope, receive)
        try:
            self.emulator.bind()
            worker = self.emulator.remote_workers.authenticate(
                endpoint_id, worker_id, call.header(b"authorization")
            )
            value = await route.handler(call, worker)
        except DomainError as exc:
            if isinstance(exc, WorkerRefused):
                # The SDK asks again at once after any refusal: slowed down, a worker
                # with a wrong key retries once a second instead of spinning.
                await asyncio.sleep(REFUSAL_DELAY_S)
            status, body, headers = error_reply(exc, "error")
            await send_json(send, status, body, headers)
            return
        except ClientGone:
            return
        if value is NO_CONTENT:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send_json(send, 200, value)
