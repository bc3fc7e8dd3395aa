"""The management resources over REST v2 (the default), against the emulator's ``/v2``.

The records are v2's (``nbext.models.v2``), their fields named as v2 names them in snake
case, and the keywords are v2's fields: nested ones given as mappings (either spelling)
or as the models themselves. The shared-state tests make a record through one
interface's client and read it through the other's: one record, one shape.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from nbext.client import BadRequest, Conflict, NotFound
from nbext.models import v2 as m2

from .conftest import Recorder, V2Harness, call, recorded_client

pytestmark = pytest.mark.anyio

GPU = "NVIDIA GeForce RTX 4090"


async def test_an_endpoint_record_is_v2s_with_its_type_and_request_urls(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="srv", image="echo", serverless=True)
    ep = await v2.call(
        c.endpoints.create,
        template_id=tpl.id,
        name="echo-ep",
        gpu=m2.EndpointGpu(pools=["ADA_24"], count=2),
        workers={"max": 2, "idleTimeout": 30},  # a mapping may use the wire spelling too
        scaling={"type": "QUEUE_DELAY", "queue_delay": 3},
        execution_timeout_ms=60_000,
        env={"MODE": "x"},
    )
    assert isinstance(ep, m2.Endpoint) and ep.id and ep.type == "QUEUE"
    assert ep.gpu is not None and (ep.gpu.pools, ep.gpu.count) == (["ADA_24"], 2)
    assert (ep.workers.min, ep.workers.max, ep.workers.idle_timeout) == (0, 2, 30)
    assert (ep.scaling.type, ep.scaling.queue_delay) == ("QUEUE_DELAY", 3)
    assert (ep.timeout, ep.image, ep.env) == (60_000, "echo", {"MODE": "x"})
    urls = ep.request_urls
    assert urls is not None and urls.run_sync is not None and urls.health is not None
    assert urls.run_sync.endswith(f"/v2/{ep.id}/runsync") and urls.base is None
    for v1_only in ("workersMax", "gpuTypeIds", "templateId", "scalerType", "template_id"):
        assert v1_only not in ep.to_wire() and not hasattr(ep, v1_only)
    got = await v2.call(c.endpoints.get, ep.id)
    assert got.to_wire() == ep.to_wire()
    updated = await v2.call(c.endpoints.update, ep.id, workers={"min": 1}, flashboot="FLASHBOOT")
    assert (updated.workers.min, updated.workers.max, updated.flashboot) == (1, 2, "FLASHBOOT")
    assert [e.id for e in await v2.call(c.endpoints.list)] == [ep.id]
    result = await v2.call(c.endpoint(ep.id).run_sync, {"hi": 1}, wait=5, timeout=10)
    assert result.output == {"hi": 1}
    await v2.call(c.endpoints.delete, ep.id)
    assert await v2.call(c.endpoints.list) == []


async def test_a_cpu_endpoint_has_cpu_and_no_gpu(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="cpu", image="echo", serverless=True)
    ep = await v2.call(
        c.endpoints.create, template_id=tpl.id, cpu=[{"id": "cpu3c", "vcpu_count": 4}]
    )
    assert ep.gpu is None and ep.cpu is not None
    assert [(x.id, x.vcpu_count) for x in ep.cpu] == [("cpu3c", 4)]
    assert ep.name == tpl.id  # the template's id when no name is given


async def test_templates_over_v2(v2: V2Harness) -> None:
    c = v2.client
    t = await v2.call(
        c.templates.create,
        name="full",
        image="img:2",
        disk=10,
        args="python serve.py --name 'a b'",
        env={"MODE": "prod"},
        ports=["8000/http"],
        mounts={"persistent": {"size": 20, "path": "/data"}},
        start_ssh=False,
    )
    assert isinstance(t, m2.Template) and t.id
    assert (t.name, t.image, t.disk, t.args) == (
        "full",
        "img:2",
        10,
        "python serve.py --name 'a b'",
    )
    assert t.mounts is not None and t.mounts.persistent == m2.resources.PersistentMount(
        size=20, path="/data"
    )
    assert (t.env, t.ports, t.start_ssh, t.serverless, t.public) == (
        {"MODE": "prod"},
        ["8000/http"],
        False,
        False,
        False,
    )
    assert (await v2.call(c.templates.get, t.id)).to_wire() == t.to_wire()
    assert [x.id for x in await v2.call(c.templates.list)] == [t.id]
    patched = await v2.call(c.templates.update, t.id, env={"MODE": "dev"}, name="renamed")
    assert (patched.env, patched.name, patched.image) == ({"MODE": "dev"}, "renamed", "img:2")
    assert await v2.call(c.templates.delete, t.id) is None
    with pytest.raises(NotFound) as info:
        await v2.call(c.templates.get, t.id)
    assert f"template {t.id!r}" in str(info.value) and "GET templates/" in str(info.value)


async def test_v2_problem_details_become_the_clients_errors(v2: V2Harness) -> None:
    c = v2.client
    with pytest.raises(BadRequest) as info:  # 422 unknown field, from the service
        await v2.call(c.templates.create, name="x", image="i", extra_body={"colour": "red"})
    assert info.value.status == 422 and info.value.sent is True
    assert "colour" in str(info.value) and "unknown field" in str(info.value)
    with pytest.raises(BadRequest) as info:  # a value the reference forbids, by its name
        await v2.call(c.templates.create, name="x", image="i", disk=0)
    assert info.value.status == 422 and "disk" in str(info.value)
    await v2.call(c.templates.create, name="same", image="a")
    with pytest.raises(BadRequest) as info:  # 400 from a rule about other records
        await v2.call(c.templates.create, name="same", image="b")
    assert info.value.status == 400 and "same" in str(info.value)
    assert [t.image for t in await v2.call(c.templates.list)] == ["a"]


async def test_pods_over_v2_create_act_and_terminate(v2: V2Harness) -> None:
    c = v2.client
    pod = await v2.call(
        c.pods.create,
        name="trainer",
        image="img:1",
        gpu={"id": GPU, "count": 2},
        args="sleep infinity",
        env={"A": "1"},
        mounts=m2.Mounts(persistent={"size": 20, "path": "/workspace"}),  # type: ignore[arg-type]
    )
    assert isinstance(pod, m2.Pod) and pod.id
    assert (pod.name, pod.image, pod.status) == ("trainer", "img:1", "PROVISIONING")
    assert pod.gpu is not None and (pod.gpu.id, pod.gpu.count) == (GPU, 2)
    assert pod.args == "sleep infinity" and pod.env == {"A": "1"} and pod.cost > 0
    assert [p.id for p in await v2.call(c.pods.list)] == [pod.id]
    await v2.advance(10)
    running = await v2.call(c.pods.get, pod.id)
    assert running.status == "RUNNING" and running.actions == ["stop", "restart", "terminate"]

    stopped = await v2.call(c.pods.stop, pod.id)
    assert stopped.status == "EXITED" and stopped.cost == 0
    with pytest.raises(Conflict) as info:  # v2 says which actions the status allows
        await v2.call(c.pods.stop, pod.id)
    assert "start, terminate" in str(info.value)
    assert (await v2.call(c.pods.start, pod.id)).status in ("STARTING", "RUNNING")
    renamed = await v2.call(c.pods.update, pod.id, name="renamed", locked=True)
    assert renamed.name == "renamed" and renamed.locked is True
    await v2.call(c.pods.update, pod.id, locked=False)
    assert await v2.call(c.pods.delete, pod.id) is None
    with pytest.raises(NotFound):
        await v2.call(c.pods.get, pod.id)


async def test_a_v2_pod_needs_a_gpu_or_a_cpu(v2: V2Harness) -> None:
    c = v2.client
    with pytest.raises(BadRequest) as info:
        await v2.call(c.pods.create, image="img:1")
    assert info.value.status in (400, 422) and "gpu" in str(info.value)
    cpu = await v2.call(c.pods.create, image="img:1", cpu={"id": "cpu3c", "vcpu_count": 4})
    assert cpu.cpu is not None and (cpu.cpu.id, cpu.cpu.vcpu_count, cpu.gpu) == ("cpu3c", 4, None)


async def test_volumes_and_registries_over_v2(v2: V2Harness) -> None:
    c = v2.client
    vol = await v2.call(c.network_volumes.create, name="data", size=50, data_center="EU-RO-1")
    assert isinstance(vol, m2.NetworkVolume)
    assert (vol.name, vol.size, vol.data_center) == ("data", 50, "EU-RO-1")
    assert (await v2.call(c.network_volumes.update, vol.id, size=60)).size == 60
    assert [v.id for v in await v2.call(c.network_volumes.list)] == [vol.id]
    await v2.call(c.network_volumes.delete, vol.id)
    assert await v2.call(c.network_volumes.list) == []

    auth = await v2.call(c.registry_auths.create, name="ghcr", username="me", password="pw-123")
    assert isinstance(auth, m2.Registry) and auth.name == "ghcr"
    assert (await v2.call(c.registry_auths.get, auth.id)).name == "ghcr"
    assert [a.id for a in await v2.call(c.registry_auths.list)] == [auth.id]
    await v2.call(c.registry_auths.delete, auth.id)
    with pytest.raises(NotFound):
        await v2.call(c.registry_auths.get, auth.id)


async def test_billing_over_v2(v2: V2Harness) -> None:
    c = v2.client
    pod = await v2.call(c.pods.create, image="img:1", gpu={"id": GPU})
    await v2.advance(3600)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    window = {"start_time": start, "end_time": start + timedelta(days=1)}
    records = await v2.call(c.billing.pods, **window)
    assert records and all(isinstance(r, m2.BillingRecord) for r in records)
    assert {(r.model_extra or {}).get("podId") for r in records} == {pod.id}
    assert sum(r.total_amount for r in records) > 0
    assert await v2.call(c.billing.pods, **window, pod_id="someone-else") == []
    summary = await v2.call(c.billing.summary, **window)
    assert sum(r.amounts().get("podGpuAmount", 0) for r in summary) == pytest.approx(
        sum(r.amounts().get("gpuAmount", 0) for r in records)
    )
    assert await v2.call(c.billing.serverless, last_n=2) == []
    assert await v2.call(c.billing.network_volumes, **window) == []
    with pytest.raises(BadRequest) as info:
        await v2.call(c.billing.summary, last_n=3, start_time=start)
    assert "not both" in str(info.value) and info.value.sent is False


async def test_cluster_pods_are_listed_when_asked(v2: V2Harness) -> None:
    c = v2.client
    await v2.call(
        c.clusters.create, name="c", type="RAY", gpu_type_id=GPU, gpu_count_per_pod=1, pod_count=2
    )
    assert await v2.call(c.pods.list) == []
    members = await v2.call(c.pods.list, include_cluster_pods=True)
    assert len(members) == 2 and all(p.cluster is not None for p in members)


# ---- what goes over the wire ----------------------------------------------------------------


async def test_a_v2_pod_create_sends_v2s_nested_body(flavour: str) -> None:
    recorder = Recorder(201, {"id": "p1", "name": "n", "status": "PROVISIONING"})
    client = recorded_client(flavour == "async", recorder)
    pod = await call(
        client,
        client.pods.create,
        name="n",
        image="img:1",
        gpu={"id": GPU, "count": 2, "allowed_cuda_versions": ["12.8"]},
        args="python -c 'print(1)'",
        mounts={"network": [{"volume_id": "vol1", "path": "/data"}]},
        cloud="COMMUNITY",
        start_ssh=False,
        extra_body={"futureFlag": True},
    )
    assert str(recorder.last.url) == "https://mgmt.example/v2/pods"
    assert recorder.last_json() == {
        "name": "n",
        "image": "img:1",
        "gpu": {"id": GPU, "count": 2, "allowedCudaVersions": ["12.8"]},
        "args": "python -c 'print(1)'",
        "mounts": {"network": [{"volumeId": "vol1", "path": "/data"}]},
        "cloud": "COMMUNITY",
        "startSsh": False,
        "futureFlag": True,
    }
    assert pod.id == "p1" and pod.status == "PROVISIONING"
    stop = Recorder(200, {"id": "p1", "name": "n", "status": "EXITED"})
    client = recorded_client(flavour == "async", stop)
    assert (await call(client, client.pods.stop, "p1")).status == "EXITED"
    assert str(stop.last.url) == "https://mgmt.example/v2/pods/p1/action"
    assert stop.last_json() == {"action": "stop"}


async def test_an_update_leaves_out_what_is_not_given_and_clears_what_is_none(
    v2: V2Harness,
) -> None:
    """NOT_GIVEN (an update's default) leaves a field alone; None is JSON null, which
    clears a field v2 lets be null (a container's ``registry``)."""
    import nbext

    assert nbext.NOT_GIVEN is nbext.client.NOT_GIVEN and not nbext.NOT_GIVEN
    assert repr(nbext.NOT_GIVEN) == "NOT_GIVEN"
    c = v2.client
    auth = await v2.call(c.registry_auths.create, name="ghcr", username="me", password="pw-123")
    tpl = await v2.call(c.templates.create, name="srv", image="echo", serverless=True)
    made = {"template_id": tpl.id, "gpu": {"pools": ["ADA_24"]}, "registry": auth.id}
    ep = await v2.call(c.endpoints.create, **made)
    assert ep.registry == auth.id
    renamed = await v2.call(c.endpoints.update, ep.id, name="kept")
    assert (renamed.name, renamed.registry) == ("kept", auth.id)
    cleared = await v2.call(c.endpoints.update, ep.id, registry=None)
    assert (cleared.name, cleared.registry) == ("kept", None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'timeout'"):
        await v2.call(c.endpoints.update, ep.id, timeout=9000)  # timeout is HTTP seconds
