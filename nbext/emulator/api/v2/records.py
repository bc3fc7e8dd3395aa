"""The ``/v2`` routes every management resource has alike, made from its row of the table
(``nbext.models.v2.RESOURCES``): list, get, create, update and delete, as its row's
``operations`` name.

Each calls the resource's area of the domain (``Management.SERVED`` names it), which
hands back records as served, v2's shape:

- ``views()``: every record, for the list (wrapped under the row's ``list_key``);
- ``shown(id)``: one, or 404;
- ``added(body)``: the record made from a body the reference's schema checked (201);
- ``changeable(id)``: 404 (or 403, 409) before an update's body is read; ``changed(id,
  body)``: the record updated;
- ``delete(id)``: gone, or 404 (204).

A request's schema is the reference's for the route's operation. What a resource has
beyond these (a pod's actions, an endpoint's workers) is routed by its own module.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v2 import Rest

from ...domain.management.facade import Management
from .common import Managed, body, no_content, ok


def area(m: Management, row: Rest[Any]) -> Any:
    """The domain's area serving ``row`` (its methods: this module's docstring)."""
    return getattr(m, Management.SERVED[row.segment])


def router(row: Rest[Any]) -> APIRouter:
    """The routes of ``row``'s operations under ``/v2/{segment}``."""
    routes = APIRouter(prefix=f"/v2/{row.segment}", tags=[f"v2 {row.segment}"])
    ops = row.operations

    async def list_records(m: Managed) -> Response:
        return ok({row.list_key: area(m, row).views()})

    async def create_record(request: Request, m: Managed) -> Response:
        return ok(area(m, row).added(await body(request)), 201)

    async def get_record(record_id: str, m: Managed) -> Response:
        return ok(area(m, row).shown(record_id))

    async def update_record(record_id: str, request: Request, m: Managed) -> Response:
        area(m, row).changeable(record_id)  # 404 (or 403, 409) before the body is read
        return ok(area(m, row).changed(record_id, await body(request)))

    async def delete_record(record_id: str, m: Managed) -> Response:
        area(m, row).delete(record_id)
        return no_content()

    for method, path, route, operation in (
        ("GET", "", list_records, "list"),
        ("POST", "", create_record, "create"),
        ("GET", "/{record_id}", get_record, "get"),
        ("PATCH", "/{record_id}", update_record, "update"),
        ("DELETE", "/{record_id}", delete_record, "delete"),
    ):
        if operation in ops:
            routes.add_api_route(path, route, methods=[method], name=f"{operation} {row.segment}")
    return routes
