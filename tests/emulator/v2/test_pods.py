"""``/v2/pods``: observed status on the fake clock, actions, updates, logs that can be followed."""

from __future__ import annotations

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management import catalog
from nbext.emulator.domain.management.pod_status import PROVISIONING_S, STARTING_S

from ..conftest import advance
from .conftest import GPU, events, ok, pod, problem, template

pytestmark = pytest.mark.anyio


async def test_a_new_pod_provisions_then_starts_then_runs(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    p = await pod(api, gpu={"id": GPU, "count": 2}, ports=["8888/http", "22/tcp"])
    assert p["status"] == "PROVISIONING" and p["actions"] == ["stop", "terminate"]
    assert p["createdAt"] == "2026-01-01T00:00:00.000Z" and p["runtime"] is None
    assert p["gpu"] == {"id": GPU, "count": 2} and "cpu" not in p
    assert p["cost"] == round(catalog.gpu(GPU).secure_price * 2, 4)
    await advance(emu, PROVISIONING_S)
    assert (await ok(api.get(f"/v2/pods/{p['id']}")))["status"] == "STARTING"
    await advance(emu, STARTING_S)
    running = await ok(api.get(f"/v2/pods/{p['id']}"))
    assert running["status"] == "RUNNING"
    assert running["actions"] == ["stop", "restart", "terminate"]
    assert running["runtime"]["uptime"] == int(PROVISIONING_S + STARTING_S)
    assert len(running["runtime"]["gpus"]) == 2
    assert running["ssh"]["proxy"]["host"] == "ssh.runpod.io"
    assert running["ssh"]["direct"]["port"] > 0  # 22/tcp is published
    assert await ok(api.get("/v2/pods")) == {"pods": [running]}


async def test_actions_stop_start_restart_terminate(api: httpx.AsyncClient, emu: Emulator) -> None:
    p = await pod(api)
    url = f"/v2/pods/{p['id']}/action"
    stopped = await ok(api.post(url, json={"action": "stop"}))
    assert stopped["status"] == "EXITED" and stopped["actions"] == ["start", "terminate"]
    assert stopped["cost"] == 0.0 and stopped["startedAt"] is None
    await problem(api.post(url, json={"action": "restart"}), 409, "EXITED", "start, terminate")
    started = await ok(api.post(url, json={"action": "start"}))
    assert started["status"] == "STARTING"  # no provisioning after the first start
    await advance(emu, STARTING_S)
    assert (await ok(api.get(f"/v2/pods/{p['id']}")))["status"] == "RUNNING"
    restarted = await ok(api.post(url, json={"action": "restart"}))
    assert restarted["status"] == "STARTING"
    r = await api.post(url, json={"action": "terminate"})
    assert r.status_code == 204 and not r.content
    await problem(api.get(f"/v2/pods/{p['id']}"), 404, "not found")
    assert (await api.get(f"/v1/pods/{p['id']}")).status_code == 404


async def test_a_locked_pod_cannot_be_stopped(api: httpx.AsyncClient, emu: Emulator) -> None:
    p = await pod(api)
    locked = await ok(api.patch(f"/v2/pods/{p['id']}", json={"locked": True}))
    assert locked["locked"] is True and "stop" not in locked["actions"]
    await problem(api.post(f"/v2/pods/{p['id']}/action", json={"action": "stop"}), 409, "locked")
    assert (await ok(api.get(f"/v2/pods/{p['id']}")))["status"] != "EXITED"


async def test_update_changes_the_container_and_keeps_the_rest(api: httpx.AsyncClient) -> None:
    p = await pod(api, env={"A": "1"})
    body = {"name": "renamed", "image": "img:2", "args": "python -m serve --port 80"}
    changed = await ok(api.patch(f"/v2/pods/{p['id']}", json=body))
    assert (changed["name"], changed["image"]) == ("renamed", "img:2")
    assert changed["args"] == "python -m serve --port 80" and changed["env"] == {"A": "1"}
    v1 = await ok(api.get(f"/v1/pods/{p['id']}"))
    assert v1["dockerStartCmd"] == ["python", "-m", "serve", "--port", "80"]


async def test_create_from_a_template_spreads_its_settings(api: httpx.AsyncClient) -> None:
    t = await template(api, env={"FROM": "template", "X": "t"}, ports=["8888/http"], disk=30)
    body = {"name": "p", "templateId": t["id"], "env": {"X": "body"}, "gpu": {"id": GPU}}
    made = await ok(api.post("/v2/pods", json=body), 201)
    assert made["image"] == "echo" and made["template"] == t["id"]
    assert made["env"] == {"FROM": "template", "X": "body"}
    assert made["ports"] == ["8888/http"] and made["disk"] == 30


async def test_cpu_pods_and_start_flags(api: httpx.AsyncClient) -> None:
    await ok(api.put("/v2/account/ssh-keys", json={"keys": ["ssh-ed25519 AAAAC3 me@laptop"]}))
    body = {"cpu": {"id": "cpu3g", "vcpuCount": 4}, "startSsh": True, "startJupyter": True}
    made = await ok(
        api.post("/v2/pods", json={"name": "c", "image": "img", **body}),
        201,
    )
    assert made["cpu"] == {"id": "cpu3g", "vcpuCount": 4, "memory": 16} and "gpu" not in made
    assert made["cudaVersion"] is None
    assert made["env"]["PUBLIC_KEY"] == "ssh-ed25519 AAAAC3 me@laptop"
    assert made["env"]["JUPYTER_PASSWORD"]


async def test_logs_tell_the_pods_life_and_can_be_followed(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    p = await pod(api, ports=["8888/http"])
    logs = f"/v2/pods/{p['id']}/logs"
    first = await events(api, logs)
    assert [e["line"] for e in first][:2] == [
        f"pod {p['id']}: 1 x {GPU} in EU-RO-1",
        "pulling image img",
    ]
    assert all(e["source"] == "system" for e in first)
    await advance(emu, PROVISIONING_S + STARTING_S)
    cursor = first[-1]["id"]
    newer = await events(api, logs, **{"Last-Event-ID": cursor})
    assert [e["line"] for e in newer] == [
        "image img pulled",
        "starting container",
        "container started",
        "Jupyter Lab listening on 8888/http",
    ]
    await ok(api.post(f"/v2/pods/{p['id']}/action", json={"action": "stop"}))
    after = await events(api, logs, **{"Last-Event-ID": newer[-1]["id"]})
    assert [e["line"] for e in after] == ["stopping container", "container exited with code 0"]
    containers = await events(api, f"{logs}?source=container&tail=2")
    assert [e["line"] for e in containers] == [
        "Jupyter Lab listening on 8888/http",
        "container exited with code 0",
    ]
    since = await events(api, f"{logs}?since=2026-01-01T00:00:08Z")
    assert since[0]["line"] == "container started"
    assert await events(api, f"{logs}?tail=0") == []


async def test_cluster_members_are_pods_but_not_managed_here(api: httpx.AsyncClient) -> None:
    body = {
        "name": "c",
        "type": "SLURM",
        "image": "img",
        "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 4, "podCount": 2},
    }
    cluster = await ok(api.post("/v2/clusters", json=body), 201)
    assert (await ok(api.get("/v2/pods")))["pods"] == []
    members = (await ok(api.get("/v2/pods?includeClusterPods=true")))["pods"]
    assert [m["cluster"]["rank"] for m in members] == [0, 1]
    assert [m["cluster"]["role"] for m in members] == ["SLURM_CONTROLLER", "SLURM_COMPUTE"]
    member = members[0]["id"]
    assert (await ok(api.get(f"/v2/pods/{member}")))["cluster"]["id"] == cluster["id"]
    await problem(api.patch(f"/v2/pods/{member}", json={"name": "x"}), 409, "/v2/clusters")
    await problem(api.delete(f"/v2/pods/{member}"), 409, "cluster")
    logs = await events(api, f"/v2/pods/{member}/logs")
    assert logs[0]["line"] == f"pod {member}: 4 x {GPU} in EU-RO-1"
