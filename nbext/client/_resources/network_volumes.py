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
from . import rest_v2, shapes
from .wire import UpdateMethod, given, ident, json_body, management_call, many, one, update_call


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
    if ctx.management_api == "v2":
        op = "network_volumes.create"
        v1 = rest_v2.checked(
            NetworkVolumeCreateInput,
            op,
            given(locals(), skip=["op"]),
            ("name", "size", "dataCenterId"),
        )
        fields = {"name": v1["name"], "size": v1["size"], "dataCenter": v1["dataCenterId"]}
        payload = rest_v2.body(op, fields, extra_body)
        subject = "a new network volume"
        return (
            yield from rest_v2.send(
                ctx, "POST", ["network-volumes"], op, subject, rest_v2.VOLUME, payload=payload
            )
        )
    body = json_body(
        NetworkVolumeCreateInput, "network_volumes.create", given(locals()), extra_body
    )
    call = management_call(
        "POST", ["networkvolumes"], "network_volumes.create", "a new network volume", body=body
    )
    return (yield from shapes.fetch(ctx, call, one(NetworkVolume)))


def list_volumes(ctx: Context) -> Flow[list[NetworkVolume]]:
    """The account's network volumes."""
    if ctx.management_api == "v2":
        op, subject = "network_volumes.list", "network volumes"
        return (
            yield from rest_v2.send(ctx, "GET", ["network-volumes"], op, subject, rest_v2.VOLUMES)
        )
    call = management_call("GET", ["networkvolumes"], "network_volumes.list", "network volumes")
    return (yield from shapes.fetch(ctx, call, many(NetworkVolume)))


def get(ctx: Context, network_volume_id: str) -> Flow[NetworkVolume]:
    """One network volume by id (NotFound if there is none)."""
    vid = ident(network_volume_id, "network volume id")
    if ctx.management_api == "v2":
        op, subject = "network_volumes.get", f"network volume {network_volume_id!r}"
        return (
            yield from rest_v2.send(
                ctx, "GET", ["network-volumes", vid], op, subject, rest_v2.VOLUME
            )
        )
    call = management_call(
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
    subject = f"network volume {network_volume_id!r}"
    if ctx.management_api == "v2":
        op = "network_volumes.update"
        v1 = rest_v2.checked(NetworkVolumeUpdateInput, op, fields, ("name", "size"))
        payload = rest_v2.body(op, v1, extra_body)
        return (
            yield from rest_v2.send(
                ctx, "PATCH", ["network-volumes", vid], op, subject, rest_v2.VOLUME, payload=payload
            )
        )
    body = json_body(NetworkVolumeUpdateInput, "network_volumes.update", fields, extra_body)
    call = update_call(method, ["networkvolumes", vid], "network_volumes.update", subject, body)
    return (yield from shapes.fetch(ctx, call, one(NetworkVolume)))


def delete(ctx: Context, network_volume_id: str) -> Flow[None]:
    """Delete a network volume and its data."""
    vid = ident(network_volume_id, "network volume id")
    if ctx.management_api == "v2":
        op, subject = "network_volumes.delete", f"network volume {network_volume_id!r}"
        return (yield from rest_v2.delete(ctx, ["network-volumes", vid], op, subject))
    call = management_call(
        "DELETE",
        ["networkvolumes", vid],
        "network_volumes.delete",
        f"network volume {network_volume_id!r}",
    )
    yield from shapes.delete(ctx, call)


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
