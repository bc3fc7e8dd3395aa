"""``/v2/{endpoint_id}/...``: the job interface, translated to ``JobService`` calls.

Query parameters are read as text by ``http.ms_param``: the interface's one-line 400,
not FastAPI's 422.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.convertors import StringConvertor, register_url_convertor

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

from ..domain.errors import InvalidInput
from ..domain.management.refusals import validated
from ..emulator import Emulator
from .http import authenticate, json_response, ms_param, parse_json, read_body


class EndpointIdConvertor(StringConvertor):
    """Any segment but a management resource's name, so ``/v2/pods/health`` is a pod,
    whatever order the routers are included in."""

    regex = "(?!(?:{})/)[^/]+".format("|".join(re.escape(s) for s in sorted(MANAGEMENT_SEGMENTS)))


register_url_convertor("endpoint_id", EndpointIdConvertor())

PREFIX = "/v2/{endpoint_id:endpoint_id}"
router = APIRouter(prefix=PREFIX, tags=["jobs"])

STREAM_WAIT_MAX_MS = 300_000


Wait = Annotated[str | None, Query(description="milliseconds to wait for the job to end")]


@asynccontextmanager
async def admitted(request: Request, endpoint_id: str, operation: str) -> AsyncIterator[Emulator]:
    """Authenticate, check the endpoint exists, and hold a rate/concurrency slot (batch
    calls may read the batches of an endpoint deleted since)."""
    emulator = await authenticate(request)
    service = emulator.jobs
    if operation == "batch":
        emulator.batches.known(endpoint_id)
    else:
        service.endpoint(endpoint_id)
    if operation in ("run", "runsync") and emulator.endpoint_type(endpoint_id) == "LOAD_BALANCER":
        raise InvalidInput(
            f"endpoint {endpoint_id!r} is a load-balancing endpoint: it takes no jobs; send "
            f"requests to its own paths under {request.base_url}lb/{endpoint_id}/"
        )
    limiter = emulator.rate_limiter
    held = limiter.enabled and limiter.acquire(
        endpoint_id, operation, service.running_workers(endpoint_id)
    )
    try:
        yield emulator
    finally:
        if held:
            limiter.release(endpoint_id, operation)


async def _submission(request: Request, limit: int) -> JobSubmission:
    data = parse_json(await read_body(request, limit))
    if not isinstance(data, dict):
        raise InvalidInput('request body must be a JSON object such as {"input": {...}}')
    return validated(JobSubmission, data, {})  # a 400 naming each bad field


def _wait(wait: str | None) -> int:
    ms = ms_param("wait", wait, RUNSYNC_WAIT_MIN_MS, RUNSYNC_WAIT_MAX_MS, RUNSYNC_WAIT_DEFAULT_MS)
    assert ms is not None
    return ms


@router.post("/run")
async def run(endpoint_id: str, request: Request) -> Response:
    """Queue a job (body ``{"input": ...}``); answers its id at once."""
    async with admitted(request, endpoint_id, "run") as emulator:
        submission = await _submission(request, RUN_BODY_LIMIT)
        job = emulator.jobs.submit(endpoint_id, submission, sync=False)
        return json_response({"id": job.id, "status": "IN_QUEUE"})


@router.post("/runsync")
async def runsync(endpoint_id: str, request: Request, wait: Wait = None) -> Response:
    """Run a job and answer its result as soon as it ends, or its state after ``wait`` ms."""
    async with admitted(request, endpoint_id, "runsync") as emulator:
        wait_ms = _wait(wait)
        submission = await _submission(request, RUNSYNC_BODY_LIMIT)
        return json_response(await emulator.jobs.run_sync(endpoint_id, submission, wait_ms))


@router.get("/status/{job_id}")
async def status(
    endpoint_id: str,
    job_id: str,
    request: Request,
    ttl: Annotated[str | None, Query(description="the job's new TTL in milliseconds")] = None,
) -> Response:
    """A job's state and, once it ended, its output or error; ``ttl`` sets its TTL."""
    async with admitted(request, endpoint_id, "status") as emulator:
        ttl_ms = ms_param("ttl", ttl, TTL_MIN_MS, TTL_MAX_MS, None)
        return json_response(emulator.jobs.status_wire(endpoint_id, job_id, ttl_ms))


@router.get("/status-sync/{job_id}")
async def status_sync(
    endpoint_id: str, job_id: str, request: Request, wait: Wait = None
) -> Response:
    """A job's state, waiting up to ``wait`` ms for it to end (the JS SDK's runSync fallback)."""
    async with admitted(request, endpoint_id, "status-sync") as emulator:
        wait_ms = _wait(wait)
        service = emulator.jobs
        await service.wait_final(service.job(endpoint_id, job_id), wait_ms / 1000)
        return json_response(service.status_wire(endpoint_id, job_id))


@router.get("/stream/{job_id}")
async def stream(
    endpoint_id: str,
    job_id: str,
    request: Request,
    wait: Annotated[str | None, Query(description="milliseconds to wait for a chunk")] = None,
) -> Response:
    """Stream chunks not handed out before, waiting up to ``wait`` ms for one."""
    async with admitted(request, endpoint_id, "stream") as emulator:
        wait_ms = ms_param("wait", wait, 0, STREAM_WAIT_MAX_MS, STREAM_WAIT_DEFAULT_MS)
        assert wait_ms is not None
        return json_response(await emulator.jobs.stream(endpoint_id, job_id, wait_ms))


@router.post("/cancel/{job_id}")
async def cancel(endpoint_id: str, job_id: str, request: Request) -> Response:
    """Cancel a queued or running job."""
    async with admitted(request, endpoint_id, "cancel") as emulator:
        return json_response(emulator.jobs.cancel(endpoint_id, job_id))


@router.post("/retry/{job_id}")
async def retry(endpoint_id: str, job_id: str, request: Request) -> Response:
    """Queue a FAILED or TIMED_OUT job again, under the same id."""
    async with admitted(request, endpoint_id, "retry") as emulator:
        return json_response(emulator.jobs.retry(endpoint_id, job_id))


@router.post("/purge-queue")
async def purge_queue(endpoint_id: str, request: Request) -> Response:
    """Remove every queued job of the endpoint; running jobs go on."""
    async with admitted(request, endpoint_id, "purge-queue") as emulator:
        return json_response(emulator.jobs.purge(endpoint_id))


@router.get("/health")
async def health(endpoint_id: str, request: Request) -> Response:
    """Job counters and worker states of the endpoint."""
    async with admitted(request, endpoint_id, "health") as emulator:
        return json_response(emulator.jobs.health(endpoint_id))


@router.get("/requests")
async def requests(endpoint_id: str, request: Request) -> Response:
    """The endpoint's retained jobs, newest first."""
    async with admitted(request, endpoint_id, "requests") as emulator:
        return json_response([job.to_wire() for job in emulator.jobs.requests(endpoint_id)])
