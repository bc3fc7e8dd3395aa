"""What every v2 management route shares: auth, bodies and queries checked against the
reference. Its errors are problem documents (``http.problem``); the job routes under
``/v2`` keep the job interface's ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from ...domain.errors import InvalidInput
from ..http import Managed as Managed
from ..http import json_response, parse_json, read_body
from ..http import no_content as no_content
from .contract import check_body, check_query, operation_at, request_schema

ok = json_response
BODY_LIMIT = 1024 * 1024


async def checked_query(request: Request, _: Managed) -> dict[str, Any]:
    """The query of the reference's operation at the route's method and path, typed and
    checked once the caller is authenticated; ``Checked`` for the routes that read it."""
    operation_id = operation_at(request.method, request.scope["route"].path_format)
    return check_query(operation_id, request.query_params.multi_items())


Checked = Annotated[dict[str, Any], Depends(checked_query)]


async def body(request: Request) -> dict[str, Any]:
    """The JSON body, checked against the schema the reference gives the route's operation."""
    schema = request_schema(operation_at(request.method, request.scope["route"].path_format))
    raw = await read_body(request, BODY_LIMIT)
    if not raw.strip():
        raise InvalidInput(f"request body is empty; send a JSON object ({schema})")
    data = parse_json(raw)
    check_body(data, schema)
    assert isinstance(data, dict)
    return data
