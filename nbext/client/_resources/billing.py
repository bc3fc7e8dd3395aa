"""``client.billing``: what the account spent, per time bucket, as REST v2 reports it.

A period is ``start_time`` to ``end_time`` or the ``last_n`` buckets up to now (left
out: the last 30 days); naive times are UTC, the service's zone.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from nbext.models import BillingQuery, BillingRecord, BucketSize

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .rest import V2
from .wire import camel, given, query, wrapped

Moment = dt.datetime | dt.date | str
PERIOD = ("start_time", "end_time", "bucket_size", "last_n")


def _records(ctx: Context, api: V2, kind: str, fields: dict[str, Any]) -> Flow[list[BillingRecord]]:
    """``GET /billing[/kind]``: the period checked here; any other field is the id kept."""
    operation = f"billing.{kind.replace('-', '_') or 'summary'}"
    params = query(BillingQuery, operation, {k: v for k, v in fields.items() if k in PERIOD})
    params += [(camel(key), str(value)) for key, value in fields.items() if key not in PERIOD]
    parts = ["billing", kind] if kind else ["billing"]
    call = api.call("GET", parts, operation, f"billing of {kind or 'the account'}", query=params)
    return (yield from api.fetch(ctx, call, wrapped(BillingRecord, "records")))


def summary(
    ctx: Context,
    api: V2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    last_n: int | None = None,
) -> Flow[list[BillingRecord]]:
    """Everything the account spent, per bucket; ``amounts()`` gives each record's
    categories (``podGpuAmount``, ``storageStandardAmount``, ...)."""
    return (yield from _records(ctx, api, "", given(locals())))


def pods(
    ctx: Context,
    api: V2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    last_n: int | None = None,
    pod_id: str | None = None,
) -> Flow[list[BillingRecord]]:
    """Pod spending, one record per pod and bucket (``pod_id``; ``pod_id=`` keeps one)."""
    return (yield from _records(ctx, api, "pods", given(locals())))


def serverless(
    ctx: Context,
    api: V2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    last_n: int | None = None,
    serverless_id: str | None = None,
) -> Flow[list[BillingRecord]]:
    """Serverless spending, one record per endpoint (``serverless_id``) and bucket."""
    return (yield from _records(ctx, api, "serverless", given(locals())))


def network_volumes(
    ctx: Context,
    api: V2,
    *,
    start_time: Moment | None = None,
    end_time: Moment | None = None,
    bucket_size: BucketSize | str | None = None,
    last_n: int | None = None,
    network_volume_id: str | None = None,
) -> Flow[list[BillingRecord]]:
    """Network volume storage spending, per bucket, standard and high-performance."""
    return (yield from _records(ctx, api, "network-volumes", given(locals())))


class Billing(Resource):
    summary = blocking(summary)
    pods = blocking(pods)
    serverless = blocking(serverless)
    network_volumes = blocking(network_volumes)


class AsyncBilling(Resource):
    summary = awaiting(summary)
    pods = awaiting(pods)
    serverless = awaiting(serverless)
    network_volumes = awaiting(network_volumes)
