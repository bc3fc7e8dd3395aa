"""``/v2/billing``: spend per bucket, in total and per pod, endpoint, volume and cluster.

The same usage ledger as ``/v1/billing``; v2's paths do not map to v1's by name (v1's
``/billing/endpoints`` is v2's ``/billing/serverless``; v2's ``/billing/endpoints`` is the
service's public endpoints, which the emulator has none of, so it is always empty).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import BucketSize

from ...domain.management import Management
from ...domain.management.breakdown import Breakdown, Group, Window, resolve_window
from ...domain.management.refusals import Unprocessable
from ...domain.management.usage import Usage
from .common import management, ok

router = APIRouter(prefix="/v2/billing", tags=["v2 billing"])

AGGREGATE = (
    "podGpuAmount",
    "podCpuAmount",
    "podDiskAmount",
    "serverlessGpuAmount",
    "serverlessCpuAmount",
    "serverlessDiskAmount",
    "serverlessFeeAmount",
    "storageStandardAmount",
    "storageHighPerformanceAmount",
    "endpointAmount",
    "clusterGpuAmount",
    "clusterDiskAmount",
    "clusterNetworkingAmount",
)


def _time(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        line = f"{name}: {value!r} is not an RFC 3339 date-time"
        raise Unprocessable(line, [line]) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _window(m: Management, query: dict[str, Any]) -> Window:
    return resolve_window(
        m.clock.now(),
        BucketSize(query.get("bucketSize", "day")),
        _time("startTime", query.get("startTime")),
        _time("endTime", query.get("endTime")),
        query.get("lastN"),
    )


def _volume_category(m: Management, high: str, standard: str) -> Callable[[Usage], str]:
    def category(u: Usage) -> str:
        kind = m.v2.facets.get("volume", u.subject).get("type", "STANDARD")
        return high if kind == "HIGH_PERFORMANCE" else standard

    return category


def _answer(
    m: Management,
    query: dict[str, Any],
    kinds: tuple[str, ...],
    group: Group,
    categories: tuple[str, ...],
    group_field: str | None,
    unique_field: str | None,
) -> Response:
    window = _window(m, query)
    b: Breakdown = m.v2.breakdown
    records = b.records(b.sums(kinds, window, group), window, categories, group_field)
    metadata: dict[str, Any] = {"query": window.wire(), "recordCount": len(records)}
    if group_field is not None:
        metadata["query"][group_field] = query.get(group_field)
    if unique_field is not None and group_field is not None:
        metadata[unique_field] = len({r[group_field] for r in records})
    metadata["totals"] = b.totals(records, categories)
    return ok({"records": records, "metadata": metadata})


def _filtered(query: dict[str, Any], field: str, label: str, fn: Group) -> Group:
    wanted = query.get(field)

    def group(u: Usage) -> tuple[str, str] | None:
        if wanted is not None and u.labels.get(label) != wanted:
            return None
        return fn(u)

    return group


@router.get("")
async def billing(request: Request) -> Response:
    m, query = management(request, "listBilling")
    storage = _volume_category(m, "storageHighPerformanceAmount", "storageStandardAmount")
    names = {
        "pod": ("podGpuAmount", "podCpuAmount"),
        "worker": ("serverlessGpuAmount", "serverlessCpuAmount"),
        "cluster": ("clusterGpuAmount", "clusterGpuAmount"),
    }

    def group(u: Usage) -> tuple[str, str]:
        if u.kind == "volume":
            return "all", storage(u)
        gpu, cpu = names[u.kind]
        return "all", gpu if u.labels.get("gpuTypeId") else cpu

    return _answer(m, query, ("pod", "worker", "volume", "cluster"), group, AGGREGATE, None, None)


@router.get("/pods")
async def pod_billing(request: Request) -> Response:
    m, query = management(request, "listPodBilling")

    def group(u: Usage) -> tuple[str, str]:
        return u.subject, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

    categories = ("gpuAmount", "cpuAmount", "diskAmount")
    grouping = _filtered(query, "podId", "podId", group)
    return _answer(m, query, ("pod",), grouping, categories, "podId", "uniquePodCount")


@router.get("/serverless")
async def serverless_billing(request: Request) -> Response:
    m, query = management(request, "listServerlessBilling")

    def group(u: Usage) -> tuple[str, str]:
        endpoint = str(u.labels.get("endpointId", ""))
        return endpoint, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

    categories = ("gpuAmount", "cpuAmount", "diskAmount", "feeAmount")
    grouping = _filtered(query, "serverlessId", "endpointId", group)
    return _answer(
        m, query, ("worker",), grouping, categories, "serverlessId", "uniqueServerlessCount"
    )


@router.get("/endpoints")
async def endpoint_billing(request: Request) -> Response:
    m, query = management(request, "listEndpointBilling")
    return _answer(m, query, (), lambda u: None, (), None, None)


@router.get("/network-volumes")
async def volume_billing(request: Request) -> Response:
    m, query = management(request, "listNetworkVolumeBilling")
    category = _volume_category(m, "highPerformanceAmount", "standardAmount")
    grouping = _filtered(query, "networkVolumeId", "volumeId", lambda u: (u.subject, category(u)))
    return _answer(
        m,
        query,
        ("volume",),
        grouping,
        ("standardAmount", "highPerformanceAmount"),
        "networkVolumeId",
        "uniqueNetworkVolumeCount",
    )


@router.get("/clusters")
async def cluster_billing(request: Request) -> Response:
    m, query = management(request, "listClusterBilling")
    grouping = _filtered(query, "clusterId", "clusterId", lambda u: (u.subject, "gpuAmount"))
    return _answer(
        m,
        query,
        ("cluster",),
        grouping,
        ("gpuAmount", "diskAmount", "networkingAmount"),
        "clusterId",
        "uniqueClusterCount",
    )
