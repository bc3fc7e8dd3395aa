"""``/v2/{endpoint_id}/...``: the job interface, translated to ``JobService`` calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError

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

from ..domain.errors import InvalidInput, NotServed
from ..emulator import Emulator
from .http import authenticate, json_response, parse_json, query_int, read_body, validation_message

router = APIRouter(prefix="/v2/{endpoint_id}")

STREAM_WAIT_MAX_MS = 300_000


@asynccontextmanager
async def admitted(request: Request, endpoint_id: str, operation: str) -> AsyncIterator[Emulator]:
    """Authenticate, check the endpoint exists, and hold a rate/concurrency slot."""
    emulator = authenticate(request)
    emulator.bind()
    service = emulator.jobs
    service.endpoint(endpoint_id)
    limiter = emulator.rate_limiter
    held = limiter.acquire(endpoint_id, operation, service.running_workers(endpoint_id))
    try:
        yield emulator
    finally:
        if held:
            limiter.release(endpoint_id, operation)


async def _submission(request: Request, limit: int) -> JobSubmission:
    data = parse_json(await read_body(request, limit))
    if not isinstance(data, dict):
        raise InvalidInput('request body must be a JSON object such as {"input": {...}}')
    try:
        return JobSubmission.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(validation_message(exc)) from None


@router.post("/run")
async def run(endpoint_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "run") as emulator:
        submission = await _submission(request, RUN_BODY_LIMIT)
        job = emulator.jobs.submit(endpoint_id, submission, sync=False)
        return json_response({"id": job.id, "status": "IN_QUEUE"})


@router.post("/runsync")
async def runsync(endpoint_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "runsync") as emulator:
        wait = query_int(
            request, "wait", RUNSYNC_WAIT_MIN_MS, RUNSYNC_WAIT_MAX_MS, RUNSYNC_WAIT_DEFAULT_MS
        )
        submission = await _submission(request, RUNSYNC_BODY_LIMIT)
        assert wait is not None
        return json_response(await emulator.jobs.run_sync(endpoint_id, submission, wait))


@router.get("/status/{job_id}")
async def status(endpoint_id: str, job_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "status") as emulator:
        ttl = query_int(request, "ttl", TTL_MIN_MS, TTL_MAX_MS, None)
        return json_response(emulator.jobs.status(endpoint_id, job_id, ttl))


@router.get("/stream/{job_id}")
async def stream(endpoint_id: str, job_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "stream") as emulator:
        wait = query_int(request, "wait", 0, STREAM_WAIT_MAX_MS, STREAM_WAIT_DEFAULT_MS)
        assert wait is not None
        return json_response(await emulator.jobs.stream(endpoint_id, job_id, wait))


@router.post("/cancel/{job_id}")
async def cancel(endpoint_id: str, job_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "cancel") as emulator:
        return json_response(emulator.jobs.cancel(endpoint_id, job_id))


@router.post("/retry/{job_id}")
async def retry(endpoint_id: str, job_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "retry") as emulator:
        return json_response(emulator.jobs.retry(endpoint_id, job_id))


@router.post("/purge-queue")
async def purge_queue(endpoint_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "purge-queue") as emulator:
        return json_response(emulator.jobs.purge(endpoint_id))


@router.get("/health")
async def health(endpoint_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "health") as emulator:
        return json_response(emulator.jobs.health(endpoint_id))


@router.get("/requests")
async def requests(endpoint_id: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "requests") as emulator:
        jobs = emulator.jobs.requests(endpoint_id)
        return json_response([job.to_wire() for job in jobs])


@router.api_route("/openai/{path:path}", methods=["GET", "POST"])
async def openai(endpoint_id: str, path: str, request: Request) -> Response:
    async with admitted(request, endpoint_id, "openai"):
        raise NotServed(
            f"/openai/{path} is an OpenAI-compatible route of the real service; the emulator "
            "does not serve it. Use /run, /runsync and /stream instead."
        )
