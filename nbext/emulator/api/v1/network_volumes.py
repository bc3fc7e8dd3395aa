"""``/v1/networkvolumes``: create, list, get, update (two ways, grow only), delete; v1
spells a volume's data centre ``dataCenterId`` and has no storage type."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import NetworkVolumeCreateInput, NetworkVolumeUpdateInput

from ...domain.management.records import wire
from .common import Managed, body, no_content, ok
from .views import volume_view

router = APIRouter(prefix="/v1/networkvolumes", tags=["network volumes"])


@router.post("")
async def create_network_volume(request: Request, m: Managed) -> Response:
    return ok(wire(volume_view(m.volumes.create(await body(request, NetworkVolumeCreateInput)))))


@router.get("")
async def list_network_volumes(m: Managed) -> Response:
    return ok([wire(volume_view(v)) for v in m.volumes.book])


@router.get("/{volume_id}")
async def get_network_volume(volume_id: str, m: Managed) -> Response:
    return ok(wire(volume_view(m.volumes.get(volume_id))))


@router.patch("/{volume_id}")
@router.post("/{volume_id}/update")
async def update_network_volume(volume_id: str, request: Request, m: Managed) -> Response:
    m.volumes.get(volume_id)
    given = await body(request, NetworkVolumeUpdateInput)
    return ok(wire(volume_view(m.volumes.update(volume_id, given))))


@router.delete("/{volume_id}")
async def delete_network_volume(volume_id: str, m: Managed) -> Response:
    m.volumes.delete(volume_id)
    return no_content()
