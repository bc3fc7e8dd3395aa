"""``client.network_volumes``: disks in one data centre that pods and endpoints attach.

A volume's size only grows: an update with a smaller ``size`` is refused by the service,
as a size outside 10-4096 GB is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from nbext.models.v2 import NetworkVolume

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .rest import V2
from .wire import NOT_GIVEN, NotGiven, body, given, ident, one, wrapped

PATH = "network-volumes"
VolumeType = Literal["STANDARD", "HIGH_PERFORMANCE"]


def create(
    ctx: Context,
    api: V2,
    *,
    name: str,
    size: int,
    data_center: str,
    type: VolumeType | str | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[NetworkVolume]:
    """Create a volume of ``size`` GB in ``data_center`` (``"EU-RO-1"``...); ``type`` is
    the data centre's default tier unless given. A create that may have reached the
    service is not re-sent (it could make, and bill, two volumes)."""
    data = body("network_volumes.create", given(locals()), extra_body)
    subject = "a new network volume"
    call = api.call("POST", [PATH], "network_volumes.create", subject, body=data)
    return (yield from api.fetch(ctx, call, one(NetworkVolume)))


def list_volumes(ctx: Context, api: V2) -> Flow[list[NetworkVolume]]:
    """The account's network volumes."""
    call = api.call("GET", [PATH], "network_volumes.list", "network volumes")
    return (yield from api.fetch(ctx, call, wrapped(NetworkVolume, "networkVolumes")))


def get(ctx: Context, api: V2, network_volume_id: str) -> Flow[NetworkVolume]:
    """One network volume by id (NotFound if there is none)."""
    vid, subject = ident(network_volume_id, "network volume")
    call = api.call("GET", [PATH, vid], "network_volumes.get", subject)
    return (yield from api.fetch(ctx, call, one(NetworkVolume)))


def update(
    ctx: Context,
    api: V2,
    network_volume_id: str,
    *,
    name: str | NotGiven = NOT_GIVEN,
    size: int | NotGiven = NOT_GIVEN,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[NetworkVolume]:
    """Rename a volume or grow it to ``size`` GB (a smaller size is BadRequest)."""
    vid, subject = ident(network_volume_id, "network volume")
    fields = given(locals(), skip=["network_volume_id", "vid", "subject"], update=True)
    data = body("network_volumes.update", fields, extra_body)
    call = api.call("PATCH", [PATH, vid], "network_volumes.update", subject, body=data)
    return (yield from api.fetch(ctx, call, one(NetworkVolume)))


def delete(ctx: Context, api: V2, network_volume_id: str) -> Flow[None]:
    """Delete a network volume and its data."""
    vid, subject = ident(network_volume_id, "network volume")
    yield from api.delete(ctx, api.call("DELETE", [PATH, vid], "network_volumes.delete", subject))


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
