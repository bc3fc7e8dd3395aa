"""``/v1/containerregistryauth``: create, list, get, delete; the password never comes back."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import ContainerRegistryAuthCreateInput

from ...domain.management.records import wire
from .common import Managed, body, no_content, ok

router = APIRouter(prefix="/v1/containerregistryauth", tags=["container registry auths"])


@router.post("")
async def create_registry_auth(request: Request, m: Managed) -> Response:
    auth = m.registry_auths.create(await body(request, ContainerRegistryAuthCreateInput))
    return ok(wire(auth))


@router.get("")
async def list_registry_auths(m: Managed) -> Response:
    return ok([wire(a) for a in m.registry_auths.listing()])


@router.get("/{auth_id}")
async def get_registry_auth(auth_id: str, m: Managed) -> Response:
    return ok(wire(m.registry_auths.get(auth_id)))


@router.delete("/{auth_id}")
async def delete_registry_auth(auth_id: str, m: Managed) -> Response:
    m.registry_auths.delete(auth_id)
    return no_content()
