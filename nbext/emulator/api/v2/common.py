"""What every v2 management route shares: auth, bodies and queries checked against the
reference. Its errors are problem documents (``http.problem``); the job routes under
``/v2`` keep the job interface's ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from ...domain.errors import InvalidInput
from ...domain.management.facade import Management
from ..http import authenticate, encode, parse_json, read_body
from .contract import check_body, check_query

BODY_LIMIT = 1024 * 1024


def management(request: Request, operation_id: str) -> tuple[Management, dict[str, Any]]:
    """Authenticate; the emulator's management domain and the operation's checked query."""
    emulator = authenticate(request)
    query = check_query(operation_id, request.query_params.multi_items())
    emulator.bind()
    return emulator.management, query


async def body(request: Request, schema: str) -> dict[str, Any]:
    """The JSON body, checked against the reference's ``schema``."""
    raw = await read_body(request, BODY_LIMIT)
    if not raw.strip():
        raise InvalidInput(f"request body is empty; send a JSON object ({schema})")
    data = parse_json(raw)
    check_body(data, schema)
    assert isinstance(data, dict)
    return data


def ok(value: Any, status: int = 200) -> Response:
    return Response(encode(value), status_code=status, media_type="application/json")


def no_content() -> Response:
    return Response(status_code=204)
