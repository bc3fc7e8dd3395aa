"""Spend in REST v2's terms: per bucket, in total and per pod, endpoint, volume and cluster.

The same usage ledger as ``/v1/billing`` (``breakdown.py`` sums it); v2's paths do not map
to v1's by name (v1's ``/billing/endpoints`` is v2's ``/billing/serverless``; v2's
``/billing/endpoints`` is the service's public endpoints, which the emulator has none of,
so it is always empty). ``query`` is the operation's checked query.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nbext.models import BucketSize

from .breakdown import Breakdown, Group, Window, resolve_window
from .network_volumes import HIGH_PERFORMANCE
from .refusals import Unprocessable
from .usage import Usage

if TYPE_CHECKING:
    from .facade import Management

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
        return high if m.volumes.type_of(u.subject) == HIGH_PERFORMANCE else standard

    return category


def _answer(
    m: Management,
    query: dict[str, Any],
    kinds: tuple[str, ...],
    group: Group,
    categories: tuple[str, ...],
    group_field: str | None,
    unique_field: str | None,
) -> dict[str, Any]:
    window = _window(m, query)
    b: Breakdown = m.v2.breakdown
    records = b.records(b.sums(kinds, window, group), window, categories, group_field)
    metadata: dict[str, Any] = {"query": window.wire(), "recordCount": len(records)}
    if group_field is not None:
        metadata["query"][group_field] = query.get(group_field)
    if unique_field is not None and group_field is not None:
        metadata[unique_field] = len({r[group_field] for r in records})
    metadata["totals"] = b.totals(records, categories)
    return {"records": records, "metadata": metadata}


def _filtered(query: dict[str, Any], field: str, label: str, fn: Group) -> Group:
    wanted = query.get(field)

    def group(u: Usage) -> tuple[str, str] | None:
        if wanted is not None and u.labels.get(label) != wanted:
            return None
        return fn(u)

    return group


class V2Billing:
    def __init__(self, m: Management) -> None:
        self.m = m

    def total(self, query: dict[str, Any]) -> dict[str, Any]:
        m = self.m
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

        kinds = ("pod", "worker", "volume", "cluster")
        return _answer(m, query, kinds, group, AGGREGATE, None, None)

    def pods(self, query: dict[str, Any]) -> dict[str, Any]:
        def group(u: Usage) -> tuple[str, str]:
            return u.subject, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount")
        grouping = _filtered(query, "podId", "podId", group)
        return _answer(self.m, query, ("pod",), grouping, categories, "podId", "uniquePodCount")

    def serverless(self, query: dict[str, Any]) -> dict[str, Any]:
        def group(u: Usage) -> tuple[str, str]:
            endpoint = str(u.labels.get("endpointId", ""))
            return endpoint, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount", "feeAmount")
        grouping = _filtered(query, "serverlessId", "endpointId", group)
        return _answer(
            self.m,
            query,
            ("worker",),
            grouping,
            categories,
            "serverlessId",
            "uniqueServerlessCount",
        )

    def public_endpoints(self, query: dict[str, Any]) -> dict[str, Any]:
        return _answer(self.m, query, (), lambda u: None, (), None, None)

    def volumes(self, query: dict[str, Any]) -> dict[str, Any]:
        category = _volume_category(self.m, "highPerformanceAmount", "standardAmount")
        grouping = _filtered(
            query, "networkVolumeId", "volumeId", lambda u: (u.subject, category(u))
        )
        return _answer(
            self.m,
            query,
            ("volume",),
            grouping,
            ("standardAmount", "highPerformanceAmount"),
            "networkVolumeId",
            "uniqueNetworkVolumeCount",
        )

    def clusters(self, query: dict[str, Any]) -> dict[str, Any]:
        grouping = _filtered(query, "clusterId", "clusterId", lambda u: (u.subject, "gpuAmount"))
        return _answer(
            self.m,
            query,
            ("cluster",),
            grouping,
            ("gpuAmount", "diskAmount", "networkingAmount"),
            "clusterId",
            "uniqueClusterCount",
        )
