"""``/v2/serverless``: endpoints the job interface serves, their workers, releases and logs."""

from __future__ import annotations

from urllib.parse import unquote

import httpx
import pytest

from nbext.emulator import Emulator

from .conftest import endpoint, events, ok, problem, template

pytestmark = pytest.mark.anyio


async def test_create_serves_jobs_at_the_request_urls(api: httpx.AsyncClient) -> None:
    e = await endpoint(api, workers={"min": 0, "max": 2, "idleTimeout": 9}, timeout=60_000)
    assert e["type"] == "QUEUE" and e["image"] == "echo"
    assert e["workers"] == {"min": 0, "max": 2, "idleTimeout": 9} and e["timeout"] == 60_000
    assert e["scaling"] == {"type": "QUEUE_DELAY", "queueDelay": 4.0}
    assert e["gpu"]["pools"] == ["AMPERE_48"] and e["gpu"]["count"] == 1
    assert e["flashboot"] == "OFF" and e["createdAt"] == "2026-01-01T00:00:00.000Z"
    urls = e["requestUrls"]
    assert urls["run"] == f"http://emulator/v2/{e['id']}/run"
    job = await ok(api.post(urls["run"], json={"input": {"q": 1}}))
    assert unquote(urls["status"]) == f"http://emulator/v2/{e['id']}/status/{{job_id}}"
    status = await ok(api.get(unquote(urls["status"]).format(job_id=job["id"])))
    assert status["id"] == job["id"]
    assert (await ok(api.get(urls["health"])))["jobs"] is not None


async def test_a_template_is_copied_so_its_later_edits_do_not_reach_the_endpoint(
    api: httpx.AsyncClient,
) -> None:
    t = await template(api, serverless=True, env={"A": "t"}, image="echo")
    body = {
        "name": "from-template",
        "type": "QUEUE",
        "templateId": t["id"],
        "env": {"B": "body"},
        "scaling": {"type": "REQUEST_COUNT", "requestCount": 3},
        "cpu": [{"id": "cpu3c", "vcpuCount": 4}],
    }
    made = await ok(api.post("/v2/serverless", json=body), 201)
    assert made["env"] == {"A": "t", "B": "body"} and made["gpu"] is None
    assert made["cpu"] == [{"id": "cpu3c", "vcpuCount": 4, "memory": 8}]
    assert "idleTimeout" not in made["workers"]
    await ok(api.patch(f"/v2/templates/{t['id']}", json={"image": "other"}))
    assert (await ok(api.get(f"/v2/serverless/{made['id']}")))["image"] == "echo"
    replaced = await ok(api.patch(f"/v2/serverless/{made['id']}", json={"env": {"C": "c"}}))
    assert replaced["env"] == {"C": "c"} and replaced["image"] == "echo"
    r = await api.delete(f"/v2/serverless/{made['id']}")
    assert r.status_code == 204
    names = [x["name"] for x in (await ok(api.get("/v2/templates")))["templates"]]
    assert names == [t["name"]]  # the endpoint's own template went with it


async def test_an_image_change_is_a_release(api: httpx.AsyncClient, emu: Emulator) -> None:
    e = await endpoint(api)
    first = await ok(api.get(f"/v2/serverless/{e['id']}/releases"))
    assert first["endpointVersion"] == 0 and len(first["releases"]) == 1
    await emu.advance_async(60)
    changed = await ok(api.patch(f"/v2/serverless/{e['id']}", json={"image": "echo:2"}))
    assert changed["image"] == "echo:2"
    after = await ok(api.get(f"/v2/serverless/{e['id']}/releases"))
    assert after["endpointVersion"] == 1
    newest = after["releases"][0]
    assert newest["version"] == 1 and newest["createdAt"] == "2026-01-01T00:01:00.000Z"
    assert newest["diff"] == [{"field": "image", "old": "echo", "new": "echo:2"}]
    assert len((await ok(api.get("/v2/templates")))["templates"]) == 1  # old copy gone


async def test_workers_and_their_logs(api: httpx.AsyncClient) -> None:
    e = await endpoint(api, workers={"min": 1, "max": 1})
    listed = await ok(api.get(f"/v2/serverless/{e['id']}/workers"))
    assert listed["summary"] == {
        "running": 0,
        "idle": 1,
        "initializing": 0,
        "throttled": 0,
        "unhealthy": 0,
        "total": 1,
    }
    worker = listed["workers"][0]
    assert worker["status"] == "IDLE" and worker["gpuTypeId"] and worker["image"] == "echo"
    done = await ok(api.post(e["requestUrls"]["runSync"], json={"input": {"x": 1}}))
    logs = f"/v2/serverless/{e['id']}/workers/{worker['id']}/logs"
    lines = [x["line"] for x in await events(api, logs)]
    assert lines[0].startswith(f"worker {worker['id']} started")
    assert lines[1:] == [f"job {done['id']} started", f"job {done['id']} COMPLETED after 0.000 s"]
    await problem(api.get(f"/v2/serverless/{e['id']}/workers/nobody/logs"), 404, "nobody")


async def test_refusals_name_the_field(api: httpx.AsyncClient) -> None:
    base = {"name": "x", "type": "QUEUE", "image": "echo"}
    scaling = {"type": "QUEUE_DELAY", "queueDelay": 4}
    await problem(
        api.post("/v2/serverless", json={**base, "scaling": scaling}), 422, "gpu: an endpoint"
    )
    lb = {**base, "type": "LOAD_BALANCER", "scaling": scaling, "gpu": {"pools": ["ADA_24"]}}
    await problem(api.post("/v2/serverless", json=lb), 422, "type:", "QUEUE")
    pools = {**base, "scaling": scaling, "gpu": {"pools": ["NOPE"]}}
    await problem(api.post("/v2/serverless", json=pools), 422, "gpu.pools.0: unknown pool")
    excluded = {
        **base,
        "scaling": scaling,
        "gpu": {"pools": ["ADA_24"], "excludedTypes": ["NVIDIA A40"]},
    }
    await problem(api.post("/v2/serverless", json=excluded), 400, "gpu.excludedTypes.0")
    await problem(
        api.post(
            "/v2/serverless", json={**pools, "gpu": {"pools": ["ADA_24"]}, "templateId": "nope"}
        ),
        404,
        "templateId",
    )
    assert (await ok(api.get("/v2/serverless")))["endpoints"] == []
    assert (await ok(api.get("/v2/templates")))["templates"] == []
