"""``/v2/network-volumes`` and ``/v2/registries``: parse, call the domain's
``NetworkVolumes`` and ``RegistryAuths`` (``m.volumes``, ``m.registry_auths``), serialise
(a registry as v1's auth: its id and name). ECR delegations are v2's own
(``m.delegations``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...domain.management.records import wire
from .common import Managed, body, no_content, ok

volumes = APIRouter(prefix="/v2/network-volumes", tags=["v2 network volumes"])
registries = APIRouter(prefix="/v2/registries", tags=["v2 registries"])


@volumes.get("")
async def list_volumes(m: Managed) -> Response:
    return ok({"networkVolumes": [v.view() for v in m.volumes.book]})


@volumes.post("")
async def create_volume(request: Request, m: Managed) -> Response:
    return ok(m.volumes.create(await body(request, "CreateNetworkVolumeRequest")).view(), 201)


@volumes.get("/{volume_id}")
async def get_volume(volume_id: str, m: Managed) -> Response:
    return ok(m.volumes.get(volume_id).view())


@volumes.patch("/{volume_id}")
async def update_volume(volume_id: str, request: Request, m: Managed) -> Response:
    m.volumes.get(volume_id)  # 404 before the body is read
    data = await body(request, "UpdateNetworkVolumeRequest")
    return ok(m.volumes.update(volume_id, data).view())


@volumes.delete("/{volume_id}")
async def delete_volume(volume_id: str, m: Managed) -> Response:
    m.volumes.delete(volume_id)
    return no_content()


# ---- registries ------------------------------------------------------------------------------


@registries.get("")
async def list_registries(m: Managed) -> Response:
    return ok({"registries": [wire(a) for a in m.registry_auths.listing()]})


@registries.post("")
async def create_registry(request: Request, m: Managed) -> Response:
    return ok(wire(m.registry_auths.create(await body(request, "CreateRegistryRequest"))), 201)


@registries.get("/delegations")
async def list_delegations(m: Managed) -> Response:
    return ok({"delegations": list(m.delegations.book)})


@registries.post("/delegations")
async def create_delegation(request: Request, m: Managed) -> Response:
    data = await body(request, "CreateDelegationRequest")
    return ok(m.delegations.create(data["resource"], data.get("name")), 201)


@registries.delete("/delegations/{delegation_id}")
async def revoke_delegation(delegation_id: str, m: Managed) -> Response:
    m.delegations.revoke(delegation_id)
    return no_content()


@registries.get("/{registry_id}")
async def get_registry(registry_id: str, m: Managed) -> Response:
    return ok(wire(m.registry_auths.get(registry_id)))


@registries.delete("/{registry_id}")
async def delete_registry(registry_id: str, m: Managed) -> Response:
    m.registry_auths.delete(registry_id)
    return no_content()
