"""Spend in REST v2's terms: per bucket, in total and per pod, endpoint, volume and cluster.

The same usage ledger as ``/v1/billing`` (``breakdown.py`` sums it); v2's paths do not map
to v1's by name (v1's ``/billing/endpoints`` is v2's ``/billing/serverless``; v2's
``/billing/endpoints`` is the service's public endpoints, which the emulator has none of,
so it is always empty). ``query`` is the operation's checked query.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from nbext.models import BucketSize

from ..clock import Clock
from .breakdown import Breakdown, Group, resolve_window
from .network_volumes import HIGH_PERFORMANCE, NetworkVolumes
from .refusals import Unprocessable
from .usage import Usage

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


def _volume_category(volumes: NetworkVolumes, high: str, standard: str) -> Callable[[Usage], str]:
    def category(u: Usage) -> str:
        return high if volumes.type_of(u.subject) == HIGH_PERFORMANCE else standard

    return category


def _filtered(query: dict[str, Any], field: str, label: str, fn: Group) -> Group:
    wanted = query.get(field)

    def group(u: Usage) -> tuple[str, str] | None:
        if wanted is not None and u.labels.get(label) != wanted:
            return None
        return fn(u)

    return group


class V2Billing:
    def __init__(self, clock: Clock, breakdown: Breakdown, volumes: NetworkVolumes) -> None:
        self.clock, self.breakdown, self._volumes = clock, breakdown, volumes

    def _answer(
        self,
        query: dict[str, Any],
        kinds: tuple[str, ...],
        group: Group,
        categories: tuple[str, ...],
        group_field: str | None,
        unique_field: str | None,
    ) -> dict[str, Any]:
        window = resolve_window(
            self.clock.now(),
            BucketSize(query.get("bucketSize", "day")),
            _time("startTime", query.get("startTime")),
            _time("endTime", query.get("endTime")),
            query.get("lastN"),
        )
        b = self.breakdown
        records = b.records(b.sums(kinds, window, group), window, categories, group_field)
        metadata: dict[str, Any] = {"query": window.wire(), "recordCount": len(records)}
        if group_field is not None:
            metadata["query"][group_field] = query.get(group_field)
        if unique_field is not None and group_field is not None:
            metadata[unique_field] = len({r[group_field] for r in records})
        metadata["totals"] = b.totals(records, categories)
        return {"records": records, "metadata": metadata}

    def total(self, query: dict[str, Any]) -> dict[str, Any]:
        storage = _volume_category(
            self._volumes, "storageHighPerformanceAmount", "storageStandardAmount"
        )
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
        return self._answer(query, kinds, group, AGGREGATE, None, None)

    def pods(self, query: dict[str, Any]) -> dict[str, Any]:
        def group(u: Usage) -> tuple[str, str]:
            return u.subject, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount")
        grouping = _filtered(query, "podId", "podId", group)
        return self._answer(query, ("pod",), grouping, categories, "podId", "uniquePodCount")

    def serverless(self, query: dict[str, Any]) -> dict[str, Any]:
        def group(u: Usage) -> tuple[str, str]:
            endpoint = str(u.labels.get("endpointId", ""))
            return endpoint, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount", "feeAmount")
        grouping = _filtered(query, "serverlessId", "endpointId", group)
        return self._answer(
            query,
            ("worker",),
            grouping,
            categories,
            "serverlessId",
            "uniqueServerlessCount",
        )

    def public_endpoints(self, query: dict[str, Any]) -> dict[str, Any]:
        return self._answer(query, (), lambda u: None, (), None, None)

    def volumes(self, query: dict[str, Any]) -> dict[str, Any]:
        category = _volume_category(self._volumes, "highPerformanceAmount", "standardAmount")
        grouping = _filtered(
            query, "networkVolumeId", "volumeId", lambda u: (u.subject, category(u))
        )
        return self._answer(
            query,
            ("volume",),
            grouping,
            ("standardAmount", "highPerformanceAmount"),
            "networkVolumeId",
            "uniqueNetworkVolumeCount",
        )

    def clusters(self, query: dict[str, Any]) -> dict[str, Any]:
        grouping = _filtered(query, "clusterId", "clusterId", lambda u: (u.subject, "gpuAmount"))
        return self._answer(
            query,
            ("cluster",),
            grouping,
            ("gpuAmount", "diskAmount", "networkingAmount"),
            "clusterId",
            "uniqueClusterCount",
        )
