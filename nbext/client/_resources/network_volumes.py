"""``client.network_volumes``: disks in one data centre that pods and endpoints attach.

A volume's size only grows: an update with a smaller ``size`` is refused by the service
(the client checks the range, 0-4000 GB; only the service knows the current size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbext.models import (
    DataCenterId,
    NetworkVolume,
    NetworkVolumeCreateInput,
    NetworkVolumeUpdateInput,
)

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from . import rest_v2
from .rest import V1, V2
from .wire import Reader, UpdateMethod, given, ident, json_body, management_call, many, one


class NetworkVolumesV2(V2):
    """Network volumes over REST v2: at ``network-volumes``, v1's keywords spelt the v2 way."""

    def __init__(self) -> None:
        self.path = "network-volumes"
        self.one: Reader[NetworkVolume] = rest_v2.VOLUME
        self.many: Reader[list[NetworkVolume]] = rest_v2.VOLUMES

    def create_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        op = "network_volumes.create"
        allowed = ("name", "size", "dataCenterId")
        v1 = rest_v2.checked(NetworkVolumeCreateInput, op, fields, allowed)
        v2 = {"name": v1["name"], "size": v1["size"], "dataCenter": v1["dataCenterId"]}
        return rest_v2.body(op, v2, extra)

    def update_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        op = "network_volumes.update"
        v1 = rest_v2.checked(NetworkVolumeUpdateInput, op, fields, ("name", "size"))
        return rest_v2.body(op, v1, extra)


class NetworkVolumesV1(V1, NetworkVolumesV2):
    """Network volumes over REST v1: at ``networkvolumes``, v1's own bodies."""

    def __init__(self) -> None:
        self.path = "networkvolumes"
        self.one = one(NetworkVolume)
        self.many = many(NetworkVolume)

    def create_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        return json_body(NetworkVolumeCreateInput, "network_volumes.create", fields, extra)

    def update_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        return json_body(NetworkVolumeUpdateInput, "network_volumes.update", fields, extra)


def create(
    ctx: Context,
    api: NetworkVolumesV2,
    *,
    name: str,
    size: int,
    data_center_id: DataCenterId | str,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[NetworkVolume]:
    """Create a volume of ``size`` GB (0-4000) in data centre ``data_center_id``.

    Bad values raise BadRequest before anything is sent; a create that may have reached
    the service is not re-sent (it could make, and bill, two volumes).
    """
    body = api.create_body(given(locals()), extra_body)
    op = "network_volumes.create"
    call = management_call("POST", [api.path], op, "a new network volume", body=body)
    return (yield from api.fetch(ctx, call, api.one))


def list_volumes(ctx: Context, api: NetworkVolumesV2) -> Flow[list[NetworkVolume]]:
    """The account's network volumes."""
    call = management_call("GET", [api.path], "network_volumes.list", "network volumes")
    return (yield from api.fetch(ctx, call, api.many))


def get(ctx: Context, api: NetworkVolumesV2, network_volume_id: str) -> Flow[NetworkVolume]:
    """One network volume by id (NotFound if there is none)."""
    vid = ident(network_volume_id, "network volume id")
    subject = f"network volume {network_volume_id!r}"
    call = management_call("GET", [api.path, vid], "network_volumes.get", subject)
    return (yield from api.fetch(ctx, call, api.one))


def update(
    ctx: Context,
    api: NetworkVolumesV2,
    network_volume_id: str,
    *,
    name: str | None = None,
    size: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
    method: UpdateMethod = "PATCH",
) -> Flow[NetworkVolume]:
    """Rename a volume or grow it to ``size`` GB (a smaller size is BadRequest).

    ``method="POST"`` sends the synonym ``POST /networkvolumes/{id}/update``.
    """
    vid = ident(network_volume_id, "network volume id")
    body = api.update_body(given(locals(), skip=["network_volume_id", "vid"]), extra_body)
    subject = f"network volume {network_volume_id!r}"
    call = api.update_call(method, [api.path, vid], "network_volumes.update", subject, body)
    return (yield from api.fetch(ctx, call, api.one))


def delete(ctx: Context, api: NetworkVolumesV2, network_volume_id: str) -> Flow[None]:
    """Delete a network volume and its data."""
    vid = ident(network_volume_id, "network volume id")
    subject = f"network volume {network_volume_id!r}"
    yield from api.delete(
        ctx, management_call("DELETE", [api.path, vid], "network_volumes.delete", subject)
    )


class NetworkVolumes(Resource):
    """``client.network_volumes``: create, list, get, update, delete."""

    create = blocking(create)
    list = blocking(list_volumes)
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)


class AsyncNetworkVolumes(Resource):
    """``client.network_volumes`` of an ``AsyncClient``: ``NetworkVolumes``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_volumes)
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
