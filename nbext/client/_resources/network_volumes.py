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
from . import shapes
from .twins import AsyncResource, SyncResource, awaiting, blocking
from .wire import UpdateMethod, given, ident, json_body, many, one, update_call, v1_call


def create(
    ctx: Context,
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
    body = json_body(
        NetworkVolumeCreateInput, "network_volumes.create", given(locals()), extra_body
    )
    call = v1_call(
        "POST", ["networkvolumes"], "network_volumes.create", "a new network volume", body=body
    )
    return (yield from shapes.fetch(ctx, call, one(NetworkVolume)))


def list_volumes(ctx: Context) -> Flow[list[NetworkVolume]]:
    """The account's network volumes."""
    call = v1_call("GET", ["networkvolumes"], "network_volumes.list", "network volumes")
    return (yield from shapes.fetch(ctx, call, many(NetworkVolume)))


def get(ctx: Context, network_volume_id: str) -> Flow[NetworkVolume]:
    """One network volume by id (NotFound if there is none)."""
    vid = ident(network_volume_id, "network volume id")
    call = v1_call(
        "GET",
        ["networkvolumes", vid],
        "network_volumes.get",
        f"network volume {network_volume_id!r}",
    )
    return (yield from shapes.fetch(ctx, call, one(NetworkVolume)))


def update(
    ctx: Context,
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
    fields = given(locals(), skip=["network_volume_id", "vid"])
    body = json_body(NetworkVolumeUpdateInput, "network_volumes.update", fields, extra_body)
    subject = f"network volume {network_volume_id!r}"
    call = update_call(method, ["networkvolumes", vid], "network_volumes.update", subject, body)
    return (yield from shapes.fetch(ctx, call, one(NetworkVolume)))


def delete(ctx: Context, network_volume_id: str) -> Flow[None]:
    """Delete a network volume and its data."""
    vid = ident(network_volume_id, "network volume id")
    call = v1_call(
        "DELETE",
        ["networkvolumes", vid],
        "network_volumes.delete",
        f"network volume {network_volume_id!r}",
    )
    yield from shapes.delete(ctx, call)


class NetworkVolumes(SyncResource):
    """``client.network_volumes``: create, list, get, update, delete."""

    create = blocking(create)
    list = blocking(list_volumes)
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)


class AsyncNetworkVolumes(AsyncResource):
    """``client.network_volumes`` of an ``AsyncClient``: ``NetworkVolumes``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_volumes)
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
