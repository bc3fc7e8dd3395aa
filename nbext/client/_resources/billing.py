"""``client.billing``: what pods, endpoints and network volumes cost, per time bucket.

Each call names a period (``start_time`` to ``end_time``), a ``bucket_size`` (hour, day,
week, month, year; default day) and, for pods and endpoints, a ``grouping``. Times are
``datetime`` (naive ones are UTC, the service's zone), ``date`` (midnight UTC at its
start) or ISO 8601 strings; left out, the period is the account's whole history up to
now. Each record is one bucket of one group, its ``time`` the start of the bucket.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from nbext.models import (
    BillingRecord,
    BucketSize,
    DataCenterId,
    EndpointBillingGrouping,
    EndpointBillingQuery,
    GpuTypeId,
    NetworkVolumeBillingQuery,
    NetworkVolumeBillingRecord,
    PodBillingGrouping,
    PodBillingQuery,
)

from .._flows import Context, Flow
from . import shapes
from .twins import AsyncResource, SyncResource, awaiting, blocking
from .wire import as_list, given, many, query, v1_call

Moment = dt.datetime | dt.date | str
"""A point in time as a caller may have it: a datetime, a date, or ISO 8601 text."""


def pods(
    ctx: Context,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    grouping: PodBillingGrouping | str | None = None,
    pod_id: str | None = None,
    gpu_type_id: GpuTypeId | str | None = None,
) -> Flow[list[BillingRecord]]:
    """Pod spending: running time at each pod's hourly cost.

    ``grouping`` is ``"gpuTypeId"`` (default) or ``"podId"``; ``pod_id`` and
    ``gpu_type_id`` narrow it to one pod or one GPU type.
    """
    params = query(PodBillingQuery, "billing.pods", given(locals()))
    call = v1_call("GET", ["billing", "pods"], "billing.pods", "billing of pods", query=params)
    return (yield from shapes.fetch(ctx, call, many(BillingRecord)))


def endpoints(
    ctx: Context,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    grouping: EndpointBillingGrouping | str | None = None,
    endpoint_id: str | None = None,
    gpu_type_id: GpuTypeId | str | Sequence[GpuTypeId | str] | None = None,
    data_center_id: DataCenterId | str | Sequence[DataCenterId | str] | None = None,
    image_name: str | None = None,
    template_id: str | None = None,
) -> Flow[list[BillingRecord]]:
    """Serverless spending: worker execution time at each GPU type's price.

    ``grouping`` is ``"endpointId"`` (default), ``"podId"`` or ``"gpuTypeId"``;
    ``gpu_type_id`` and ``data_center_id`` take one value or several (any matches).
    """
    fields = given(locals())
    for key in ("gpu_type_id", "data_center_id"):
        if key in fields:
            fields[key] = as_list(fields[key])
    params = query(EndpointBillingQuery, "billing.endpoints", fields)
    call = v1_call(
        "GET", ["billing", "endpoints"], "billing.endpoints", "billing of endpoints", query=params
    )
    return (yield from shapes.fetch(ctx, call, many(BillingRecord)))


def network_volumes(
    ctx: Context,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
) -> Flow[list[NetworkVolumeBillingRecord]]:
    """Network volume storage spending: size over time at the per-GB-month price."""
    params = query(NetworkVolumeBillingQuery, "billing.network_volumes", given(locals()))
    call = v1_call(
        "GET",
        ["billing", "networkvolumes"],
        "billing.network_volumes",
        "billing of network volumes",
        query=params,
    )
    return (yield from shapes.fetch(ctx, call, many(NetworkVolumeBillingRecord)))


class Billing(SyncResource):
    """``client.billing``: ``pods``, ``endpoints``, ``network_volumes`` spending records."""

    pods = blocking(pods)
    endpoints = blocking(endpoints)
    network_volumes = blocking(network_volumes)


class AsyncBilling(AsyncResource):
    """``client.billing`` of an ``AsyncClient``: ``Billing``'s methods, awaited."""

    pods = awaiting(pods)
    endpoints = awaiting(endpoints)
    network_volumes = awaiting(network_volumes)
