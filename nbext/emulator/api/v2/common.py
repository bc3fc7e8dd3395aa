"""What every v2 management route shares: auth, checked bodies and queries, problem bodies.

Errors under the management paths of ``/v2`` are RFC 9457 problem documents
(``application/problem+json``: ``title``, ``status``, ``detail``, and ``errors`` listing
each failure by field), the shape the reference declares. The job routes under ``/v2``
keep the job interface's ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from ...domain.errors import DomainError, InvalidInput, RateLimited
from ...domain.management.facade import Management
from ...domain.management.refusals import Forbidden, Unprocessable
from ..http import STATUS_OF as HTTP_STATUS_OF
from ..http import authenticate, encode, parse_json, read_body
from .contract import check_body, check_query

BODY_LIMIT = 1024 * 1024
PROBLEM = "application/problem+json"


TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    507: "Insufficient Storage",
}
STATUS_OF: list[tuple[type[DomainError], int]] = [
    (Unprocessable, 422),  # before InvalidInput, its base: the first match wins
    (Forbidden, 403),
]
"""v2's own errors; every other one has the status the rest of the emulator gives it."""


def problem(
    status: int,
    detail: str,
    errors: list[str] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {"title": TITLES.get(status, "Error"), "status": status}
    body["detail"] = detail
    if errors:
        body["errors"] = errors
    return Response(encode(body), status_code=status, media_type=PROBLEM, headers=headers)


def problem_of(exc: DomainError) -> Response:
    known = [*STATUS_OF, *HTTP_STATUS_OF.items()]
    status = next((code for cls, code in known if isinstance(exc, cls)), 400)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
    errors = exc.errors if isinstance(exc, Unprocessable) else None
    return problem(status, exc.message, errors, headers)


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
