"""``/v2/billing``: spend per bucket and category, from the same ledger as ``/v1/billing``."""

from __future__ import annotations

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management import catalog

from .conftest import GPU, ok, pod, problem, volume

pytestmark = pytest.mark.anyio


async def test_a_pod_running_two_hours_bills_its_gpu(api: httpx.AsyncClient, emu: Emulator) -> None:
    p = await pod(api)
    cpu = await ok(
        api.post(
            "/v2/pods", json={"name": "c", "image": "i", "cpu": {"id": "cpu3c", "vcpuCount": 2}}
        ),
        201,
    )
    await emu.advance_async(7200)
    answer = await ok(api.get("/v2/billing/pods?bucketSize=hour"))
    by_pod = {}
    for r in answer["records"]:
        by_pod.setdefault(r["podId"], []).append(r)
    price = catalog.gpu(GPU).secure_price
    assert [r["gpuAmount"] for r in by_pod[p["id"]]] == [price, price]
    assert by_pod[p["id"]][0]["startTime"] == "2026-01-01T00:00:00.000Z"
    assert by_pod[p["id"]][0]["endTime"] == "2026-01-01T01:00:00.000Z"
    assert all(r["cpuAmount"] > 0 and r["gpuAmount"] == 0 for r in by_pod[cpu["id"]])
    meta = answer["metadata"]
    assert meta["uniquePodCount"] == 2 and meta["recordCount"] == 4
    assert meta["query"]["bucketSize"] == "hour" and meta["query"]["podId"] is None
    assert meta["totals"]["gpuAmount"] == round(2 * price, 6)
    only = await ok(api.get(f"/v2/billing/pods?bucketSize=hour&podId={p['id']}"))
    assert {r["podId"] for r in only["records"]} == {p["id"]}
    total = await ok(api.get("/v2/billing?bucketSize=day"))
    assert total["records"][0]["podGpuAmount"] == round(2 * price, 6)
    assert total["metadata"]["totals"]["totalAmount"] == meta["totals"]["totalAmount"]


async def test_serverless_volume_and_cluster_billing(api: httpx.AsyncClient, emu: Emulator) -> None:
    v = await volume(api, size=100)
    body = {
        "name": "c",
        "type": "TRAINING",
        "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 2, "podCount": 2},
    }
    cluster = await ok(api.post("/v2/clusters", json=body), 201)
    await emu.advance_async(3600)
    vols = await ok(api.get("/v2/billing/network-volumes?lastN=1"))
    assert vols["records"][0]["networkVolumeId"] == v["id"]
    assert vols["records"][0]["standardAmount"] > 0
    clusters = await ok(api.get("/v2/billing/clusters"))
    assert clusters["records"][0]["gpuAmount"] == round(catalog.gpu(GPU).secure_price * 4, 6)
    assert clusters["metadata"]["uniqueClusterCount"] == 1
    assert clusters["records"][0]["clusterId"] == cluster["id"]
    assert (await ok(api.get("/v2/billing/serverless")))["records"] == []
    public = await ok(api.get("/v2/billing/endpoints"))
    assert public["records"] == [] and public["metadata"]["totals"] == {"totalAmount": 0}


async def test_windows_are_aligned_and_checked(api: httpx.AsyncClient) -> None:
    answer = await ok(
        api.get(
            "/v2/billing?bucketSize=day&startTime=2025-12-30T10:00:00Z&endTime=2025-12-31T01:00:00Z"
        )
    )
    assert answer["metadata"]["query"] == {
        "startTime": "2025-12-30T00:00:00.000Z",
        "endTime": "2026-01-01T00:00:00.000Z",
        "bucketSize": "day",
    }
    last = await ok(api.get("/v2/billing?bucketSize=month&lastN=3"))
    assert last["metadata"]["query"]["startTime"] == "2025-11-01T00:00:00.000Z"
    assert last["metadata"]["query"]["endTime"] == "2026-02-01T00:00:00.000Z"
    await problem(api.get("/v2/billing?lastN=2&startTime=2025-12-01T00:00:00Z"), 400, "lastN")
    await problem(
        api.get("/v2/billing?startTime=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z"),
        400,
        "must not be after",
    )
    await problem(api.get("/v2/billing?startTime=yesterday"), 422, "startTime")
    await problem(api.get("/v2/billing?bucketSize=fortnight"), 422, "bucketSize")
