"""``/v2/{endpoint_id}/batch...``: the service's batch jobs, translated to ``Batches``
calls (docs/behaviour.md#batches); each call takes a slot of the endpoint's ``batch`` rate limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.batches import BATCH_CALL_LIMIT, BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX

from ..domain.batches import Batches
from ..domain.errors import InvalidInput, TooLarge
from .http import json_response, parse_json, read_body
from .jobs import PREFIX
from .jobs import admitted as admitted_job

router = APIRouter(prefix=PREFIX + "/batch", tags=["batches"])


@asynccontextmanager
async def admitted(request: Request, endpoint_id: str) -> AsyncIterator[Batches]:
    async with admitted_job(request, endpoint_id, "batch") as emulator:
        yield emulator.batches


async def _body(request: Request) -> Any:
    try:
        return parse_json(await read_body(request, BATCH_CALL_LIMIT))
    except TooLarge:
        raise TooLarge(
            "request body is over the 10 MiB one batch call may carry; nothing of it was "
            "added. Send the requests in several calls (POST /batch/{id}/requests)"
        ) from None


def _paging(request: Request) -> tuple[int, int]:
    values = []
    for name, default, high in (("offset", 0, None), ("limit", BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX)):
        raw = request.query_params.get(name)
        if raw is None:
            values.append(default)
            continue
        ok = raw.isascii() and raw.isdigit() and len(raw) <= 9
        if not ok or (high is not None and not 1 <= int(raw) <= high):
            limits = f"from 1 to {high}" if high else "of 0 or more"
            raise InvalidInput(f"{name} must be a whole number {limits}, got {raw!r}")
        values.append(int(raw))
    return values[0], values[1]


@router.post("")
async def create(endpoint_id: str, request: Request) -> Response:
    """Create a DRAFT batch; body: a JSON array of ``{"input": {...}}`` (may be empty)."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.create(endpoint_id, await _body(request)).to_wire())


@router.get("")
async def listing(endpoint_id: str, request: Request) -> Response:
    """The endpoint's batches, newest first: ``{batches, total, offset, limit, hasMore}``."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.listing(endpoint_id, *_paging(request)))


@router.get("/{batch_id}")
async def get(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """A batch's status and request counts."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.get(endpoint_id, batch_id).to_wire())


@router.put("/{batch_id}")
async def update(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """New inputs for a draft's requests: ``{"requests": [{"id", "input"}]}``."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.update(endpoint_id, batch_id, await _body(request)).to_wire())


@router.post("/{batch_id}/requests")
async def add(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """Add requests to a draft: ``{"requests": [{"input": {...}}, ...]}``."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.add(endpoint_id, batch_id, await _body(request)).to_wire())


@router.get("/{batch_id}/requests")
async def results(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """A page of the batch's requests in the order they were added, with their results."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.results(endpoint_id, batch_id, *_paging(request)))


@router.delete("/{batch_id}/requests/{request_id}")
async def remove_request(
    endpoint_id: str, batch_id: str, request_id: str, request: Request
) -> Response:
    """Take a request out of a draft."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.remove_request(endpoint_id, batch_id, request_id).to_wire())


@router.post("/{batch_id}/finalize")
async def finalize(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """Start a draft: it becomes FINALIZED and its requests run."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.finalize(endpoint_id, batch_id).to_wire())


@router.post("/{batch_id}/cancel")
async def cancel(endpoint_id: str, batch_id: str, request: Request) -> Response:
    """Cancel: requests not started are dropped, requests in progress finish."""
    async with admitted(request, endpoint_id) as batches:
        return json_response(batches.cancel(endpoint_id, batch_id).to_wire())
