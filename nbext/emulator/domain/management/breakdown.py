"""Billing as v2 reports it: spend per time bucket, split by what it was spent on.

The same usage ledger as v1's billing, cut into the same calendar buckets, but each
record carries its bucket's ``startTime`` and ``endTime`` and an amount per category
(GPU, CPU, disk, storage tier, ...), and the answer ends with the window it resolved
and the totals. The window is aligned to bucket boundaries, as the service aligns it.
Categories the emulator does not meter (disk, fees, public endpoints, networking) are 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from nbext.models import BucketSize

from ..clock import Clock
from ..errors import InvalidInput
from .billing import AMOUNT_DECIMALS, bucket_floor, bucket_next, split
from .records import iso
from .usage import Usage, UsageLedger

DEFAULT_DAYS = 30
"""The window when none is given: the last 30 days."""

Group = Callable[[Usage], tuple[str, str] | None]
"""A usage's (group id, category), or None to leave it out."""


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    size: BucketSize

    def wire(self) -> dict[str, str]:
        return {
            "startTime": iso(self.start.timestamp()),
            "endTime": iso(self.end.timestamp()),
            "bucketSize": self.size.value,
        }


def resolve_window(
    now: float,
    size: BucketSize,
    start: datetime | None,
    end: datetime | None,
    last_n: int | None,
) -> Window:
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
        return Window(first, bucket_next(bucket_floor(moment, size), size), size)
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
    return Window(bucket_floor(start, size), aligned_end, size)


class Breakdown:
    """Spend per (bucket, group, category) from the usage ledger, at the moment asked."""

    def __init__(self, ledger: UsageLedger, clock: Clock) -> None:
        self.ledger = ledger
        self.clock = clock

    def sums(
        self, kinds: tuple[str, ...], window: Window, group: Group
    ) -> dict[tuple[float, str], dict[str, float]]:
        now = self.clock.now()
        lo_bound, hi_bound = window.start.timestamp(), min(window.end.timestamp(), now)
        out: dict[tuple[float, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for kind in kinds:
            for usage in self.ledger.of_kind(kind):
                lo, hi = max(usage.start, lo_bound), min(usage.until(now), hi_bound)
                if hi <= lo:
                    continue
                key = group(usage)
                if key is None:
                    continue
                group_id, category = key
                for bucket, seconds in split(lo, hi, window.size):
                    out[(bucket, group_id)][category] += seconds * usage.rate
        return out

    @staticmethod
    def records(
        sums: dict[tuple[float, str], dict[str, float]],
        window: Window,
        categories: tuple[str, ...],
        group_field: str | None,
    ) -> list[dict[str, Any]]:
        """One record per (bucket, group) with every category (0 when unused), oldest first."""
        records: list[dict[str, Any]] = []
        for (bucket, group_id), amounts in sorted(sums.items()):
            start = datetime.fromtimestamp(bucket, UTC)
            record: dict[str, Any] = {
                "startTime": iso(bucket),
                "endTime": iso(bucket_next(start, window.size).timestamp()),
            }
            if group_field is not None:
                record[group_field] = group_id
            for category in categories:
                record[category] = round(amounts.get(category, 0.0), AMOUNT_DECIMALS)
            record["totalAmount"] = round(sum(amounts.values()), AMOUNT_DECIMALS)
            records.append(record)
        return records

    @staticmethod
    def totals(records: list[dict[str, Any]], categories: tuple[str, ...]) -> dict[str, float]:
        totals: dict[str, float] = {}
        for name in ("totalAmount", *categories):
            value = sum(float(r[name]) for r in records)
            totals[name] = round(value, AMOUNT_DECIMALS)
        return totals
