"""``client.billing``: what pods, endpoints and network volumes cost, per time bucket.

Each call names a period (``start_time`` to ``end_time``), a ``bucket_size`` (hour, day,
week, month, year; default day) and, for pods and endpoints, a ``grouping``. Times are
``datetime`` (naive ones are UTC, the service's zone), ``date`` (midnight UTC at its
start) or ISO 8601 strings; left out, the period is the account's whole history up to
now (REST v1) or the last 30 days (REST v2). Each record is one bucket of one group, its
``time`` the start of the bucket.

REST v2's billing paths do not map to v1's by name (docs/rest-v2.md#billing): over v2,
``pods`` reads ``/billing/pods`` (one group per pod), ``endpoints`` reads
``/billing/serverless`` (per endpoint) and ``network_volumes`` ``/billing/network-volumes``,
each answer given v1's record shape. ``summary`` (every category per bucket) and
``serverless`` (v2's own records, with each category's amount) exist only in v2.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

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
from nbext.models import v2 as v2m

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from . import rest_v2
from .rest import V1, V2
from .wire import as_list, given, management_call, many, query, wrapped

Moment = dt.datetime | dt.date | str
"""A point in time as a caller may have it: a datetime, a date, or ISO 8601 text."""


Params = list[tuple[str, str]]


class BillingV2(V2):
    """Billing over REST v2: its query (``lastN``, its id names), records read as v1's."""

    def pods(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[BillingRecord]]:
        op = "billing.pods"
        where = rest_v2.billing_query(op, fields, {"pod_id": "podId"}, "podId")
        read = rest_v2.billing_v1(BillingRecord, {"podId": "podId"})
        call = self.v2_call("GET", ["billing", "pods"], op, "billing of pods", query=where)
        return (yield from self.fetch(ctx, call, read))

    def endpoints(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[BillingRecord]]:
        op = "billing.endpoints"
        where = rest_v2.billing_query(op, fields, {"endpoint_id": "serverlessId"}, "endpointId")
        read = rest_v2.billing_v1(BillingRecord, {"serverlessId": "endpointId"})
        parts = ["billing", "serverless"]
        call = self.v2_call("GET", parts, op, "billing of endpoints", query=where)
        return (yield from self.fetch(ctx, call, read))

    def network_volumes(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[NetworkVolumeBillingRecord]]:
        op = "billing.network_volumes"
        where = rest_v2.billing_query(op, fields, {}, None)
        read = rest_v2.billing_v1(
            NetworkVolumeBillingRecord, {"highPerformanceAmount": "highPerformanceStorageAmount"}
        )
        parts = ["billing", "network-volumes"]
        call = self.v2_call("GET", parts, op, "billing of network volumes", query=where)
        return (yield from self.fetch(ctx, call, read))


class BillingV1(V1, BillingV2):
    """Billing over REST v1: its own queries and records."""

    def pods(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[BillingRecord]]:
        parts = ["billing", "pods"]
        call = management_call("GET", parts, "billing.pods", "billing of pods", query=params)
        return (yield from self.fetch(ctx, call, many(BillingRecord)))

    def endpoints(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[BillingRecord]]:
        parts, op = ["billing", "endpoints"], "billing.endpoints"
        call = management_call("GET", parts, op, "billing of endpoints", query=params)
        return (yield from self.fetch(ctx, call, many(BillingRecord)))

    def network_volumes(
        self, ctx: Context, fields: dict[str, Any], params: Params
    ) -> Flow[list[NetworkVolumeBillingRecord]]:
        parts, op = ["billing", "networkvolumes"], "billing.network_volumes"
        call = management_call("GET", parts, op, "billing of network volumes", query=params)
        return (yield from self.fetch(ctx, call, many(NetworkVolumeBillingRecord)))


def pods(
    ctx: Context,
    api: BillingV2,
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
    fields = given(locals())
    return (yield from api.pods(ctx, fields, query(PodBillingQuery, "billing.pods", fields)))


def endpoints(
    ctx: Context,
    api: BillingV2,
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
    return (yield from api.endpoints(ctx, fields, params))


def network_volumes(
    ctx: Context,
    api: BillingV2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
) -> Flow[list[NetworkVolumeBillingRecord]]:
    """Network volume storage spending: size over time at the per-GB-month price."""
    fields = given(locals())
    params = query(NetworkVolumeBillingQuery, "billing.network_volumes", fields)
    return (yield from api.network_volumes(ctx, fields, params))


def summary(
    ctx: Context,
    api: BillingV2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    last_n: int | None = None,
) -> Flow[list[v2m.BillingRecord]]:
    """Everything the account spent, per bucket, by category (REST v2's ``/billing``).

    Each record's ``amounts()`` gives the categories (``podGpuAmount``,
    ``serverlessGpuAmount``, ``storageStandardAmount``, ...). ``last_n`` counts buckets back
    from the current one, instead of ``start_time``/``end_time``. Needs REST v2.
    """
    op = "billing.summary"
    where = rest_v2.billing_query(op, given(locals(), skip=["op"]), {}, None)
    read = wrapped(v2m.BillingRecord, "records")
    call = api.v2_call("GET", ["billing"], op, "billing", query=where)
    return (yield from api.fetch(ctx, call, read))


def serverless(
    ctx: Context,
    api: BillingV2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    endpoint_id: str | None = None,
    last_n: int | None = None,
) -> Flow[list[v2m.BillingRecord]]:
    """Serverless spending per endpoint and bucket, as REST v2 gives it (``/billing/serverless``).

    Unlike ``endpoints``, the records keep each category (``gpuAmount``, ``cpuAmount``,
    ``feeAmount``...: ``amounts()``) and the endpoint as ``serverlessId``. Needs REST v2.
    """
    op = "billing.serverless"
    fields = given(locals(), skip=["op"])
    where = rest_v2.billing_query(op, fields, {"endpoint_id": "serverlessId"}, None)
    read = wrapped(v2m.BillingRecord, "records")
    call = api.v2_call("GET", ["billing", "serverless"], op, "billing of endpoints", query=where)
    return (yield from api.fetch(ctx, call, read))


class Billing(Resource):
    """``client.billing``: ``pods``, ``endpoints``, ``network_volumes`` spending records;
    ``summary`` and ``serverless`` over REST v2."""

    pods = blocking(pods)
    endpoints = blocking(endpoints)
    network_volumes = blocking(network_volumes)
    summary = blocking(summary)
    serverless = blocking(serverless)


class AsyncBilling(Resource):
    """``client.billing`` of an ``AsyncClient``: ``Billing``'s methods, awaited."""

    pods = awaiting(pods)
    endpoints = awaiting(endpoints)
    network_volumes = awaiting(network_volumes)
    summary = awaiting(summary)
    serverless = awaiting(serverless)
