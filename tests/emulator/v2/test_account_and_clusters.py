"""SSH keys, ECR delegations and instant clusters: state only v2 has, kept across restarts."""

from __future__ import annotations

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management.pod_status import PROVISIONING_S, STARTING_S

from ..conftest import advance
from .conftest import GPU, ok, problem

pytestmark = pytest.mark.anyio
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI me@laptop"
ARN = "arn:aws:ecr:us-east-2:418399314813:repository/team/app:v3"


async def test_ssh_keys_are_replaced_whole(api: httpx.AsyncClient) -> None:
    assert await ok(api.get("/v2/account/ssh-keys")) == {"keys": []}
    assert await ok(api.put("/v2/account/ssh-keys", json={"keys": [KEY, KEY]})) == {"keys": [KEY]}
    await problem(api.put("/v2/account/ssh-keys", json={"keys": ["not a key"]}), 422, "keys.0")
    assert await ok(api.get("/v2/account/ssh-keys")) == {"keys": [KEY]}


async def test_delegations(api: httpx.AsyncClient) -> None:
    made = await ok(
        api.post("/v2/registries/delegations", json={"resource": ARN, "name": "d"}), 201
    )
    assert (made["awsRegion"], made["awsUser"]) == ("us-east-2", "418399314813")
    assert (made["repository"], made["tag"]) == ("team/app", "v3")
    assert made["dockerRegistryUri"] == "418399314813.dkr.ecr.us-east-2.amazonaws.com"
    assert (await ok(api.get("/v2/registries/delegations")))["delegations"] == [made]
    await problem(
        api.post("/v2/registries/delegations", json={"resource": "arn:x"}), 400, "resource"
    )
    r = await api.delete(f"/v2/registries/delegations/{made['id']}")
    assert r.status_code == 204
    await problem(api.delete(f"/v2/registries/delegations/{made['id']}"), 404, "not found")


async def test_a_cluster_comes_up_and_goes(api: httpx.AsyncClient, emu: Emulator) -> None:
    body = {
        "name": "train",
        "type": "RAY",
        "image": "rayproject/ray",
        "dataCenterIds": ["US-TX-3"],
        "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 8, "podCount": 3},
    }
    made = await ok(api.post("/v2/clusters", json=body), 201)
    assert made["pods"] == {"total": 3, "byStatus": {"PROVISIONING": 3}}
    assert made["dataCenterId"] == "US-TX-3" and "sshEndpoint" not in made["primary"]
    await advance(emu, PROVISIONING_S + STARTING_S)
    up = await ok(api.get(f"/v2/clusters/{made['id']}"))
    assert up["pods"]["byStatus"] == {"RUNNING": 3} and up["primary"]["sshEndpoint"]
    pods = (await ok(api.get(f"/v2/clusters/{made['id']}/pods")))["pods"]
    assert [p["cluster"]["role"] for p in pods] == ["RAY_HEAD", "RAY_WORKER", "RAY_WORKER"]
    assert all(p["image"] == "rayproject/ray" and p["gpu"]["count"] == 8 for p in pods)
    renamed = await ok(api.patch(f"/v2/clusters/{made['id']}", json={"name": "t2"}))
    assert renamed["name"] == "t2"
    await problem(api.patch(f"/v2/clusters/{made['id']}", json={}), 422)
    bad = {**body, "compute": {**body["compute"], "gpuTypeId": "NVIDIA Nope"}}
    await problem(api.post("/v2/clusters", json=bad), 400, "compute.gpuTypeId")
    assert len((await ok(api.get("/v2/clusters")))["clusters"]) == 1
    assert (await api.delete(f"/v2/clusters/{made['id']}")).status_code == 204
    await problem(api.get(f"/v2/clusters/{made['id']}"), 404)


async def test_v2_state_survives_a_restart(
    make_emulator: object, store_kind: str, tmp_path: object
) -> None:
    if store_kind != "sqlite":
        pytest.skip("only a database outlives the process")
    from pathlib import Path

    from nbext.emulator import FakeClock

    from ..conftest import KEY as API_KEY
    from ..conftest import client_for

    db = Path(str(tmp_path)) / "restart.db"
    first = make_emulator(demos=False, db=db, clock=FakeClock())  # type: ignore[operator]
    async with client_for(first) as c:
        await ok(c.put("/v2/account/ssh-keys", json={"keys": [KEY]}))
        t = await ok(
            c.post("/v2/templates", json={"name": "t", "image": "i", "startSsh": False}), 201
        )
        body = {
            "name": "c",
            "type": "TRAINING",
            "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
        }
        cluster = await ok(c.post("/v2/clusters", json=body), 201)
    first.close()
    second = make_emulator(demos=False, db=db, clock=FakeClock(), api_key=API_KEY)  # type: ignore[operator]
    async with client_for(second) as c:
        assert (await ok(c.get("/v2/account/ssh-keys")))["keys"] == [KEY]
        assert (await ok(c.get(f"/v2/templates/{t['id']}")))["startSsh"] is False
        assert (await ok(c.get(f"/v2/clusters/{cluster['id']}")))["name"] == "c"
