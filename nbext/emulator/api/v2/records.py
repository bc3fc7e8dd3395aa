"""The ``/v2`` routes alike for every management resource, made from its row of
``nbext.models.v2.RESOURCES`` (those of its ``operations``), calling the domain's area
that declares the row its ``ROW`` (``Management.served``, a ``records.Served``). What a
resource has beyond these (a pod's actions) its own module routes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v2 import Rest

from .common import Managed, body, no_content, ok


def router(row: Rest[Any]) -> APIRouter:
    """The routes of ``row``'s operations under ``/v2/{segment}``."""
    routes = APIRouter(prefix=f"/v2/{row.segment}", tags=[f"v2 {row.segment}"])

    async def list_records(m: Managed) -> Response:
        area = m.served[row.segment]
        return ok({row.list_key: [area.served(r) for r in area.listed()]})

    async def create_record(request: Request, m: Managed) -> Response:
        area = m.served[row.segment]
        return ok(area.served(area.create(await body(request))), 201)

    async def get_record(record_id: str, m: Managed) -> Response:
        area = m.served[row.segment]
        return ok(area.served(area.get(record_id)))

    async def update_record(record_id: str, request: Request, m: Managed) -> Response:
        area = m.served[row.segment]
        area.changeable(record_id)  # 404 (or 403, 409) before the body is read
        return ok(area.served(area.update(record_id, await body(request))))

    async def delete_record(record_id: str, m: Managed) -> Response:
        m.served[row.segment].delete(record_id)
        return no_content()

    for method, path, route, operation in (
        ("GET", "", list_records, "list"),
        ("POST", "", create_record, "create"),
        ("GET", "/{record_id}", get_record, "get"),
        ("PATCH", "/{record_id}", update_record, "update"),
        ("DELETE", "/{record_id}", delete_record, "delete"),
    ):
        if operation in row.operations:
            routes.add_api_route(path, route, methods=[method], name=f"{operation} {row.segment}")
    return routes
