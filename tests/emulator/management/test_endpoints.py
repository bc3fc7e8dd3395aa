"""``/v1/endpoints``: records that are live endpoints of the job interface.

An endpoint created here serves ``/v2/{id}`` at once with its template's image; its
scaling settings change the live endpoint; deleting it removes it from ``/v2``.
``Emulator.deploy`` goes the same way and shows up here.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator

from ..conftest import advance, until
from .conftest import endpoint, ok, refused, serverless_template, template, volume

pytestmark = pytest.mark.anyio


async def health(api: httpx.AsyncClient, endpoint_id: str) -> dict[str, Any]:
    return await ok(api.get(f"/v2/{endpoint_id}/health"))  # type: ignore[no-any-return]


async def test_create_serves_jobs_at_once(api: httpx.AsyncClient) -> None:
    t = await serverless_template(api, imageName="echo", env={"K": "v"})
    e = await ok(api.post("/v1/endpoints", json={"templateId": t["id"], "name": "mine"}))
    assert len(e["id"]) == 14 and e["id"].isalnum() and e["id"].islower()
    assert e["name"] == "mine" and e["templateId"] == t["id"] and e["env"] == {"K": "v"}
    assert (e["workersMin"], e["workersMax"], e["idleTimeout"]) == (0, 3, 5)
    assert e["executionTimeoutMs"] == 600_000 and e["version"] == 0
    assert e["computeType"] == "GPU" and e["gpuTypeIds"] == ["NVIDIA GeForce RTX 4090"]
    assert (e["scalerType"], e["scalerValue"], e["gpuCount"]) == ("QUEUE_DELAY", 4, 1)
    assert e["createdAt"] == "2026-01-01T00:00:00Z" and e["userId"].startswith("user_")
    result = await ok(api.post(f"/v2/{e['id']}/runsync", json={"input": {"hello": 1}}))
    assert result["status"] == "COMPLETED" and result["output"] == {"hello": 1}
    assert await ok(api.get(f"/v1/endpoints/{e['id']}")) == e
    assert await ok(api.get("/v1/endpoints")) == [e]


async def test_an_official_template_is_enough(api: httpx.AsyncClient) -> None:
    e = await endpoint(api, templateId="demo-stream-text")
    job = await ok(api.post(f"/v2/{e['id']}/runsync", json={"input": {"text": "a b"}}))
    assert job["status"] == "COMPLETED"


async def test_an_image_without_a_handler_keeps_jobs_queued(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    e = await endpoint(
        api, templateId=(await serverless_template(api, imageName="me/model:1"))["id"]
    )
    job = await ok(api.post(f"/v2/{e['id']}/run", json={"input": {}}))
    await advance(emu, 60)
    assert (await ok(api.get(f"/v2/{e['id']}/status/{job['id']}")))["status"] == "IN_QUEUE"
    emu.register_image("me/model:1", lambda job: {"ran": job["input"]})
    await until(lambda: emu.jobs.jobs[job["id"]].status == "COMPLETED", "the job to run")


BAD_ENDPOINTS: list[tuple[dict[str, Any], str]] = [
    ({}, "templateId: is required"),
    ({"templateId": "nope"}, "templateId: no template with id 'nope'"),
    ({"templateId": "<pod>"}, "is a pod template (isServerless false)"),
    ({"templateId": "<sls>", "workersMin": 4}, "workersMin (4) must not exceed workersMax (3)"),
    ({"templateId": "<sls>", "workersMax": -1}, "workersMax: Input should be greater than"),
    ({"templateId": "<sls>", "idleTimeout": 0}, "idleTimeout: Input should be greater than"),
    ({"templateId": "<sls>", "idleTimeout": 3601}, "idleTimeout: Input should be less than"),
    ({"templateId": "<sls>", "gpuCount": 0}, "gpuCount: Input should be greater than"),
    ({"templateId": "<sls>", "scalerValue": 0}, "scalerValue: Input should be greater than"),
    ({"templateId": "<sls>", "scalerType": "CPU"}, "scalerType: Input should be"),
    ({"templateId": "<sls>", "gpuTypeIds": ["GTX 1"]}, "gpuTypeIds.0: Input should be"),
    ({"templateId": "<sls>", "computeType": "TPU"}, "computeType: Input should be"),
    ({"templateId": "<sls>", "cpuFlavorIds": ["cpu3m"]}, "cpu3m is not offered for serverless"),
    ({"templateId": "<sls>", "executionTimeoutMs": 1000}, "executionTimeoutMs: Input should"),
    ({"templateId": "<sls>", "dataCenterIds": ["X"]}, "dataCenterIds.0: Input should be"),
    ({"templateId": "<sls>", "minCudaVersion": "10.1"}, "minCudaVersion: Input should be"),
    ({"templateId": "<sls>", "name": "n" * 192}, "name: String should have at most 191"),
    ({"templateId": "<sls>", "networkVolumeId": "nope"}, "networkVolumeId: no network volume"),
    ({"templateId": "<sls>", "networkVolumeIds": ["nope"]}, "networkVolumeIds.0: no network"),
    ({"templateId": "<sls>", "flashboot": "yes"}, "flashboot: Input should be a valid boolean"),
]


@pytest.mark.parametrize(("body", "message"), BAD_ENDPOINTS)
async def test_bad_endpoints_are_refused_and_nothing_is_deployed(
    api: httpx.AsyncClient, emu: Emulator, body: dict[str, Any], message: str
) -> None:
    pod_template = await template(api)
    sls = await serverless_template(api)
    names = {"<pod>": pod_template["id"], "<sls>": sls["id"]}
    if "templateId" in body:
        body = {**body, "templateId": names.get(body["templateId"], body["templateId"])}
    await refused(api.post("/v1/endpoints", json=body), message)
    assert await ok(api.get("/v1/endpoints")) == []
    assert emu.jobs.endpoints == {}


async def test_a_cpu_endpoint(api: httpx.AsyncClient) -> None:
    e = await endpoint(api, computeType="CPU", cpuFlavorIds=["cpu5c", "cpu3g"], vcpuCount=4)
    assert e["computeType"] == "CPU" and e["instanceIds"] == ["cpu5c-4-8", "cpu3g-4-16"]
    assert "gpuTypeIds" not in e and "gpuCount" not in e


async def test_include_flags(api: httpx.AsyncClient) -> None:
    t = await serverless_template(api)
    e = await endpoint(api, templateId=t["id"], workersMin=1)
    full = await ok(api.get(f"/v1/endpoints/{e['id']}?includeTemplate=true&includeWorkers=true"))
    assert full["template"] == t
    assert len(full["workers"]) == 1 and full["workers"][0]["endpointId"] == e["id"]
    listed = await ok(api.get("/v1/endpoints?includeTemplate=true"))
    assert listed == [{**e, "template": t}]
    await refused(api.get("/v1/endpoints?includeWorkers=2"), "includeWorkers:")


@pytest.mark.parametrize("how", ["PATCH", "POST .../update"])
async def test_scaling_changes_reach_the_live_endpoint(
    api: httpx.AsyncClient, emu: Emulator, how: str
) -> None:
    e = await endpoint(api, templateId="demo-sleep", workersMax=3)

    async def update(body: dict[str, Any]) -> Any:
        if how == "PATCH":
            return await ok(api.patch(f"/v1/endpoints/{e['id']}", json=body))
        return await ok(api.post(f"/v1/endpoints/{e['id']}/update", json=body))

    assert (await health(api, e["id"]))["workers"]["idle"] == 0
    updated = await update({"workersMin": 2, "name": "scaled"})
    assert (updated["workersMin"], updated["name"]) == (2, "scaled")
    assert (await health(api, e["id"]))["workers"] == {
        "idle": 2,
        "running": 0,
        "initializing": 0,
        "ready": 2,
        "throttled": 0,
        "unhealthy": 0,
    }
    updated = await update({"workersMin": 0, "workersMax": 1, "idleTimeout": 2})
    assert (updated["workersMax"], updated["idleTimeout"]) == (1, 2)
    assert len(emu.jobs.endpoints[e["id"]].workers) == 1  # the idle worker above max stopped
    for _ in range(3):
        await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 10}}))
    await advance(emu, 0)
    assert (await health(api, e["id"]))["jobs"]["inProgress"] == 1  # max 1 worker
    await advance(emu, 30)
    assert (await health(api, e["id"]))["jobs"]["completed"] == 3
    await advance(emu, 2)  # the new idle timeout
    assert (await health(api, e["id"]))["workers"] == {
        "idle": 0,
        "running": 0,
        "initializing": 0,
        "ready": 0,
        "throttled": 0,
        "unhealthy": 0,
    }
    await update({"executionTimeoutMs": 5000})
    job = await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 10}}))
    await advance(emu, 6)
    status = await ok(api.get(f"/v2/{e['id']}/status/{job['id']}"))
    assert status["status"] == "TIMED_OUT" and "5000 ms" in status["error"]
    assert await ok(api.get(f"/v1/endpoints/{e['id']}")) == {
        **e,
        "name": "scaled",
        "workersMin": 0,
        "workersMax": 1,
        "idleTimeout": 2,
        "executionTimeoutMs": 5000,
    }


async def test_lowering_workers_max_stops_busy_workers_when_their_job_ends(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    e = await endpoint(api, templateId="demo-sleep", workersMax=2)
    for _ in range(2):
        await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 10}}))
    await advance(emu, 0)
    assert (await health(api, e["id"]))["workers"]["running"] == 2
    await ok(api.patch(f"/v1/endpoints/{e['id']}", json={"workersMax": 1}))
    await advance(emu, 11)
    assert len(emu.jobs.endpoints[e["id"]].workers) == 1


async def test_update_refusals_change_nothing(api: httpx.AsyncClient, emu: Emulator) -> None:
    pod_template = await template(api)
    e = await endpoint(api, workersMin=1, workersMax=2)
    url = f"/v1/endpoints/{e['id']}"
    await refused(api.patch(url, json={"workersMin": 3}), "workersMin (3) must not exceed")
    await refused(api.patch(url, json={"workersMax": 0}), "workersMin (1) must not exceed")
    await refused(api.patch(url, json={"templateId": pod_template["id"]}), "is a pod template")
    await refused(api.patch(url, json={"templateId": "nope", "name": "x"}), "no template")
    await refused(api.patch(url, json={"idleTimeout": 0, "name": "x"}), "idleTimeout:")
    await refused(api.patch(url, json={"workersMax": None}), "workersMax: must not be null")
    await refused(api.patch(url, json={"networkVolumeId": "no"}), "networkVolumeId: no")
    assert await ok(api.get(url)) == e
    live = emu.jobs.endpoints[e["id"]]
    assert (live.workers_min, live.workers_max, len(live.workers)) == (1, 2, 1)
    await refused(api.patch("/v1/endpoints/nope", json={}), "endpoint 'nope' not found", status=404)


async def test_a_new_template_or_image_rolls_out(api: httpx.AsyncClient) -> None:
    echo = await serverless_template(api, imageName="echo")
    e = await endpoint(api, templateId=echo["id"])
    ran = await ok(api.post(f"/v2/{e['id']}/runsync", json={"input": {"v": 1}}))
    assert ran["status"] == "COMPLETED"
    await ok(api.patch(f"/v1/templates/{echo['id']}", json={"imageName": "fail"}))
    assert (await ok(api.get(f"/v1/endpoints/{e['id']}")))["version"] == 1
    failed = await ok(api.post(f"/v2/{e['id']}/runsync", json={"input": {"message": "x"}}))
    assert failed["status"] == "FAILED"
    other = await serverless_template(api, imageName="echo", env={"E": "1"})
    moved = await ok(api.patch(f"/v1/endpoints/{e['id']}", json={"templateId": other["id"]}))
    assert moved["templateId"] == other["id"] and moved["version"] == 2
    assert moved["env"] == {"E": "1"}
    ok_again = await ok(api.post(f"/v2/{e['id']}/runsync", json={"input": {"v": 2}}))
    assert ok_again["output"] == {"v": 2}
    # readme is no rollout
    await ok(api.patch(f"/v1/templates/{other['id']}", json={"readme": "docs"}))
    assert (await ok(api.get(f"/v1/endpoints/{e['id']}")))["version"] == 2


async def test_delete_removes_it_from_the_job_interface(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    e = await endpoint(api, templateId="demo-sleep")
    job = await ok(api.post(f"/v2/{e['id']}/run", json={"input": {"seconds": 100}}))
    await ok(api.delete(f"/v1/endpoints/{e['id']}"), 204)
    assert (await api.get(f"/v2/{e['id']}/status/{job['id']}")).status_code == 404
    assert (await api.post(f"/v2/{e['id']}/run", json={"input": {}})).status_code == 404
    await refused(api.get(f"/v1/endpoints/{e['id']}"), "not found", status=404)
    await refused(api.delete(f"/v1/endpoints/{e['id']}"), "not found", status=404)
    assert emu.jobs.jobs == {}


async def test_volumes_attach_to_endpoints(api: httpx.AsyncClient) -> None:
    a = await volume(api)
    b = await volume(api, dataCenterId="US-GA-1")
    e = await endpoint(api, networkVolumeId=a["id"], networkVolumeIds=[a["id"], b["id"]])
    assert e["networkVolumeId"] == a["id"] and e["networkVolumeIds"] == [a["id"], b["id"]]
    await refused(api.delete(f"/v1/networkvolumes/{b['id']}"), f"endpoint {e['id']}")


async def test_deploy_goes_the_same_way(api: httpx.AsyncClient, emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="by-deploy", workers={"min": 1, "idleTimeout": 2.5})
    emu.deploy(handler=lambda job: {"py": job["input"]}, endpoint_id="py")
    listed = {e["id"]: e for e in await ok(api.get("/v1/endpoints?includeTemplate=true"))}
    assert set(listed) == {"by-deploy", "py"}
    assert listed["by-deploy"]["template"]["imageName"] == "echo"
    assert listed["by-deploy"]["template"]["isServerless"] is True
    assert listed["by-deploy"]["workersMin"] == 1 and listed["by-deploy"]["idleTimeout"] == 3
    assert emu.jobs.endpoints["by-deploy"].idle_timeout == 2.5  # the exact value still rules
    assert listed["py"]["template"]["imageName"] == "python/py"
    result = await ok(api.post("/v2/py/runsync", json={"input": {"a": 1}}))
    assert result["output"] == {"py": {"a": 1}}
    template_id = listed["py"]["templateId"]
    emu.undeploy("py")
    await refused(api.get(f"/v1/templates/{template_id}"), "not found", status=404)
    assert [e["id"] for e in await ok(api.get("/v1/endpoints"))] == ["by-deploy"]


async def test_deploy_names_an_endpoint_after_what_it_runs(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    def summarise(job: dict[str, Any]) -> str:
        return "short"

    by_handler = emu.deploy(handler=summarise)
    by_image = emu.deploy("echo")
    names = {e["id"]: e["name"] for e in await ok(api.get("/v1/endpoints"))}
    assert names == {by_handler: "summarise", by_image: "echo"}
