"""``/v1/containerregistryauth``: create, list, get, delete; the password never comes back."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import ContainerRegistryAuthCreateInput

from ...domain.management.records import wire
from .common import body, management, no_content, ok

router = APIRouter(prefix="/v1/containerregistryauth", tags=["container registry auths"])


@router.post("")
async def create_registry_auth(request: Request) -> Response:
    m = management(request)
    auth = m.registry_auths.create(await body(request, ContainerRegistryAuthCreateInput))
    return ok(wire(auth))


@router.get("")
async def list_registry_auths(request: Request) -> Response:
    return ok([wire(a) for a in management(request).registry_auths.listing()])


@router.get("/{auth_id}")
async def get_registry_auth(auth_id: str, request: Request) -> Response:
    return ok(wire(management(request).registry_auths.get(auth_id)))


@router.delete("/{auth_id}")
async def delete_registry_auth(auth_id: str, request: Request) -> Response:
    management(request).registry_auths.delete(auth_id)
    return no_content()
