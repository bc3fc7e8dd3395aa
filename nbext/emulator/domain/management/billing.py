"""Billing: the usage ledger cut into time buckets and grouped, as the reference asks.

A bucket is a calendar period in UTC (hour; day; week from Monday; month; year) and a
record's ``time`` is its bucket's start. Only usage inside ``startTime``..``endTime``
counts (an interval crossing either bound is cut there), and nothing after now: open
intervals run up to the clock. Buckets where nothing was used are left out.

- pods: RUNNING time x ``costPerHr``; grouped by ``gpuTypeId`` (default) or ``podId``.
- endpoints: worker execution time x the GPU type's serverless price x GPU count;
  grouped by ``endpointId`` (default), ``podId`` (the worker) or ``gpuTypeId``.
- network volumes: size x time x the GB-month price; one record per bucket.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from nbext.models import (
    BillingQuery,
    BucketSize,
    EndpointBillingQuery,
    NetworkVolumeBillingQuery,
    PodBillingQuery,
)

from ..clock import Clock
from .records import iso
from .usage import Usage, UsageLedger

AMOUNT_DECIMALS = 6


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
    if size is BucketSize.HOUR:
        return start + timedelta(hours=1)
    if size is BucketSize.DAY:
        return start + timedelta(days=1)
    if size is BucketSize.WEEK:
        return start + timedelta(days=7)
    if size is BucketSize.MONTH:
        if start.month == 12:
            return start.replace(year=start.year + 1, month=1)
        return start.replace(month=start.month + 1)
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
class _Sum:
    amount: float = 0.0
    seconds: float = 0.0


class Billing:
    """Billing records computed from the usage ledger at the moment of the query."""

    def __init__(self, ledger: UsageLedger, clock: Clock) -> None:
        self.ledger = ledger
        self.clock = clock

    def _period(self, query: BillingQuery, usages: list[Usage]) -> tuple[float, float]:
        now = self.clock.now()
        end = min(query.end_time.timestamp(), now) if query.end_time else now
        if query.start_time is not None:
            start = query.start_time.timestamp()
        else:
            start = min((u.start for u in usages), default=end)
        return start, end

    def _sums(
        self, query: BillingQuery, usages: list[Usage], key: Callable[[Usage], str | None]
    ) -> dict[tuple[float, str | None], _Sum]:
        start, end = self._period(query, usages)
        now = self.clock.now()
        sums: dict[tuple[float, str | None], _Sum] = defaultdict(_Sum)
        for usage in usages:
            lo, hi = max(usage.start, start), min(usage.until(now), end)
            if hi <= lo:
                continue
            group = key(usage)
            for bucket, seconds in split(lo, hi, query.bucket_size):
                total = sums[(bucket, group)]
                total.amount += seconds * usage.rate
                total.seconds += seconds
        return sums

    def _records(
        self, sums: dict[tuple[float, str | None], _Sum], group_field: str
    ) -> list[dict[str, Any]]:
        records = []
        for (bucket, group), total in sorted(
            sums.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
        ):
            record: dict[str, Any] = {
                "time": iso(bucket),
                "amount": round(total.amount, AMOUNT_DECIMALS),
                "timeBilledMs": round(total.seconds * 1000),
            }
            if group is not None:
                record[group_field] = group
            records.append(record)
        return records

    def pods(self, query: PodBillingQuery) -> list[dict[str, Any]]:
        usages = [
            u
            for u in self.ledger.of_kind("pod")
            if (query.pod_id is None or u.labels.get("podId") == query.pod_id)
            and (query.gpu_type_id is None or u.labels.get("gpuTypeId") == query.gpu_type_id)
        ]
        group_field = query.grouping.value
        sums = self._sums(query, usages, lambda u: u.labels.get(group_field))
        return self._records(sums, group_field)

    def endpoints(self, query: EndpointBillingQuery) -> list[dict[str, Any]]:
        gpus = set(query.gpu_type_id or [])
        centres = set(query.data_center_id or [])

        def wanted(u: Usage) -> bool:
            labels = u.labels
            return (
                (query.endpoint_id is None or labels.get("endpointId") == query.endpoint_id)
                and (not gpus or labels.get("gpuTypeId") in gpus)
                and (not centres or labels.get("dataCenterId") in centres)
                and (query.image_name is None or labels.get("imageName") == query.image_name)
                and (query.template_id is None or labels.get("templateId") == query.template_id)
            )

        usages = [u for u in self.ledger.of_kind("worker") if wanted(u)]
        group_field = query.grouping.value
        sums = self._sums(query, usages, lambda u: u.labels.get(group_field))
        return self._records(sums, group_field)

    def network_volumes(self, query: NetworkVolumeBillingQuery) -> list[dict[str, Any]]:
        usages = list(self.ledger.of_kind("volume"))
        start, end = self._period(query, usages)
        now = self.clock.now()
        amounts: dict[float, float] = defaultdict(float)
        sizes: dict[float, dict[str, int]] = defaultdict(dict)
        for usage in usages:
            lo, hi = max(usage.start, start), min(usage.until(now), end)
            if hi <= lo:
                continue
            size = int(usage.labels.get("size", 0))
            for bucket, seconds in split(lo, hi, query.bucket_size):
                amounts[bucket] += seconds * usage.rate
                held = sizes[bucket]
                held[usage.subject] = max(held.get(usage.subject, 0), size)
        return [
            {
                "time": iso(bucket),
                "amount": round(amounts[bucket], AMOUNT_DECIMALS),
                "diskSpaceBilledGb": sum(sizes[bucket].values()),
                "highPerformanceStorageAmount": 0.0,
                "highPerformanceStorageDiskSpaceBilledGb": 0,
            }
            for bucket in sorted(amounts)
        ]
