"""One domain behind both versions: what v1 makes, v2 reads and changes, and the other way."""

from __future__ import annotations

import httpx
import pytest

from .conftest import GPU, endpoint, ok, pod, template, volume

pytestmark = pytest.mark.anyio


async def test_a_template_made_through_v1_is_the_template_of_v2(api: httpx.AsyncClient) -> None:
    body = {
        "name": "from-v1",
        "imageName": "me/app:1",
        "dockerStartCmd": ["python", "app.py"],
        "env": {"K": "v"},
        "volumeInGb": 20,
    }
    made = await ok(api.post("/v1/templates", json=body))
    seen = await ok(api.get(f"/v2/templates/{made['id']}"))
    assert seen["name"] == "from-v1" and seen["image"] == "me/app:1"
    assert seen["args"] == "python app.py" and seen["env"] == {"K": "v"}
    assert seen["mounts"] == {"persistent": {"size": 20, "path": "/workspace"}}
    assert seen["ports"] == ["8888/http", "22/tcp"] and seen["disk"] == 50
    assert (await ok(api.get("/v2/templates")))["templates"] == [seen]
    await ok(api.patch(f"/v2/templates/{made['id']}", json={"image": "me/app:2"}))
    assert (await ok(api.get(f"/v1/templates/{made['id']}")))["imageName"] == "me/app:2"


async def test_a_template_made_through_v2_is_the_template_of_v1(api: httpx.AsyncClient) -> None:
    made = await template(api, startSsh=False, allowedCudaVersions=["12.8"], public=True)
    v1 = await ok(api.get(f"/v1/templates/{made['id']}"))
    assert v1["imageName"] == "echo" and v1["isPublic"] is True and v1["ports"] == []
    await ok(api.patch(f"/v1/templates/{made['id']}", json={"name": "renamed"}))
    seen = await ok(api.get(f"/v2/templates/{made['id']}"))
    assert seen["name"] == "renamed" and seen["startSsh"] is False
    assert seen["allowedCudaVersions"] == ["12.8"]
    r = await api.delete(f"/v1/templates/{made['id']}")
    assert r.status_code == 204
    assert (await api.get(f"/v2/templates/{made['id']}")).status_code == 404


async def test_pods_are_shared(api: httpx.AsyncClient) -> None:
    v1 = await ok(api.post("/v1/pods", json={"imageName": "img", "name": "one"}), 201)
    v2 = await pod(api, name="two")
    listed = {p["id"]: p for p in (await ok(api.get("/v2/pods")))["pods"]}
    assert set(listed) == {v1["id"], v2["id"]}
    assert listed[v1["id"]]["gpu"]["id"] == v1["gpu"]["id"]
    assert {p["id"] for p in await ok(api.get("/v1/pods"))} == set(listed)
    await ok(api.post(f"/v1/pods/{v2['id']}/stop"))
    assert (await ok(api.get(f"/v2/pods/{v2['id']}")))["status"] == "EXITED"
    await ok(api.post(f"/v2/pods/{v1['id']}/action", json={"action": "stop"}))
    assert (await ok(api.get(f"/v1/pods/{v1['id']}")))["desiredStatus"] == "EXITED"


async def test_endpoints_are_shared_and_served(api: httpx.AsyncClient) -> None:
    t = await ok(
        api.post("/v1/templates", json={"name": "w", "imageName": "echo", "isServerless": True})
    )
    v1 = await ok(api.post("/v1/endpoints", json={"templateId": t["id"], "gpuTypeIds": [GPU]}))
    seen = await ok(api.get(f"/v2/serverless/{v1['id']}"))
    assert seen["image"] == "echo" and seen["gpu"]["pools"] == ["AMPERE_48"]
    assert seen["requestUrls"]["runSync"] == f"http://emulator/v2/{v1['id']}/runsync"
    done = await ok(api.post(seen["requestUrls"]["runSync"], json={"input": {"n": 1}}))
    assert done["status"] == "COMPLETED" and done["output"] == {"n": 1}
    v2 = await endpoint(api)
    assert {e["id"] for e in await ok(api.get("/v1/endpoints"))} == {v1["id"], v2["id"]}
    await ok(
        api.patch(
            f"/v2/serverless/{v2['id']}",
            json={"scaling": {"type": "QUEUE_DELAY", "queueDelay": 2.5}},
        )
    )
    assert (await ok(api.get(f"/v1/endpoints/{v2['id']}")))["scalerValue"] == 3
    await ok(api.patch(f"/v1/endpoints/{v2['id']}", json={"workersMax": 7, "scalerValue": 6}))
    seen = await ok(api.get(f"/v2/serverless/{v2['id']}"))
    assert seen["workers"]["max"] == 7 and seen["scaling"]["queueDelay"] == 6.0


async def test_volumes_and_registries_are_shared(api: httpx.AsyncClient) -> None:
    v1 = await ok(
        api.post("/v1/networkvolumes", json={"name": "a", "size": 50, "dataCenterId": "EU-SE-1"})
    )
    v2 = await volume(api, name="b")
    seen = {v["id"]: v for v in (await ok(api.get("/v2/network-volumes")))["networkVolumes"]}
    assert seen[v1["id"]] == {
        "id": v1["id"],
        "name": "a",
        "size": 50,
        "dataCenter": "EU-SE-1",
        "type": "STANDARD",
    }
    assert (await ok(api.get(f"/v1/networkvolumes/{v2['id']}")))["dataCenterId"] == "EU-RO-1"
    auth = await ok(
        api.post("/v1/containerregistryauth", json={"name": "r", "username": "u", "password": "p"})
    )
    assert (await ok(api.get("/v2/registries")))["registries"] == [{"id": auth["id"], "name": "r"}]
    made = await ok(
        api.post("/v2/registries", json={"name": "r2", "username": "u", "password": "p"}), 201
    )
    assert made["id"] in {a["id"] for a in await ok(api.get("/v1/containerregistryauth"))}
