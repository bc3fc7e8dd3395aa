"""``/v1/billing``: figures computed by hand for a scripted history on the fake clock.

The clock starts at 2026-01-01T00:00:00Z, a Thursday. Prices come from the emulator's
catalogue (named here, so each expected figure reads as its own calculation).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management import catalog

from ..conftest import advance
from .conftest import endpoint, ok, pod, refused, volume

pytestmark = pytest.mark.anyio

HOUR = 3600.0
DAY = 24 * HOUR
A40 = catalog.gpu("NVIDIA A40")
RTX4090 = catalog.gpu("NVIDIA GeForce RTX 4090")
L4 = catalog.gpu("NVIDIA L4")
CPU3C = catalog.cpu("cpu3c")
GB_MONTH = catalog.VOLUME_PRICE_PER_GB_MONTH


def t(clock: str) -> str:
    """``"01T02:00"`` -> ``2026-01-01T02:00:00.000Z``."""
    return f"2026-01-{clock}:00.000Z"


def money(amount: float) -> Any:
    """Amounts are served rounded to 6 decimals."""
    return pytest.approx(amount, abs=1e-6)


def approx(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: money(v) if k == "amount" else v for k, v in r.items()} for r in records]


async def bill(api: httpx.AsyncClient, what: str, query: str = "") -> list[dict[str, Any]]:
    return await ok(api.get(f"/v1/billing/{what}?{query}"))  # type: ignore[no-any-return]


async def pod_history(api: httpx.AsyncClient, emu: Emulator) -> tuple[str, str]:
    """A: 2 x A40 (secure) from 0:00, stopped 1:30, started 2:00, running at 3:00.
    B: 1 x RTX 4090 (community) from 0:00, deleted at 2:30. Now: 3:00."""
    a = await pod(api, gpuTypeIds=["NVIDIA A40"], gpuCount=2)
    b = await pod(api, cloudType="COMMUNITY")
    await advance(emu, 1.5 * HOUR)
    await ok(api.post(f"/v1/pods/{a['id']}/stop"))
    await advance(emu, 0.5 * HOUR)
    await ok(api.post(f"/v1/pods/{a['id']}/start"))
    await advance(emu, 0.5 * HOUR)
    await ok(api.delete(f"/v1/pods/{b['id']}"), 204)
    await advance(emu, 0.5 * HOUR)
    return a["id"], b["id"]


async def test_pods_by_hour_and_pod(api: httpx.AsyncClient, emu: Emulator) -> None:
    a, b = await pod_history(api, emu)
    price_a, price_b = 2 * A40.secure_price, RTX4090.community_price
    assert await bill(api, "pods", "bucketSize=hour&grouping=podId") == approx(
        sorted(
            [
                {"time": t("01T00:00"), "amount": price_a, "timeBilledMs": 3_600_000, "podId": a},
                {"time": t("01T00:00"), "amount": price_b, "timeBilledMs": 3_600_000, "podId": b},
                {
                    "time": t("01T01:00"),
                    "amount": price_a / 2,
                    "timeBilledMs": 1_800_000,
                    "podId": a,
                },
                {"time": t("01T01:00"), "amount": price_b, "timeBilledMs": 3_600_000, "podId": b},
                {"time": t("01T02:00"), "amount": price_a, "timeBilledMs": 3_600_000, "podId": a},
                {
                    "time": t("01T02:00"),
                    "amount": price_b / 2,
                    "timeBilledMs": 1_800_000,
                    "podId": b,
                },
            ],
            key=lambda r: (r["time"], r["podId"]),
        )
    )


async def test_pods_by_day_and_gpu_type_the_default(api: httpx.AsyncClient, emu: Emulator) -> None:
    await pod_history(api, emu)
    assert await bill(api, "pods") == approx(
        [
            {
                "time": t("01T00:00"),
                "amount": 2.5 * 2 * A40.secure_price,
                "timeBilledMs": 9_000_000,
                "gpuTypeId": "NVIDIA A40",
            },
            {
                "time": t("01T00:00"),
                "amount": 2.5 * RTX4090.community_price,
                "timeBilledMs": 9_000_000,
                "gpuTypeId": "NVIDIA GeForce RTX 4090",
            },
        ]
    )
    # A running pod keeps accruing as the clock moves.
    await advance(emu, HOUR)
    a40 = (await bill(api, "pods", "gpuTypeId=NVIDIA%20A40"))[0]
    assert a40["amount"] == money(3.5 * 2 * A40.secure_price)
    assert a40["timeBilledMs"] == 12_600_000


async def test_pods_within_a_period_and_filters(api: httpx.AsyncClient, emu: Emulator) -> None:
    a, _ = await pod_history(api, emu)
    price_a, price_b = 2 * A40.secure_price, RTX4090.community_price
    period = "startTime=2026-01-01T00:30:00Z&endTime=2026-01-01T02:15:00Z&bucketSize=hour"
    records = await bill(api, "pods", f"{period}&grouping=podId&podId={a}")
    assert records == approx(
        [
            {"time": t("01T00:00"), "amount": price_a / 2, "timeBilledMs": 1_800_000, "podId": a},
            {"time": t("01T01:00"), "amount": price_a / 2, "timeBilledMs": 1_800_000, "podId": a},
            {"time": t("01T02:00"), "amount": price_a / 4, "timeBilledMs": 900_000, "podId": a},
        ]
    )
    whole = await bill(api, "pods", period.replace("bucketSize=hour", "bucketSize=day"))
    assert sum(r["amount"] for r in whole) == money(1.25 * price_a + 1.75 * price_b)
    assert await bill(api, "pods", "podId=nobody") == []
    assert await bill(api, "pods", "gpuTypeId=NVIDIA%20L4") == []
    assert await bill(api, "pods", "startTime=2026-02-01T00:00:00Z") == []
    assert await bill(api, "pods", "endTime=2025-12-31T00:00:00Z") == []


async def test_buckets_follow_the_calendar(api: httpx.AsyncClient, emu: Emulator) -> None:
    """A pod running from Jan 31 23:00 to Feb 1 01:00 spans two months; weeks start Monday."""
    await advance(emu, 30 * DAY + 23 * HOUR)
    p = await pod(api, gpuTypeIds=["NVIDIA A40"])
    await advance(emu, 2 * HOUR)
    await ok(api.post(f"/v1/pods/{p['id']}/stop"))
    await advance(emu, DAY)
    hourly = A40.secure_price
    assert await bill(api, "pods", "bucketSize=month") == approx(
        [
            {
                "time": t("01T00:00"),
                "amount": hourly,
                "timeBilledMs": 3_600_000,
                "gpuTypeId": A40.id,
            },
            {
                "time": "2026-02-01T00:00:00.000Z",
                "amount": hourly,
                "timeBilledMs": 3_600_000,
                "gpuTypeId": A40.id,
            },
        ]
    )
    year = await bill(api, "pods", "bucketSize=year")
    assert [(r["time"], r["timeBilledMs"]) for r in year] == [(t("01T00:00"), 7_200_000)]
    week = await bill(api, "pods", "bucketSize=week")  # Jan 26 (Mon) .. Feb 1 (Sun): one week
    assert [(r["time"], r["timeBilledMs"]) for r in week] == [
        ("2026-01-26T00:00:00.000Z", 7_200_000)
    ]


async def test_the_first_week_starts_on_the_monday_before(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    await pod(api)
    await advance(emu, HOUR)
    week = await bill(api, "pods", "bucketSize=week")
    assert week[0]["time"] == "2025-12-29T00:00:00.000Z"


async def test_endpoints_bill_worker_execution_time(api: httpx.AsyncClient, emu: Emulator) -> None:
    gpu = await endpoint(api, templateId="demo-sleep", gpuTypeIds=["NVIDIA L4"], gpuCount=2)
    cpu = await endpoint(
        api, templateId="demo-sleep", computeType="CPU", cpuFlavorIds=["cpu3c"], vcpuCount=4
    )
    await ok(api.post(f"/v2/{gpu['id']}/run", json={"input": {"seconds": 30}}))
    await ok(api.post(f"/v2/{cpu['id']}/run", json={"input": {"seconds": 10}}))
    workers = {w.id for e in emu.jobs.endpoints.values() for w in e.workers}
    await advance(emu, 60)
    gpu_amount = 30 * L4.serverless_per_second * 2
    cpu_amount = 10 * CPU3C.serverless_per_vcpu_second * 4
    day = t("01T00:00")
    by_endpoint = await bill(api, "endpoints")
    assert by_endpoint == approx(
        sorted(
            [
                {
                    "time": day,
                    "amount": gpu_amount,
                    "timeBilledMs": 30_000,
                    "endpointId": gpu["id"],
                },
                {
                    "time": day,
                    "amount": cpu_amount,
                    "timeBilledMs": 10_000,
                    "endpointId": cpu["id"],
                },
            ],
            key=lambda r: r["endpointId"],
        )
    )
    by_gpu = await bill(api, "endpoints", "grouping=gpuTypeId")
    assert by_gpu == approx(
        [
            {"time": day, "amount": cpu_amount, "timeBilledMs": 10_000},  # a CPU endpoint
            {"time": day, "amount": gpu_amount, "timeBilledMs": 30_000, "gpuTypeId": "NVIDIA L4"},
        ]
    )
    by_worker = await bill(api, "endpoints", "grouping=podId")
    assert {r["podId"] for r in by_worker} == workers and len(by_worker) == 2
    only_gpu = await bill(api, "endpoints", "gpuTypeId=NVIDIA%20L4")
    assert [r["endpointId"] for r in only_gpu] == [gpu["id"]]
    assert await bill(api, "endpoints", f"endpointId={cpu['id']}") == approx(
        [{"time": day, "amount": cpu_amount, "timeBilledMs": 10_000, "endpointId": cpu["id"]}]
    )
    assert len(await bill(api, "endpoints", "imageName=sleep")) == 2
    assert await bill(api, "endpoints", "imageName=echo") == []
    assert len(await bill(api, "endpoints", "templateId=demo-sleep")) == 2
    assert len(await bill(api, "endpoints", "dataCenterId=EU-RO-1")) == 2
    assert await bill(api, "endpoints", "dataCenterId=US-GA-1,AP-JP-1") == []


async def test_back_to_back_jobs_and_cancelled_ones(api: httpx.AsyncClient, emu: Emulator) -> None:
    e = await endpoint(api, templateId="demo-sleep", workersMax=1, gpuTypeIds=["NVIDIA L4"])
    for _ in range(2):
        await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 10}}))
    await advance(emu, 25)
    job = await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 100}}))
    await advance(emu, 5)
    await ok(api.post(f"/v2/{e['id']}/cancel/{job['id']}"))
    await advance(emu, 100)
    records = await bill(api, "endpoints")
    assert [r["timeBilledMs"] for r in records] == [25_000]
    assert records[0]["amount"] == money(25 * L4.serverless_per_second)
    # The two queued jobs ran back to back on the one worker: one interval, not two.
    assert len(list(emu.management.usage.of_kind("worker"))) == 2


async def test_network_volumes_by_size_and_time(api: httpx.AsyncClient, emu: Emulator) -> None:
    """V1: 100 GB from day 0, grown to 200 GB on day 10. V2: 50 GB from day 5 to day 6."""
    v1 = await volume(api, size=100)
    await advance(emu, 5 * DAY)
    v2 = await volume(api, size=50)
    await advance(emu, DAY)
    await ok(api.delete(f"/v1/networkvolumes/{v2['id']}"), 204)
    await advance(emu, 4 * DAY)
    await ok(api.patch(f"/v1/networkvolumes/{v1['id']}", json={"size": 200}))
    await advance(emu, 20 * DAY)
    per_gb_day = GB_MONTH / 30
    month = await bill(api, "networkvolumes", "bucketSize=month")
    gb_days = 100 * 10 + 200 * 20 + 50 * 1
    assert month == approx(
        [
            {
                "time": t("01T00:00"),
                "amount": gb_days * per_gb_day,
                "diskSpaceBilledGb": 200 + 50,
                "highPerformanceStorageAmount": 0.0,
                "highPerformanceStorageDiskSpaceBilledGb": 0,
            }
        ]
    )
    days = await bill(api, "networkvolumes")
    assert len(days) == 30
    assert days[0]["amount"] == money(100 * per_gb_day)
    assert days[5]["time"] == t("06T00:00") and days[5]["diskSpaceBilledGb"] == 150
    assert days[5]["amount"] == money(150 * per_gb_day)
    assert days[29]["diskSpaceBilledGb"] == 200


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("pods?bucketSize=minute", "bucketSize: Input should be 'hour', 'day'"),
        ("pods?grouping=endpointId", "grouping: Input should be 'podId' or 'gpuTypeId'"),
        ("pods?gpuTypeId=GTX", "gpuTypeId: Input should be"),
        ("pods?startTime=yesterday", "startTime: Input should be a valid datetime"),
        ("pods?startTime=2026", "startTime: a time is a date or date and time in ISO 8601"),
        ("endpoints?grouping=volume", "grouping: Input should be 'endpointId', 'podId'"),
        ("endpoints?dataCenterId=MARS-1", "dataCenterId.0: Input should be"),
        ("networkvolumes?endTime=2026-13-01", "endTime: Input should be a valid datetime"),
        (
            "networkvolumes?startTime=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z",
            "startTime (2026-01-02T00:00:00+00:00) must not be after endTime",
        ),
    ],
)
async def test_bad_queries(api: httpx.AsyncClient, path: str, message: str) -> None:
    await refused(api.get(f"/v1/billing/{path}"), message)
