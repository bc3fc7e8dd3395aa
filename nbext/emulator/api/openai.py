"""``/v2/{endpoint_id}/openai/...``: the service's OpenAI-compatible routes.

A thin adapter over ``domain/openai_routes.py``: authenticate, read the body, hold a
rate-limit slot, and write the domain's reply, or its Server-Sent Events as they come.
Errors here are in OpenAI's shape (``{"error": {"message", "type", ...}}``), which is
what the ``openai`` package reads, rather than the job interface's ``{"error": "..."}``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from nbext.models import RUNSYNC_BODY_LIMIT, RUNSYNC_WAIT_MAX_MS

from ..domain import openai_routes as routes
from ..domain.errors import DomainError
from ..emulator import Emulator
from .http import authenticate, error_reply, json_response, parse_json, read_body
from .jobs import PREFIX

router = APIRouter()
OPERATION = "openai"
"""The rate limiter's name for these routes."""


@router.api_route(
    f"{PREFIX}/openai/{{path:path}}",
    methods=["GET", "POST"],
    summary="OpenAI-compatible routes: chat/completions, completions, models",
)
async def openai_route(endpoint_id: str, path: str, request: Request) -> Response:
    """One OpenAI request as a job on ``endpoint_id``; see docs/openai.md."""
    try:
        return await _serve(endpoint_id, path, request)
    except routes.RouteRefused as exc:
        return _json(exc.reply)
    except DomainError as exc:
        status, body, headers = error_reply(exc, "error")
        kind = "RateLimitError" if status == 429 else "APIError"
        return json_response(routes.error(status, body["error"], kind), status, headers)


async def _serve(endpoint_id: str, path: str, request: Request) -> Response:
    emulator = await authenticate(request)
    service = emulator.jobs
    service.endpoint(endpoint_id)
    route = routes.route_of(path, request.method)
    limiter = emulator.rate_limiter
    held = limiter.enabled and limiter.acquire(
        endpoint_id, OPERATION, service.running_workers(endpoint_id)
    )
    try:
        body: Any = None
        if request.method == "POST":
            body = parse_json(await read_body(request, RUNSYNC_BODY_LIMIT))
        job = routes.submit(service, endpoint_id, route, body)
        wait_s = RUNSYNC_WAIT_MAX_MS / 1000
        if not routes.wants_stream(body):
            return _json(await routes.reply(service, job, wait_s))
        refused = await routes.opening(service, job, wait_s)
        if refused is not None:
            return _json(refused)
        stream = _events(emulator, job, endpoint_id, held)
        held = False  # the stream releases the slot when it ends
        return StreamingResponse(stream, media_type="text/event-stream")
    finally:
        if held:
            limiter.release(endpoint_id, OPERATION)


async def _events(
    emulator: Emulator, job: Any, endpoint_id: str, held: bool
) -> AsyncIterator[bytes]:
    """The job's events; a client that hangs up cancels the job (nobody reads it)."""
    service = emulator.jobs
    try:
        async for text in routes.events(service, job):
            yield text.encode()
    finally:
        routes.abandon(service, job)
        if held:
            emulator.rate_limiter.release(endpoint_id, OPERATION)


def _json(reply: routes.Reply) -> Response:
    return json_response(reply.body, reply.status, reply.header_values)
