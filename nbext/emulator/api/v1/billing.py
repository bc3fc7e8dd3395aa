"""``/v1/billing/...``: the ledger's sum (``billing.spend``) as v1 answers it, over v1's
unaligned window (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import (
    BillingQuery,
    EndpointBillingQuery,
    NetworkVolumeBillingQuery,
    PodBillingQuery,
)

from ...domain.management.billing import AMOUNT_DECIMALS, K, Spent, spend
from ...domain.management.facade import Management
from ...domain.management.records import iso
from ...domain.management.usage import Usage
from .common import Managed, ok, query

router = APIRouter(prefix="/v1/billing", tags=["billing"])


def _matching(usages: Iterable[Usage], wanted: dict[str, Any]) -> list[Usage]:
    """The usages whose labels pass every filter: a value or a list of them (None or
    empty: anything)."""
    return [u for u in usages if all(_passes(u.labels.get(k), v) for k, v in wanted.items())]


def _passes(have: Any, want: Any) -> bool:
    if want is None or want == []:
        return True
    return have in want if isinstance(want, list) else have == want


def _spend(
    m: Management, query: BillingQuery, usages: list[Usage], key: Callable[[Usage], K]
) -> dict[tuple[float, K], Spent]:
    now = m.billing.clock.now()
    end = min(query.end_time.timestamp(), now) if query.end_time else now
    if query.start_time is not None:
        start = query.start_time.timestamp()
    else:
        start = min((u.start for u in usages), default=end)
    return spend(usages, start, end, query.bucket_size, now, key)


def _grouped(
    m: Management, query: BillingQuery, usages: list[Usage], group_field: str
) -> list[dict[str, Any]]:
    sums = _spend(m, query, usages, lambda u: u.labels.get(group_field))
    records = []
    for (bucket, group), total in sorted(sums.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        record: dict[str, Any] = {
            "time": iso(bucket),
            "amount": round(total.amount, AMOUNT_DECIMALS),
            "timeBilledMs": round(total.seconds * 1000),
        }
        if group is not None:
            record[group_field] = group
        records.append(record)
    return records


@router.get("/pods")
async def pod_billing(request: Request, m: Managed) -> Response:
    q = query(request, PodBillingQuery)
    wanted = {"podId": q.pod_id, "gpuTypeId": q.gpu_type_id}
    return ok(_grouped(m, q, _matching(m.usage.of_kind("pod"), wanted), q.grouping.value))


@router.get("/endpoints")
async def endpoint_billing(request: Request, m: Managed) -> Response:
    q = query(request, EndpointBillingQuery)
    wanted = {
        "endpointId": q.endpoint_id,
        "gpuTypeId": q.gpu_type_id,
        "dataCenterId": q.data_center_id,
        "imageName": q.image_name,
        "templateId": q.template_id,
    }
    return ok(_grouped(m, q, _matching(m.usage.of_kind("worker"), wanted), q.grouping.value))


@router.get("/networkvolumes")
async def network_volume_billing(request: Request, m: Managed) -> Response:
    """One record per bucket: what every volume cost, and the GB held (each volume at the
    largest size it had in the bucket)."""
    q = query(request, NetworkVolumeBillingQuery)
    usages = list(m.usage.of_kind("volume"))
    sums = _spend(m, q, usages, lambda u: (u.subject, int(u.labels.get("size", 0))))
    amounts: dict[float, float] = defaultdict(float)
    sizes: dict[float, dict[str, int]] = defaultdict(dict)
    for (bucket, (volume_id, size)), spent in sums.items():
        amounts[bucket] += spent.amount
        sizes[bucket][volume_id] = max(sizes[bucket].get(volume_id, 0), size)
    return ok(
        [
            {
                "time": iso(bucket),
                "amount": round(amounts[bucket], AMOUNT_DECIMALS),
                "diskSpaceBilledGb": sum(sizes[bucket].values()),
                "highPerformanceStorageAmount": 0.0,
                "highPerformanceStorageDiskSpaceBilledGb": 0,
            }
            for bucket in sorted(amounts)
        ]
    )
