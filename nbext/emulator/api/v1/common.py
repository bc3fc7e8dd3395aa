"""What every ``/v1`` route shares: auth, reading a body or a query into its wire
model, a refusal a 400 naming each field (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

import typing
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel

from nbext.models import json_kind

from ...domain.errors import InvalidInput
from ...domain.management.refusals import validated
from ..http import Managed as Managed
from ..http import json_response, parse_json, read_body
from ..http import no_content as no_content

M = TypeVar("M", bound=BaseModel)
ok = json_response
BODY_LIMIT = 1024 * 1024
"""Management bodies are small; a template's readme is the largest field."""


async def body(request: Request, model: type[M]) -> M:
    data = parse_json(await read_body(request, BODY_LIMIT))
    if not isinstance(data, dict):
        raise InvalidInput(f"request body must be a JSON object, got {json_kind(data)}")
    return validated(model, data, {})


def query(request: Request, model: type[M]) -> M:
    """Query parameters, validated by ``model``: an array as repeated keys or
    comma-separated; for the others the last value wins."""
    lists = {(f.alias or name) for name, f in model.model_fields.items() if _is_list(f.annotation)}
    data: dict[str, Any] = {}
    for key, value in request.query_params.multi_items():
        if key in lists:
            data.setdefault(key, []).extend(v for v in value.split(",") if v)
        else:
            data[key] = value
    return validated(model, data, {})


def _is_list(annotation: Any) -> bool:
    if typing.get_origin(annotation) is list:
        return True
    return any(_is_list(arg) for arg in typing.get_args(annotation))
