"""``/v2/{endpoint_id}/openai/...``: the service's OpenAI-compatible routes over
``domain/openai_routes.py`` (docs/openai.md). Errors are in OpenAI's shape
(``{"error": {"message", "type", ...}}``), which the ``openai`` package reads."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from nbext.models import RUNSYNC_BODY_LIMIT, RUNSYNC_WAIT_MAX_MS

from ..domain import openai_routes as routes
from ..domain.errors import DomainError
from ..domain.job_service import JobService
from .http import error_reply, json_response, parse_json, read_body
from .jobs import PREFIX, admitted

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
    async with contextlib.AsyncExitStack() as stack:
        emulator = await stack.enter_async_context(admitted(request, endpoint_id, OPERATION))
        service = emulator.jobs
        route = routes.route_of(path, request.method)
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
        # The stream holds the rate-limit slot: it is released when the stream ends.
        stream = _events(service, job, stack.pop_all())
        return StreamingResponse(stream, media_type="text/event-stream")


async def _events(
    service: JobService, job: Any, slot: contextlib.AsyncExitStack
) -> AsyncIterator[bytes]:
    """The job's events; a client that hangs up cancels the job (nobody reads it)."""
    try:
        async for text in routes.events(service, job):
            yield text.encode()
    finally:
        routes.abandon(service, job)
        await slot.aclose()


def _json(reply: routes.Reply) -> Response:
    return json_response(reply.body, reply.status, reply.header_values)
