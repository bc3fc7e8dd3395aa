"""The worker side of the job interface, as the ``runpod`` SDK's worker speaks it
(docs/workers.md): each call carries the key the emulator issued the worker, bare."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..domain.errors import InvalidInput, TooLarge
from ..domain.output_limit import MB, OUTPUT_LIMIT, too_large
from ..domain.remote_workers import RemoteWorker, WorkerRefused
from .http import emulator_of, json_response, no_content
from .jobs import PREFIX

BATCH_MAX = 64
REFUSAL_DELAY_S = 1.0
T = TypeVar("T")

router = APIRouter(prefix=PREFIX, tags=["worker protocol"])


async def _worker(request: Request, endpoint_id: str, worker_id: str) -> RemoteWorker:
    emulator = emulator_of(request)
    emulator.bind()
    try:
        return emulator.remote_workers.authenticate(
            endpoint_id, worker_id, request.headers.get("authorization")
        )
    except WorkerRefused:
        # The SDK asks again at once after any refusal: slowed down, a worker with a
        # wrong key retries once a second instead of spinning.
        await asyncio.sleep(REFUSAL_DELAY_S)
        raise


async def unless_gone(request: Request, held: Awaitable[T]) -> tuple[bool, T | None]:
    """(whether the caller left first, what ``held`` gave): a long poll abandoned when its
    caller disconnects, so a killed worker's held take hands out no job."""
    work = asyncio.ensure_future(held)
    gone = asyncio.ensure_future(_disconnect(request))
    try:
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        went = not work.done()
        if went:
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
    return (True, None) if went else (False, work.result())


async def _disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _taken(value: Any) -> Response:
    return json_response(value) if value else no_content()


@router.get("/job-take/{worker_id}")
async def take(endpoint_id: str, worker_id: str, request: Request) -> Response:
    """One queued job, held open up to the hold time while there is none."""
    worker = await _worker(request, endpoint_id, worker_id)
    _, jobs = await unless_gone(request, emulator_of(request).remote_workers.take(worker, 1))
    return _taken(jobs[0] if jobs else None)


@router.get("/job-take-batch/{worker_id}")
async def take_batch(
    endpoint_id: str, worker_id: str, request: Request, batch_size: str | None = None
) -> Response:
    """Up to ``batch_size`` queued jobs, held open up to the hold time while there is none."""
    worker = await _worker(request, endpoint_id, worker_id)
    raw = batch_size or "1"
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= BATCH_MAX):
        raise InvalidInput(f"batch_size must be an integer from 1 to {BATCH_MAX}, got {raw!r}")
    held = emulator_of(request).remote_workers.take(worker, int(raw))
    return _taken((await unless_gone(request, held))[1])


@router.get("/job-stop/{worker_id}")
async def stop(endpoint_id: str, worker_id: str, request: Request) -> Response:
    """Ids of the jobs the worker must stop, held open up to the hold time while none."""
    worker = await _worker(request, endpoint_id, worker_id)
    ids = await emulator_of(request).remote_workers.stops(worker)
    return _taken({"jobsToStop": ids} if ids else None)


@router.get("/ping/{worker_id}")
async def ping(
    endpoint_id: str,
    worker_id: str,
    request: Request,
    status: str | None = None,
    check: str | None = None,
    reason: str | None = None,
) -> Response:
    """A heartbeat; ``status=unhealthy`` reports a failed startup check."""
    worker = await _worker(request, endpoint_id, worker_id)
    failed = f"{check or 'a check'} failed: {reason or ''}" if status == "unhealthy" else None
    emulator_of(request).remote_workers.ping(worker, failed)
    return json_response({})


async def _posted(
    request: Request, endpoint_id: str, worker_id: str, job_id: str
) -> tuple[RemoteWorker, bytes]:
    """The worker and what it posts, if within ``OUTPUT_LIMIT``; past it, the job fails at
    once and the post is read to its end and answered 413 (the SDK only logs a refusal,
    and the job would otherwise wait for its execution timeout)."""
    worker = await _worker(request, endpoint_id, worker_id)
    pieces: list[bytes] = []
    size = 0
    async for piece in request.stream():
        size += len(piece)
        if size <= OUTPUT_LIMIT:
            pieces.append(piece)
        elif pieces:
            pieces.clear()
    if size <= OUTPUT_LIMIT:
        return worker, b"".join(pieces)
    failed = json.dumps({"error": too_large(size)}).encode()
    emulator_of(request).remote_workers.done(worker, job_id, failed)
    raise TooLarge(f"the post is over the {OUTPUT_LIMIT // MB} MB output limit; the job failed")


@router.post("/job-stream/{worker_id}/{job_id}")
async def stream(endpoint_id: str, worker_id: str, job_id: str, request: Request) -> Response:
    """One streamed chunk of a job the worker holds."""
    worker, body = await _posted(request, endpoint_id, worker_id, job_id)
    await emulator_of(request).remote_workers.stream(worker, job_id, body)
    return json_response({})


@router.post("/job-done/{worker_id}/{job_id}")
async def done(endpoint_id: str, worker_id: str, job_id: str, request: Request) -> Response:
    """A job's progress, result or error."""
    worker, body = await _posted(request, endpoint_id, worker_id, job_id)
    emulator_of(request).remote_workers.done(worker, job_id, body)
    return json_response({})
