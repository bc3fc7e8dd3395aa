"""``client.network_volumes``: disks in one data centre that pods and endpoints attach."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from nbext.models.v2 import NetworkVolume
from nbext.models.v2.resources import NETWORK_VOLUMES as ROW

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import deleting, getting, listing, saved
from .rest import V2
from .wire import NOT_GIVEN, NotGiven, given

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
    """Create a volume of ``size`` GB (10-4096) in ``data_center`` (``"EU-RO-1"``...); ``type`` is
    the data centre's default tier unless given. A create that may have reached the
    service is not re-sent (it could make, and bill, two volumes)."""
    return (yield from saved(ctx, api, ROW, given(locals()), extra_body))


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
    fields = given(locals(), skip=["network_volume_id"], update=True)
    return (yield from saved(ctx, api, ROW, fields, extra_body, record_id=network_volume_id))


delete = deleting(ROW, "Its data goes with it.")


class NetworkVolumes(Resource):
    create = blocking(create)
    list = blocking(listing(ROW))
    get = blocking(getting(ROW))
    update = blocking(update)
    delete = blocking(delete)


class AsyncNetworkVolumes(Resource):
    create = awaiting(create)
    list = awaiting(listing(ROW))
    get = awaiting(getting(ROW))
    update = awaiting(update)
    delete = awaiting(delete)
