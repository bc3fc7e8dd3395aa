"""``/v2/network-volumes`` and ``/v2/registries``: parse, call the domain's
``NetworkVolumes`` and ``RegistryAuths`` (``m.volumes``, ``m.registry_auths``), serialise
(a registry as v1's auth: its id and name). ECR delegations are v2's own
(``m.delegations``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...domain.management.records import wire
from .common import body, management, no_content, ok

volumes = APIRouter(prefix="/v2/network-volumes", tags=["v2 network volumes"])
registries = APIRouter(prefix="/v2/registries", tags=["v2 registries"])


@volumes.get("")
async def list_volumes(request: Request) -> Response:
    m, _ = management(request, "listNetworkVolumes")
    return ok({"networkVolumes": [v.view() for v in m.volumes.listing()]})


@volumes.post("")
async def create_volume(request: Request) -> Response:
    m, _ = management(request, "createNetworkVolume")
    return ok(m.volumes.create(await body(request, "CreateNetworkVolumeRequest")).view(), 201)


@volumes.get("/{volume_id}")
async def get_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "getNetworkVolume")
    return ok(m.volumes.get(volume_id).view())


@volumes.patch("/{volume_id}")
async def update_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "updateNetworkVolume")
    m.volumes.get(volume_id)  # 404 before the body is read
    data = await body(request, "UpdateNetworkVolumeRequest")
    return ok(m.volumes.update(volume_id, data).view())


@volumes.delete("/{volume_id}")
async def delete_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteNetworkVolume")
    m.volumes.delete(volume_id)
    return no_content()


# ---- registries ------------------------------------------------------------------------------


@registries.get("")
async def list_registries(request: Request) -> Response:
    m, _ = management(request, "listRegistries")
    return ok({"registries": [wire(a) for a in m.registry_auths.listing()]})


@registries.post("")
async def create_registry(request: Request) -> Response:
    m, _ = management(request, "createRegistry")
    return ok(wire(m.registry_auths.create(await body(request, "CreateRegistryRequest"))), 201)


@registries.get("/delegations")
async def list_delegations(request: Request) -> Response:
    m, _ = management(request, "listDelegations")
    return ok({"delegations": m.delegations.listing()})


@registries.post("/delegations")
async def create_delegation(request: Request) -> Response:
    m, _ = management(request, "createDelegation")
    data = await body(request, "CreateDelegationRequest")
    return ok(m.delegations.create(data["resource"], data.get("name")), 201)


@registries.delete("/delegations/{delegation_id}")
async def revoke_delegation(delegation_id: str, request: Request) -> Response:
    m, _ = management(request, "revokeDelegation")
    m.delegations.revoke(delegation_id)
    return no_content()


@registries.get("/{registry_id}")
async def get_registry(registry_id: str, request: Request) -> Response:
    m, _ = management(request, "getRegistry")
    return ok(wire(m.registry_auths.get(registry_id)))


@registries.delete("/{registry_id}")
async def delete_registry(registry_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteRegistry")
    m.registry_auths.delete(registry_id)
    return no_content()
