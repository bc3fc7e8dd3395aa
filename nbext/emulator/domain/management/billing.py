"""Billing: the usage ledger cut into UTC calendar buckets, as REST v2 reports spend
(docs/architecture.md#management-areas)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from nbext.models import BucketSize

from ..clock import Clock
from ..errors import InvalidInput
from .network_volumes import HIGH_PERFORMANCE, NetworkVolumes
from .records import iso, moment
from .usage import Usage, UsageLedger

AMOUNT_DECIMALS = 6
DEFAULT_DAYS = 30
"""v2's window when none is given: the last 30 days."""
STEP = {
    BucketSize.HOUR: timedelta(hours=1),
    BucketSize.DAY: timedelta(days=1),
    BucketSize.WEEK: timedelta(days=7),
}
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
K = TypeVar("K", bound=Hashable)


def bucket_floor(moment: datetime, size: BucketSize) -> datetime:
    """The start of the bucket holding ``moment``."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if size is BucketSize.HOUR:
        return moment.replace(minute=0, second=0, microsecond=0)
    if size is BucketSize.DAY:
        return day
    if size is BucketSize.WEEK:
        return day - timedelta(days=day.weekday())
    if size is BucketSize.MONTH:
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def bucket_next(start: datetime, size: BucketSize) -> datetime:
    """The start of the bucket after the one starting at ``start``."""
    if size in STEP:
        return start + STEP[size]
    if size is BucketSize.MONTH:
        return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    return start.replace(year=start.year + 1)


def split(start: float, end: float, size: BucketSize) -> Iterable[tuple[float, float]]:
    """(bucket start, seconds in it) for every bucket ``start``..``end`` overlaps."""
    bucket = bucket_floor(datetime.fromtimestamp(start, UTC), size)
    while (bucket_start := bucket.timestamp()) < end:
        following = bucket_next(bucket, size)
        seconds = min(end, following.timestamp()) - max(start, bucket_start)
        if seconds > 0:
            yield bucket_start, seconds
        bucket = following


@dataclass
class Spent:
    amount: float = 0.0
    seconds: float = 0.0


def spend(
    usages: Iterable[Usage],
    start: float,
    end: float,
    size: BucketSize,
    now: float,
    key: Callable[[Usage], K],
) -> dict[tuple[float, K], Spent]:
    """What each usage cost and lasted inside ``start``..``end`` (and before ``now``), per
    (bucket start, ``key`` of the usage), in the order the ledger first reached each."""
    sums: dict[tuple[float, K], Spent] = defaultdict(Spent)
    for usage in usages:
        lo, hi = max(usage.start, start), min(usage.until(now), end)
        if hi <= lo:
            continue
        group = key(usage)
        for bucket, seconds in split(lo, hi, size):
            total = sums[(bucket, group)]
            total.amount += seconds * usage.rate
            total.seconds += seconds
    return sums


def resolve_window(
    now: float,
    size: BucketSize,
    start: datetime | None,
    end: datetime | None,
    last_n: int | None,
) -> tuple[datetime, datetime]:
    """The aligned window of a query (``lastN`` or ``startTime``/``endTime``, not both)."""
    moment = datetime.fromtimestamp(now, UTC)
    if last_n is not None:
        if start is not None or end is not None:
            raise InvalidInput(
                "lastN: give either lastN or startTime/endTime, not both (lastN counts "
                "buckets back from the current one)"
            )
        first = bucket_floor(moment, size)
        for _ in range(min(last_n, 100_000) - 1):
            first = bucket_floor(first - timedelta(microseconds=1), size)
            if first.year <= 1970:
                break
        return first, bucket_next(bucket_floor(moment, size), size)
    end = (end or moment).astimezone(UTC)
    start = (start or end - timedelta(days=DEFAULT_DAYS)).astimezone(UTC)
    if start > end:
        raise InvalidInput(
            f"startTime ({iso(start.timestamp())}) must not be after endTime "
            f"({iso(end.timestamp())})"
        )
    aligned_end = bucket_floor(end, size)
    if aligned_end != end:
        aligned_end = bucket_next(aligned_end, size)
    return bucket_floor(start, size), aligned_end


class Billing:
    """Spend in v2's terms: per bucket, in total and per pod, endpoint, volume and cluster."""

    def __init__(self, ledger: UsageLedger, clock: Clock, volumes: NetworkVolumes) -> None:
        self.ledger, self.clock, self._volumes = ledger, clock, volumes

    def _storage(self, u: Usage, high: str, standard: str) -> str:
        return high if self._volumes.type_of(u.subject) == HIGH_PERFORMANCE else standard

    def _answer(
        self,
        query: dict[str, Any],
        kinds: tuple[str, ...],
        key: Callable[[Usage], tuple[str, str]],
        categories: tuple[str, ...],
        grouped: tuple[str, str, str] | None = None,
    ) -> dict[str, Any]:
        """``key``: a usage's (group id, category). ``grouped``: the query field the records
        are grouped and filtered by, the usage label it filters, and the field counting
        the groups."""
        size = BucketSize(query.get("bucketSize", "day"))
        first, last = resolve_window(
            self.clock.now(),
            size,
            moment("startTime", query.get("startTime")),
            moment("endTime", query.get("endTime")),
            query.get("lastN"),
        )
        now = self.clock.now()
        usages = [u for kind in kinds for u in self.ledger.of_kind(kind)]
        if grouped is not None and query.get(grouped[0]) is not None:
            usages = [u for u in usages if u.labels.get(grouped[1]) == query.get(grouped[0])]
        lo, hi = first.timestamp(), min(last.timestamp(), now)
        sums: dict[tuple[float, str], dict[str, float]] = defaultdict(dict)
        for (bucket, (group_id, category)), spent in spend(usages, lo, hi, size, now, key).items():
            sums[(bucket, group_id)][category] = spent.amount
        records: list[dict[str, Any]] = []
        for (bucket, group_id), amounts in sorted(sums.items()):
            start = datetime.fromtimestamp(bucket, UTC)
            record: dict[str, Any] = {
                "startTime": iso(bucket),
                "endTime": iso(bucket_next(start, size).timestamp()),
            }
            if grouped is not None:
                record[grouped[0]] = group_id
            for category in categories:
                record[category] = round(amounts.get(category, 0.0), AMOUNT_DECIMALS)
            record["totalAmount"] = round(sum(amounts.values()), AMOUNT_DECIMALS)
            records.append(record)
        window = {"startTime": iso(lo), "endTime": iso(last.timestamp()), "bucketSize": size.value}
        metadata: dict[str, Any] = {"query": window, "recordCount": len(records)}
        if grouped is not None:
            metadata["query"][grouped[0]] = query.get(grouped[0])
            metadata[grouped[2]] = len({r[grouped[0]] for r in records})
        metadata["totals"] = {
            name: round(sum(float(r[name]) for r in records), AMOUNT_DECIMALS)
            for name in ("totalAmount", *categories)
        }
        return {"records": records, "metadata": metadata}

    def total(self, query: dict[str, Any]) -> dict[str, Any]:
        names = {
            "pod": ("podGpuAmount", "podCpuAmount"),
            "worker": ("serverlessGpuAmount", "serverlessCpuAmount"),
            "cluster": ("clusterGpuAmount", "clusterGpuAmount"),
        }

        def key(u: Usage) -> tuple[str, str]:
            if u.kind == "volume":
                return "all", self._storage(
                    u, "storageHighPerformanceAmount", "storageStandardAmount"
                )
            gpu, cpu = names[u.kind]
            return "all", gpu if u.labels.get("gpuTypeId") else cpu

        return self._answer(query, ("pod", "worker", "volume", "cluster"), key, AGGREGATE)

    def pods(self, query: dict[str, Any]) -> dict[str, Any]:
        def key(u: Usage) -> tuple[str, str]:
            return u.subject, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount")
        return self._answer(query, ("pod",), key, categories, ("podId", "podId", "uniquePodCount"))

    def serverless(self, query: dict[str, Any]) -> dict[str, Any]:
        def key(u: Usage) -> tuple[str, str]:
            endpoint = str(u.labels.get("endpointId", ""))
            return endpoint, "gpuAmount" if u.labels.get("gpuTypeId") else "cpuAmount"

        categories = ("gpuAmount", "cpuAmount", "diskAmount", "feeAmount")
        grouped = ("serverlessId", "endpointId", "uniqueServerlessCount")
        return self._answer(query, ("worker",), key, categories, grouped)

    def public_endpoints(self, query: dict[str, Any]) -> dict[str, Any]:
        return self._answer(query, (), lambda u: ("", ""), ())

    def volumes(self, query: dict[str, Any]) -> dict[str, Any]:
        def key(u: Usage) -> tuple[str, str]:
            return u.subject, self._storage(u, "highPerformanceAmount", "standardAmount")

        categories = ("standardAmount", "highPerformanceAmount")
        grouped = ("networkVolumeId", "volumeId", "uniqueNetworkVolumeCount")
        return self._answer(query, ("volume",), key, categories, grouped)

    def clusters(self, query: dict[str, Any]) -> dict[str, Any]:
        categories = ("gpuAmount", "diskAmount", "networkingAmount")
        grouped = ("clusterId", "clusterId", "uniqueClusterCount")
        return self._answer(
            query, ("cluster",), lambda u: (u.subject, "gpuAmount"), categories, grouped
        )
