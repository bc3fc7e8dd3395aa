"""``/v1/endpoints``: endpoint records; a created endpoint serves ``/v2/{id}`` at once."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import EndpointCreateInput, EndpointIncludes, EndpointUpdateInput

from .common import body, management, no_content, ok, query

router = APIRouter(prefix="/v1/endpoints", tags=["endpoints"])


@router.post("")
async def create_endpoint(request: Request) -> Response:
    m = management(request)
    return ok(m.endpoints.create(await body(request, EndpointCreateInput)))


@router.get("")
async def list_endpoints(request: Request) -> Response:
    m = management(request)
    return ok(m.endpoints.listing(query(request, EndpointIncludes)))


@router.get("/{endpoint_id}")
async def get_endpoint(endpoint_id: str, request: Request) -> Response:
    m = management(request)
    return ok(m.endpoints.get(endpoint_id, query(request, EndpointIncludes)))


@router.patch("/{endpoint_id}")
@router.post("/{endpoint_id}/update")
async def update_endpoint(endpoint_id: str, request: Request) -> Response:
    m = management(request)
    m.endpoints.entry(endpoint_id)
    return ok(m.endpoints.update(endpoint_id, await body(request, EndpointUpdateInput)))


@router.delete("/{endpoint_id}")
async def delete_endpoint(endpoint_id: str, request: Request) -> Response:
    management(request).endpoints.delete(endpoint_id)
    return no_content()
