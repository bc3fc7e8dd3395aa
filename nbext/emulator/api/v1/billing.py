"""``/v1/billing/...``, as v1 answers it: the same sum of the ledger (``billing.spend``),
one record per bucket and group, whose ``time`` is its bucket's start.

v1's window is not aligned: it runs from ``startTime`` (else the first usage) to
``endTime`` (else now).

- pods: RUNNING time x ``costPerHr``; grouped by ``gpuTypeId`` (default) or ``podId``.
- endpoints: worker execution time x the GPU type's serverless price x GPU count;
  grouped by ``endpointId`` (default), ``podId`` (the worker) or ``gpuTypeId``.
- network volumes: size x time x the GB-month price; one record per bucket.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import (
    BillingQuery,
    EndpointBillingQuery,
    NetworkVolumeBillingQuery,
    PodBillingQuery,
)

from ...domain.clock import Clock
from ...domain.management.billing import AMOUNT_DECIMALS, K, Spent, spend
from ...domain.management.records import iso
from ...domain.management.usage import Usage, UsageLedger
from .common import Managed, ok, query


class V1Billing:
    def __init__(self, ledger: UsageLedger, clock: Clock) -> None:
        self.ledger = ledger
        self.clock = clock

    def _spend(
        self, query: BillingQuery, usages: list[Usage], key: Callable[[Usage], K]
    ) -> dict[tuple[float, K], Spent]:
        """``spend`` over v1's window."""
        now = self.clock.now()
        end = min(query.end_time.timestamp(), now) if query.end_time else now
        if query.start_time is not None:
            start = query.start_time.timestamp()
        else:
            start = min((u.start for u in usages), default=end)
        return spend(usages, start, end, query.bucket_size, now, key)

    def _grouped(
        self, query: BillingQuery, usages: list[Usage], group_field: str
    ) -> list[dict[str, Any]]:
        sums = self._spend(query, usages, lambda u: u.labels.get(group_field))
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
        return self._grouped(query, usages, query.grouping.value)

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
        return self._grouped(query, usages, query.grouping.value)

    def network_volumes(self, query: NetworkVolumeBillingQuery) -> list[dict[str, Any]]:
        """One record per bucket: what every volume cost, and the GB held (each volume
        at the largest size it had in the bucket)."""
        usages = list(self.ledger.of_kind("volume"))
        sums = self._spend(query, usages, lambda u: (u.subject, int(u.labels.get("size", 0))))
        amounts: dict[float, float] = defaultdict(float)
        sizes: dict[float, dict[str, int]] = defaultdict(dict)
        for (bucket, (volume_id, size)), spent in sums.items():
            amounts[bucket] += spent.amount
            sizes[bucket][volume_id] = max(sizes[bucket].get(volume_id, 0), size)
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


router = APIRouter(prefix="/v1/billing", tags=["billing"])


def _billing(m: Managed) -> V1Billing:
    return V1Billing(m.usage, m.billing.clock)


@router.get("/pods")
async def pod_billing(request: Request, m: Managed) -> Response:
    return ok(_billing(m).pods(query(request, PodBillingQuery)))


@router.get("/endpoints")
async def endpoint_billing(request: Request, m: Managed) -> Response:
    return ok(_billing(m).endpoints(query(request, EndpointBillingQuery)))


@router.get("/networkvolumes")
async def network_volume_billing(request: Request, m: Managed) -> Response:
    return ok(_billing(m).network_volumes(query(request, NetworkVolumeBillingQuery)))
