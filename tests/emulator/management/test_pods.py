"""``/v1/pods``: the simulated life cycle (docs/behaviour.md#pods), filters, include flags.

Time is the emulator's fake clock: ``lastStartedAt`` moves only when the test moves it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management import catalog

from ..conftest import advance
from .conftest import endpoint, ok, pod, refused, registry_auth, template, volume

pytestmark = pytest.mark.anyio

START = "2026-01-01T00:00:00Z"
"""The fake clock's start (``FakeClock()``'s default)."""


def at(seconds: float) -> str:
    ts = datetime.fromisoformat(START.replace("Z", "+00:00")).timestamp() + seconds
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


async def test_create_rents_a_running_gpu_pod(api: httpx.AsyncClient) -> None:
    body = {"name": "trainer", "imageName": "me/train:1", "gpuTypeIds": ["NVIDIA A40"]}
    p = await ok(api.post("/v1/pods", json={**body, "gpuCount": 2}), 201)
    a40 = catalog.gpu("NVIDIA A40")
    assert p["desiredStatus"] == "RUNNING" and p["lastStartedAt"] == START
    assert p["name"] == "trainer" and p["image"] == "me/train:1"
    assert p["costPerHr"] == round(a40.secure_price * 2, 4) == p["adjustedCostPerHr"]
    assert p["gpu"]["id"] == "NVIDIA A40" and p["gpu"]["count"] == 2
    assert p["gpu"]["securePrice"] == a40.secure_price
    assert p["ports"] == ["8888/http", "22/tcp"] and list(p["portMappings"]) == ["22"]
    assert p["publicIp"].startswith("100.65.")
    assert (p["containerDiskInGb"], p["volumeInGb"], p["volumeMountPath"]) == (50, 20, "/workspace")
    assert p["locked"] is False and p["interruptible"] is False
    assert p["lastStatusChange"].startswith("Rented by User: Thu Jan 01 2026")
    for included in ("machine", "networkVolume", "savingsPlans", "template"):
        assert included not in p
    assert await ok(api.get(f"/v1/pods/{p['id']}")) == p
    assert await ok(api.get("/v1/pods")) == [p]


async def test_prices_follow_cloud_spot_and_cpu(api: httpx.AsyncClient) -> None:
    rtx = catalog.gpu(catalog.DEFAULT_GPU_TYPE)
    default = await pod(api)
    assert default["gpu"]["id"] == catalog.DEFAULT_GPU_TYPE
    community = await pod(api, cloudType="COMMUNITY")
    spot = await pod(api, interruptible=True)
    assert default["costPerHr"] == rtx.secure_price
    assert community["costPerHr"] == rtx.community_price
    assert spot["costPerHr"] == rtx.secure_spot_price
    cpu = await pod(api, computeType="CPU", cpuFlavorIds=["cpu3m"], vcpuCount=4)
    flavor = catalog.cpu("cpu3m")
    assert "gpu" not in cpu and cpu["cpuFlavorId"] == "cpu3m"
    assert cpu["vcpuCount"] == 4 and cpu["memoryInGb"] == 4 * flavor.memory_per_vcpu_gb
    assert cpu["costPerHr"] == round(4 * flavor.price_per_vcpu, 4)


async def test_a_pod_from_a_template_takes_what_it_does_not_set(api: httpx.AsyncClient) -> None:
    auth = await registry_auth(api)
    t = await template(
        api,
        imageName="tpl/image:3",
        env={"A": "t", "B": "t"},
        ports=["7860/http"],
        volumeMountPath="/models",
        containerDiskInGb=5,
        containerRegistryAuthId=auth["id"],
    )
    p = await ok(
        api.post("/v1/pods", json={"templateId": t["id"], "env": {"B": "pod"}, "volumeInGb": 1}),
        201,
    )
    assert p["image"] == "tpl/image:3" and p["templateId"] == t["id"]
    assert p["env"] == {"A": "t", "B": "pod"}
    assert p["ports"] == ["7860/http"] and p["portMappings"] == {}
    assert (p["containerDiskInGb"], p["volumeInGb"], p["volumeMountPath"]) == (5, 1, "/models")
    assert p["containerRegistryAuthId"] == auth["id"]
    with_template = await ok(api.get(f"/v1/pods/{p['id']}?includeTemplate=true"))
    assert with_template["template"] == t
    own_image = await pod(api, templateId=t["id"], imageName="override:1")
    assert own_image["image"] == "override:1"


async def test_stop_start_restart_reset(api: httpx.AsyncClient, emu: Emulator) -> None:
    p = await pod(api)
    url = f"/v1/pods/{p['id']}"
    await advance(emu, 60)
    stopped = await ok(api.post(f"{url}/stop"))
    assert stopped["desiredStatus"] == "EXITED" and stopped["lastStartedAt"] == START
    assert "publicIp" not in stopped and stopped["portMappings"] == {}
    assert stopped["lastStatusChange"].startswith("Exited by User")
    assert (await ok(api.post(f"{url}/stop")))["desiredStatus"] == "EXITED"  # again: no change
    await advance(emu, 60)
    started = await ok(api.post(f"{url}/start"))
    assert started["desiredStatus"] == "RUNNING" and started["lastStartedAt"] == at(120)
    await advance(emu, 60)
    assert (await ok(api.post(f"{url}/start")))["lastStartedAt"] == at(120)  # already running
    restarted = await ok(api.post(f"{url}/restart"))
    assert restarted["desiredStatus"] == "RUNNING" and restarted["lastStartedAt"] == at(180)
    await advance(emu, 60)
    reset = await ok(api.post(f"{url}/reset"))
    assert reset["desiredStatus"] == "RUNNING" and reset["lastStartedAt"] == at(240)
    assert reset["lastStatusChange"].startswith("Reset by User")
    await ok(api.post(f"{url}/stop"))
    await advance(emu, 60)
    from_exited = await ok(api.post(f"{url}/restart"))
    assert from_exited["desiredStatus"] == "RUNNING" and from_exited["lastStartedAt"] == at(300)
    assert await ok(api.get(url)) == from_exited


async def test_a_locked_pod_refuses_stop_and_reset(api: httpx.AsyncClient) -> None:
    p = await pod(api, locked=True)
    url = f"/v1/pods/{p['id']}"
    await refused(api.post(f"{url}/stop"), "is locked", "stopping", '"locked": false')
    await refused(api.post(f"{url}/reset"), "is locked", "resetting")
    await refused(api.patch(url, json={"imageName": "new"}), "is locked", "imageName")
    assert await ok(api.get(url)) == p
    restarted = await ok(api.post(f"{url}/restart"))  # SPEC names stop and reset only
    assert restarted["desiredStatus"] == "RUNNING"
    unlocked = await ok(api.patch(url, json={"locked": False}))
    assert unlocked["locked"] is False
    assert (await ok(api.post(f"{url}/stop")))["desiredStatus"] == "EXITED"


@pytest.mark.parametrize("how", ["PATCH", "POST .../update"])
async def test_update_in_place_or_with_a_reset(
    api: httpx.AsyncClient, emu: Emulator, how: str
) -> None:
    p = await pod(api)
    url = f"/v1/pods/{p['id']}"

    async def update(body: dict[str, Any]) -> Any:
        if how == "PATCH":
            return await ok(api.patch(url, json=body))
        return await ok(api.post(f"{url}/update", json=body))

    await advance(emu, 10)
    renamed = await update({"name": "renamed", "locked": True})
    assert renamed["name"] == "renamed" and renamed["locked"] is True
    assert renamed["lastStartedAt"] == START  # in place: no reset
    await advance(emu, 10)
    changed = await update({"locked": False, "imageName": "v2", "env": {"X": "1"}, "ports": []})
    assert changed["image"] == "v2" and changed["env"] == {"X": "1"} and changed["ports"] == []
    assert changed["lastStartedAt"] == at(20)  # the change reset the pod
    assert changed["lastStatusChange"].startswith("Reset by User")
    await refused(api.patch(url, json={"ports": ["x"]}), "ports.0")
    await refused(api.patch(url, json={"containerRegistryAuthId": "none"}), "no container")
    await refused(api.patch(url, json={"name": "x" * 192}), "name: String should have at most")
    assert await ok(api.get(url)) == changed
    nulls = await update({"volumeInGb": None})  # nullable in the reference: no change
    assert nulls["volumeInGb"] == changed["volumeInGb"]


async def test_delete_then_404(api: httpx.AsyncClient) -> None:
    p = await pod(api)
    await ok(api.delete(f"/v1/pods/{p['id']}"), 204)
    for method, path in [
        ("GET", ""),
        ("DELETE", ""),
        ("PATCH", ""),
        ("POST", "/update"),
        ("POST", "/start"),
        ("POST", "/stop"),
        ("POST", "/restart"),
        ("POST", "/reset"),
    ]:
        response = await api.request(method, f"/v1/pods/{p['id']}{path}", json={})
        await refused(response, f"pod {p['id']!r} not found", status=404)
    assert await ok(api.get("/v1/pods")) == []


BAD_PODS: list[tuple[dict[str, Any], str]] = [
    ({}, "imageName is required unless templateId names a template"),
    ({"imageName": "i", "gpuCount": 0}, "gpuCount: Input should be greater than or equal to 1"),
    ({"imageName": "i", "gpuTypeIds": ["GTX 1080"]}, "gpuTypeIds.0: Input should be"),
    ({"imageName": "i", "cloudType": "PRIVATE"}, "cloudType: Input should be"),
    ({"imageName": "i", "dataCenterIds": ["MARS-1"]}, "dataCenterIds.0: Input should be"),
    ({"imageName": "i", "dataCenterIds": []}, "dataCenterIds: must name at least one"),
    ({"imageName": "i", "countryCodes": ["ZZ"]}, "countryCodes: no data centre"),
    ({"imageName": "i", "name": "n" * 192}, "name: String should have at most 191"),
    ({"imageName": "i", "templateId": "nope"}, "templateId: no template with id 'nope'"),
    ({"imageName": "i", "networkVolumeId": "nope"}, "networkVolumeId: no network volume"),
    ({"imageName": "i", "containerRegistryAuthId": "no"}, "containerRegistryAuthId: no"),
    ({"imageName": "i", "allowedCudaVersions": ["9.2"]}, "allowedCudaVersions.0"),
    ({"imageName": "i", "computeType": "CPU", "cpuFlavorIds": ["cpu9"]}, "cpuFlavorIds.0"),
    ({"imageName": "i", "env": {"A": None}}, "env.A: Input should be a valid string"),
]


@pytest.mark.parametrize(("body", "message"), BAD_PODS)
async def test_bad_pods_are_refused_and_nothing_is_rented(
    api: httpx.AsyncClient, emu: Emulator, body: dict[str, Any], message: str
) -> None:
    await refused(api.post("/v1/pods", json=body), message)
    assert await ok(api.get("/v1/pods?includeWorkers=true")) == []
    assert list(emu.management.usage.of_kind("pod")) == []  # and nothing is billed


async def test_a_pod_runs_where_its_volume_is(api: httpx.AsyncClient) -> None:
    v = await volume(api, dataCenterId="US-TX-3")
    p = await pod(api, networkVolumeId=v["id"])
    shown = await ok(api.get(f"/v1/pods/{p['id']}?includeNetworkVolume=true&includeMachine=true"))
    assert shown["networkVolume"] == v and shown["machine"]["dataCenterId"] == "US-TX-3"
    await refused(
        api.post(
            "/v1/pods",
            json={"imageName": "i", "networkVolumeId": v["id"], "dataCenterIds": ["EU-RO-1"]},
        ),
        "networkVolumeId: the volume is in US-TX-3",
    )
    japan = await pod(api, countryCodes=["jp"])
    machine = (await ok(api.get(f"/v1/pods/{japan['id']}?includeMachine=true")))["machine"]
    assert machine["dataCenterId"] == "AP-JP-1" and machine["location"] == "Japan"


async def test_include_flags(api: httpx.AsyncClient) -> None:
    p = await pod(api, gpuTypeIds=["NVIDIA L4"], dataCenterIds=["EU-NL-1"])
    full = await ok(
        api.get(
            f"/v1/pods/{p['id']}?includeMachine=true&includeSavingsPlans=true"
            "&includeNetworkVolume=true&includeTemplate=true"
        )
    )
    assert full["savingsPlans"] == [] and "networkVolume" not in full and "template" not in full
    machine = full["machine"]
    assert machine["gpuTypeId"] == "NVIDIA L4" and machine["gpuType"]["id"] == "NVIDIA L4"
    assert machine["dataCenterId"] == "EU-NL-1" and machine["secureCloud"] is True
    assert machine["costPerHr"] == p["costPerHr"]
    listed = await ok(api.get("/v1/pods?includeMachine=true"))
    assert listed == [{**p, "machine": machine}]
    await refused(api.get(f"/v1/pods/{p['id']}?includeMachine=sometimes"), "includeMachine:")


async def test_list_filters(api: httpx.AsyncClient) -> None:
    v = await volume(api, dataCenterId="EU-SE-1")
    t = await template(api, imageName="from-template")
    a = await pod(api, name="a", gpuTypeIds=["NVIDIA A40"], dataCenterIds=["EU-RO-1"])
    b = await pod(api, name="b", imageName="other", networkVolumeId=v["id"])
    c = await pod(api, name="c", computeType="CPU", cpuFlavorIds=["cpu5g"])
    d = await ok(api.post("/v1/pods", json={"name": "d", "templateId": t["id"]}), 201)
    await ok(api.post(f"/v1/pods/{b['id']}/stop"))

    async def names(q: str) -> list[str]:
        return [p["name"] for p in await ok(api.get(f"/v1/pods?{q}"))]

    assert await names("") == ["a", "b", "c", "d"]
    assert await names("computeType=CPU") == ["c"]
    assert await names("computeType=GPU") == ["a", "b", "d"]
    assert await names("cpuFlavorId=cpu5g&cpuFlavorId=cpu3c") == ["c"]
    assert await names("dataCenterId=EU-SE-1") == ["b"]
    assert await names("dataCenterId=EU-SE-1,EU-RO-1") == ["a", "b", "c", "d"]
    assert await names("desiredStatus=EXITED") == ["b"]
    assert await names("desiredStatus=RUNNING") == ["a", "c", "d"]
    assert await names("gpuTypeId=NVIDIA%20A40") == ["a"]
    assert await names(f"id={c['id']}") == ["c"]
    assert await names("imageName=other") == ["b"]
    assert await names("name=d") == ["d"]
    assert await names(f"networkVolumeId={v['id']}") == ["b"]
    assert await names(f"templateId={t['id']}") == ["d"]
    assert await names("name=a&desiredStatus=EXITED") == []
    await refused(api.get("/v1/pods?desiredStatus=GONE"), "desiredStatus: Input should be")
    await refused(api.get("/v1/pods?computeType=TPU"), "computeType: Input should be")
    await refused(api.get(f"/v1/pods?name={'n' * 192}"), "name: String should have at most 191")
    assert {p["id"] for p in await ok(api.get("/v1/pods"))} == {a["id"], b["id"], c["id"], d["id"]}


async def test_serverless_workers_are_pods_only_when_asked(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    own = await pod(api, name="own")
    e = await endpoint(api, workersMin=2, gpuTypeIds=["NVIDIA L40S"], dataCenterIds=["EU-FR-1"])
    assert [p["id"] for p in await ok(api.get("/v1/pods"))] == [own["id"]]
    everything = await ok(api.get("/v1/pods?includeWorkers=true"))
    workers = [p for p in everything if p.get("endpointId") == e["id"]]
    assert len(everything) == 3 and len(workers) == 2
    worker = workers[0]
    assert worker["desiredStatus"] == "RUNNING" and worker["aiApiId"] == e["id"]
    assert worker["gpu"]["id"] == "NVIDIA L40S" and worker["templateId"] == e["templateId"]
    assert worker["costPerHr"] == round(catalog.gpu("NVIDIA L40S").serverless_per_second * 3600, 4)
    only = await ok(api.get(f"/v1/pods?includeWorkers=true&endpointId={e['id']}"))
    assert only == workers
    assert await ok(api.get("/v1/pods?includeWorkers=true&dataCenterId=EU-FR-1")) == workers
    assert await ok(api.get(f"/v1/pods/{worker['id']}?includeWorkers=true")) == worker
    await refused(api.get(f"/v1/pods/{worker['id']}"), "includeWorkers=true", status=404)


async def test_a_pod_record_holds_v2_s_fields_and_v1_shows_the_rest(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    """The record keeps no entrypoint, status change or machine: ``/v1`` keeps or derives
    them, and notes how the pod last changed whichever interface changed it."""
    p = await pod(api, dockerEntrypoint=["sh"], locked=True)
    url = f"/v1/pods/{p['id']}"
    record = emu.store.get("pod", p["id"]) or {}
    assert not {"entrypoint", "status_change", "machine_id"} & record.keys()
    await refused(api.patch(url, json={"dockerEntrypoint": ["bash"]}), "is locked", "dockerEntry")
    await ok(api.patch(url, json={"locked": False}))
    await advance(emu, 10)
    changed = await ok(api.patch(url, json={"dockerEntrypoint": ["bash"]}))
    assert changed["dockerEntrypoint"] == ["bash"] and changed["lastStartedAt"] == at(10)
    assert changed["machineId"] == p["machineId"]
    for action, shown in [("stop", "Exited"), ("start", "Resumed"), ("restart", "Restarted")]:
        await advance(emu, 10)
        await ok(api.post(f"/v2/pods/{p['id']}/action", json={"action": action}))
        assert (await ok(api.get(url)))["lastStatusChange"].startswith(f"{shown} by User")
    await ok(api.patch(f"/v2/pods/{p['id']}", json={"image": "other"}))
    assert (await ok(api.get(url)))["lastStatusChange"].startswith("Reset by User")
    await ok(api.post(f"/v2/pods/{p['id']}/action", json={"action": "terminate"}), 204)
    assert emu.store.get("v1", p["id"]) is None
