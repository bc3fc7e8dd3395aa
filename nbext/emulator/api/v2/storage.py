"""``/v2/network-volumes`` and ``/v2/registries``: the volumes and registry auths of v1.

v1 calls a volume's data centre ``dataCenterId`` and v2 ``dataCenter``; v2 adds a storage
``type`` (kept as a facet: the emulator's volumes are alike, but bill by tier). A
registry is v1's container registry auth under v2's name; ECR delegations are v2's own.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import (
    ContainerRegistryAuthCreateInput,
    NetworkVolume,
    NetworkVolumeCreateInput,
    NetworkVolumeUpdateInput,
)

from ...domain.management import Management, offers
from ...domain.management.container import V1_NAMES
from ...domain.management.records import atomic
from ...domain.management.refusals import Unprocessable, validated
from .common import body, management, no_content, ok

volumes = APIRouter(prefix="/v2/network-volumes", tags=["v2 network volumes"])
registries = APIRouter(prefix="/v2/registries", tags=["v2 registries"])


def volume_view(m: Management, v: NetworkVolume) -> dict[str, Any]:
    kind = m.v2.facets.get("volume", v.id or "").get("type", "STANDARD")
    size = max(10, min(4096, v.size or 10))  # v1 allows sizes v2 cannot state
    return {
        "id": v.id,
        "name": v.name or "",
        "size": size,
        "dataCenter": str(v.data_center_id),
        "type": kind,
    }


@volumes.get("")
async def list_volumes(request: Request) -> Response:
    m, _ = management(request, "listNetworkVolumes")
    return ok({"networkVolumes": [volume_view(m, v) for v in m.volumes.listing()]})


@volumes.post("")
async def create_volume(request: Request) -> Response:
    m, _ = management(request, "createNetworkVolume")
    data = await body(request, "CreateNetworkVolumeRequest")
    kind = data.get("type", "STANDARD")
    v1 = {"name": data["name"], "size": data["size"], "dataCenterId": data["dataCenter"]}
    parsed = validated(NetworkVolumeCreateInput, v1, V1_NAMES)
    if kind == "HIGH_PERFORMANCE" and not offers.place(data["dataCenter"]).high_performance:
        line = (
            f"type: data centre {data['dataCenter']} has no HIGH_PERFORMANCE storage; "
            "GET /v2/catalog/datacenters?networkVolumeTypes=HIGH_PERFORMANCE lists those that do"
        )
        raise Unprocessable(line, [line])
    with atomic():  # the volume and its type, or neither
        made = m.volumes.create(parsed)
        m.v2.facets.set("volume", made.id or "", type=kind)
    return ok(volume_view(m, made), 201)


@volumes.get("/{volume_id}")
async def get_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "getNetworkVolume")
    return ok(volume_view(m, m.volumes.get(volume_id)))


@volumes.patch("/{volume_id}")
async def update_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "updateNetworkVolume")
    m.volumes.get(volume_id)
    data = await body(request, "UpdateNetworkVolumeRequest")
    parsed = validated(NetworkVolumeUpdateInput, data, V1_NAMES)
    return ok(volume_view(m, m.volumes.update(volume_id, parsed)))


@volumes.delete("/{volume_id}")
async def delete_volume(volume_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteNetworkVolume")
    with atomic():
        m.volumes.delete(volume_id)
        m.v2.facets.drop("volume", volume_id)
    return no_content()


# ---- registries ------------------------------------------------------------------------------


@registries.get("")
async def list_registries(request: Request) -> Response:
    m, _ = management(request, "listRegistries")
    return ok({"registries": [{"id": a.id, "name": a.name} for a in m.registry_auths.listing()]})


@registries.post("")
async def create_registry(request: Request) -> Response:
    m, _ = management(request, "createRegistry")
    data = await body(request, "CreateRegistryRequest")
    made = m.registry_auths.create(validated(ContainerRegistryAuthCreateInput, data, V1_NAMES))
    return ok({"id": made.id, "name": made.name}, 201)


@registries.get("/delegations")
async def list_delegations(request: Request) -> Response:
    m, _ = management(request, "listDelegations")
    return ok({"delegations": m.v2.delegations.listing()})


@registries.post("/delegations")
async def create_delegation(request: Request) -> Response:
    m, _ = management(request, "createDelegation")
    data = await body(request, "CreateDelegationRequest")
    return ok(m.v2.delegations.create(data["resource"], data.get("name")), 201)


@registries.delete("/delegations/{delegation_id}")
async def revoke_delegation(delegation_id: str, request: Request) -> Response:
    m, _ = management(request, "revokeDelegation")
    m.v2.delegations.revoke(delegation_id)
    return no_content()


@registries.get("/{registry_id}")
async def get_registry(registry_id: str, request: Request) -> Response:
    m, _ = management(request, "getRegistry")
    auth = m.registry_auths.get(registry_id)
    return ok({"id": auth.id, "name": auth.name})


@registries.delete("/{registry_id}")
async def delete_registry(registry_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteRegistry")
    m.registry_auths.delete(registry_id)
    return no_content()
