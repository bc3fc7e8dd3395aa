"""The existing resources over REST v2, against the emulator's ``/v2``, four ways.

The Python surface is v1's (the same keywords, the same ``nbext.models`` records), so
these tests read like ``test_operations.py``; what differs is what v2 forces: nested
bodies, renamed fields, no reset, billing paths, problem+json errors. The shared-state
tests make a record through one version's client and read it through the other's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import nbext.models as m
from nbext.client import BadRequest, Conflict, NotFound, UnsupportedOperation
from nbext.models import v2 as v2m

from .conftest import Recorder, V1Harness, V2Harness, call, recorded_client

pytestmark = pytest.mark.anyio

GPU = "NVIDIA GeForce RTX 4090"


async def test_templates_over_v2_keep_v1_names_and_records(v2: V2Harness) -> None:
    c = v2.client
    t = await v2.call(
        c.templates.create,
        name="full",
        image_name="img:2",
        container_disk_in_gb=10,
        docker_start_cmd=["python", "serve.py", "--name", "a b"],
        env={"MODE": "prod"},
        ports=["8000/http"],
        volume_in_gb=20,
        volume_mount_path="/data",
    )
    assert isinstance(t, m.Template) and t.id
    assert (t.name, t.image_name, t.container_disk_in_gb) == ("full", "img:2", 10)
    assert t.docker_start_cmd == ["python", "serve.py", "--name", "a b"]
    assert (t.volume_in_gb, t.volume_mount_path) == (20, "/data")
    assert t.env == {"MODE": "prod"} and t.ports == ["8000/http"]
    assert t.is_serverless is False and t.is_public is False
    assert (await v2.call(c.templates.get, t.id)).to_wire() == t.to_wire()
    assert [x.id for x in await v2.call(c.templates.list)] == [t.id]

    patched = await v2.call(c.templates.update, t.id, env={"MODE": "dev"}, name="renamed")
    assert patched.env == {"MODE": "dev"} and patched.name == "renamed"
    assert patched.image_name == "img:2"  # only what was named changed
    assert await v2.call(c.templates.delete, t.id) is None
    with pytest.raises(NotFound) as info:
        await v2.call(c.templates.get, t.id)
    assert f"template {t.id!r}" in str(info.value) and "GET templates/" in str(info.value)


async def test_a_keyword_v2_has_no_field_for_is_refused_by_name(v2: V2Harness) -> None:
    c = v2.client
    with pytest.raises(BadRequest) as info:
        await v2.call(c.templates.create, name="x", image_name="i", readme="# hi")
    text = str(info.value)
    assert info.value.sent is False and "\n" not in text
    assert "readme" in text and "REST v2 has no field" in text
    with pytest.raises(BadRequest) as info:
        await v2.call(c.templates.create, name="x", image_name="i", volume_in_gb=5)
    assert "10 GB" in str(info.value) and info.value.sent is False
    assert await v2.call(c.templates.list) == []  # nothing was made


async def test_v2_problem_details_become_the_clients_errors(v2: V2Harness) -> None:
    c = v2.client
    with pytest.raises(BadRequest) as info:  # 422 unknown field, from the service
        await v2.call(c.templates.create, name="x", image_name="i", extra_body={"colour": "red"})
    assert info.value.status == 422 and info.value.sent is True
    assert "colour" in str(info.value) and "unknown field" in str(info.value)
    await v2.call(c.templates.create, name="same", image_name="a")
    with pytest.raises(BadRequest) as info:  # 400 from a rule about other records
        await v2.call(c.templates.create, name="same", image_name="b")
    assert info.value.status == 400 and "same" in str(info.value)
    assert [t.image_name for t in await v2.call(c.templates.list)] == ["a"]


async def test_pods_over_v2_create_act_and_terminate(v2: V2Harness) -> None:
    c = v2.client
    pod = await v2.call(
        c.pods.create,
        name="trainer",
        image_name="img:1",
        gpu_type_ids=[GPU],
        gpu_count=2,
        docker_start_cmd=["sleep", "infinity"],
        env={"A": "1"},
        volume_in_gb=20,
    )
    assert isinstance(pod, m.Pod) and pod.id
    assert (pod.name, pod.image, pod.desired_status) == ("trainer", "img:1", m.PodStatus.RUNNING)
    assert pod.gpu is not None and pod.gpu.count == 2
    assert pod.docker_start_cmd == ["sleep", "infinity"] and pod.env == {"A": "1"}
    assert pod.volume_in_gb == 20 and pod.cost_per_hr and pod.cost_per_hr > 0
    [listed] = await v2.call(c.pods.list)
    assert listed.id == pod.id and listed.gpu is not None
    # the display name and prices v1 shows come from v2's catalog, so frames keep them
    assert listed.gpu.display_name == "RTX 4090" and listed.gpu.secure_price
    assert (await v2.call(c.pods.get, pod.id)).gpu.display_name == "RTX 4090"

    stopped = await v2.call(c.pods.stop, pod.id)
    assert stopped.desired_status == m.PodStatus.EXITED and stopped.cost_per_hr == 0
    with pytest.raises(Conflict) as info:  # v2 says which actions the status allows
        await v2.call(c.pods.stop, pod.id)
    assert "start, terminate" in str(info.value)
    started = await v2.call(c.pods.start, pod.id)
    assert started.desired_status == m.PodStatus.RUNNING
    renamed = await v2.call(c.pods.update, pod.id, name="renamed", locked=True)
    assert renamed.name == "renamed" and renamed.locked is True
    await v2.call(c.pods.update, pod.id, locked=False)
    assert await v2.call(c.pods.delete, pod.id) is None
    with pytest.raises(NotFound):
        await v2.call(c.pods.get, pod.id)


async def test_pod_reset_has_no_v2_action_and_is_refused_in_one_line(v2: V2Harness) -> None:
    c = v2.client
    pod = await v2.call(c.pods.create, image_name="img:1", gpu_type_ids=[GPU])
    with pytest.raises(BadRequest) as info:
        await v2.call(c.pods.reset, pod.id)
    text = str(info.value)
    assert info.value.sent is False and "\n" not in text
    assert "REST v2 has no reset" in text and "pods.update" in text
    assert (await v2.call(c.pods.get, pod.id)).desired_status == m.PodStatus.RUNNING


async def test_a_v2_pod_needs_one_gpu_type_or_one_cpu_flavour(v2: V2Harness) -> None:
    c = v2.client
    with pytest.raises(BadRequest) as info:
        await v2.call(c.pods.create, image_name="img:1")
    assert "gpuTypeIds" in str(info.value) and info.value.sent is False
    cpu = await v2.call(
        c.pods.create,
        image_name="img:1",
        compute_type="CPU",
        cpu_flavor_ids=["cpu3c"],
        vcpu_count=4,
    )
    assert (cpu.cpu_flavor_id, cpu.vcpu_count, cpu.gpu) == ("cpu3c", 4, None)


async def test_volumes_and_registries_over_v2(v2: V2Harness) -> None:
    c = v2.client
    vol = await v2.call(c.network_volumes.create, name="data", size=50, data_center_id="EU-RO-1")
    assert isinstance(vol, m.NetworkVolume)
    assert (vol.name, vol.size, vol.data_center_id) == ("data", 50, "EU-RO-1")
    grown = await v2.call(c.network_volumes.update, vol.id, size=60)
    assert grown.size == 60
    assert [v.id for v in await v2.call(c.network_volumes.list)] == [vol.id]
    await v2.call(c.network_volumes.delete, vol.id)
    assert await v2.call(c.network_volumes.list) == []

    auth = await v2.call(c.registry_auths.create, name="ghcr", username="me", password="pw-123")
    assert isinstance(auth, m.ContainerRegistryAuth) and auth.name == "ghcr"
    assert (await v2.call(c.registry_auths.get, auth.id)).name == "ghcr"
    assert [a.id for a in await v2.call(c.registry_auths.list)] == [auth.id]
    await v2.call(c.registry_auths.delete, auth.id)
    with pytest.raises(NotFound):
        await v2.call(c.registry_auths.get, auth.id)


async def test_endpoints_over_v2_map_types_to_pools_and_back(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="srv", image_name="echo", is_serverless=True)
    ep = await v2.call(
        c.endpoints.create,
        template_id=tpl.id,
        name="echo-ep",
        gpu_type_ids=[GPU],
        workers_max=2,
        scaler_value=3,
        execution_timeout_ms=60_000,
    )
    assert isinstance(ep, m.Endpoint) and ep.id
    assert (ep.name, ep.workers_max, ep.scaler_value) == ("echo-ep", 2, 3)
    assert ep.gpu_type_ids == [GPU] and ep.execution_timeout_ms == 60_000
    got = await v2.call(c.endpoints.get, ep.id)
    assert got.gpu_type_ids == [GPU] and got.workers_max == 2
    updated = await v2.call(c.endpoints.update, ep.id, workers_min=1, flashboot=True)
    assert updated.workers_min == 1 and updated.workers_max == 2
    assert [e.id for e in await v2.call(c.endpoints.list)] == [ep.id]
    await v2.call(c.endpoints.delete, ep.id)
    assert await v2.call(c.endpoints.list) == []


async def test_billing_over_v2_keeps_v1_records_and_adds_summary(v2: V2Harness) -> None:
    c = v2.client
    pod = await v2.call(c.pods.create, image_name="img:1", gpu_type_ids=[GPU])
    await v2.advance(3600)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    window = {"start_time": start, "end_time": start + timedelta(days=1)}
    records = await v2.call(c.billing.pods, **window, grouping="podId")
    assert records and all(isinstance(r, m.BillingRecord) for r in records)
    assert {r.pod_id for r in records} == {pod.id} and sum(r.amount or 0 for r in records) > 0
    summary = await v2.call(c.billing.summary, **window)
    assert summary and isinstance(summary[0], v2m.BillingRecord)
    assert sum(r.amounts().get("podGpuAmount", 0) for r in summary) == pytest.approx(
        sum(r.amount or 0 for r in records)
    )
    assert await v2.call(c.billing.serverless, last_n=2) == []
    assert await v2.call(c.billing.endpoints, **window) == []
    assert await v2.call(c.billing.network_volumes, **window) == []
    with pytest.raises(BadRequest) as info:
        await v2.call(c.billing.pods, grouping="gpuTypeId")
    assert "grouping" in str(info.value) and info.value.sent is False
    with pytest.raises(BadRequest) as info:
        await v2.call(c.billing.summary, last_n=3, start_time=start)
    assert "not both" in str(info.value)


async def test_v2_only_operations_refuse_on_a_v1_client(v1: V1Harness) -> None:
    with pytest.raises(UnsupportedOperation) as info:
        await v1.call(v1.client.billing.summary)
    text = str(info.value)
    assert "needs the management interface REST v2" in text and "RUNPOD_REST_BASE_URL" in text
    assert "\n" not in text


# ---- one state, two versions ----------------------------------------------------------------


async def test_made_through_a_v1_client_read_through_a_v2_client(v1: V1Harness) -> None:
    other = v1.client_of("v2")
    try:
        t = await v1.call(
            v1.client.templates.create,
            name="shared",
            image_name="img:3",
            docker_start_cmd=["run", "it"],
            volume_in_gb=30,
        )
        pod = await v1.call(v1.client.pods.create, template_id=t.id, gpu_type_ids=[GPU])
        seen = await v1.call(other.templates.get, t.id)
        assert (seen.name, seen.image_name, seen.docker_start_cmd) == (
            "shared",
            "img:3",
            ["run", "it"],
        )
        assert (seen.volume_in_gb, seen.volume_mount_path) == (30, "/workspace")
        via_v2 = await v1.call(other.pods.get, pod.id)
        assert via_v2.image == "img:3" and via_v2.template_id == t.id
        await v1.call(other.pods.stop, pod.id)
        assert (await v1.call(v1.client.pods.get, pod.id)).desired_status == m.PodStatus.EXITED
    finally:
        await v1.close_client(other)


async def test_made_through_a_v2_client_read_through_a_v1_client(v2: V2Harness) -> None:
    other = v2.client_of("v1")
    try:
        vol = await v2.call(
            v2.client.network_volumes.create, name="d", size=40, data_center_id="EU-RO-1"
        )
        t = await v2.call(
            v2.client.templates.create, name="two", image_name="img:4", env={"K": "v"}
        )
        assert (await v2.call(other.network_volumes.get, vol.id)).to_wire() == vol.to_wire()
        seen = await v2.call(other.templates.get, t.id)
        assert (seen.name, seen.image_name, seen.env) == ("two", "img:4", {"K": "v"})
        await v2.call(other.templates.update, t.id, image_name="img:5")
        assert (await v2.call(v2.client.templates.get, t.id)).image_name == "img:5"
    finally:
        await v2.close_client(other)


async def test_a_scaler_value_alone_keeps_the_endpoints_scaler_kind(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="s", image_name="echo", is_serverless=True)
    ep = await v2.call(
        c.endpoints.create, template_id=tpl.id, scaler_type="REQUEST_COUNT", scaler_value=5
    )
    assert (ep.scaler_type, ep.scaler_value) == (m.ScalerType.REQUEST_COUNT, 5)
    ep = await v2.call(c.endpoints.update, ep.id, scaler_value=7)
    assert (ep.scaler_type, ep.scaler_value) == (m.ScalerType.REQUEST_COUNT, 7)


# ---- what goes over the wire ----------------------------------------------------------------


async def test_a_v2_pod_create_sends_v2s_nested_body(flavour: str) -> None:
    recorder = Recorder(201, {"id": "p1", "name": "n", "status": "PROVISIONING"})
    client = recorded_client(flavour == "async", recorder, base_url="https://mgmt.example/v2")
    pod = await call(
        client,
        client.pods.create,
        name="n",
        image_name="img:1",
        gpu_type_ids=[GPU],
        gpu_count=2,
        docker_start_cmd=["python", "-c", "print('a b')"],
        network_volume_id="vol1",
        volume_mount_path="/data",
        cloud_type="COMMUNITY",
        extra_body={"startSsh": False},
    )
    assert str(recorder.last.url) == "https://mgmt.example/v2/pods"
    assert recorder.last_json() == {
        "name": "n",
        "image": "img:1",
        "args": "python -c 'print('\"'\"'a b'\"'\"')'",
        "gpu": {"id": GPU, "count": 2},
        "cloud": "COMMUNITY",
        "mounts": {"network": [{"volumeId": "vol1", "path": "/data"}]},
        "startSsh": False,
    }
    assert pod.id == "p1" and pod.desired_status == m.PodStatus.RUNNING
    stop = Recorder(200, {"id": "p1", "name": "n", "status": "EXITED"})
    client = recorded_client(flavour == "async", stop, base_url="https://mgmt.example/v2")
    assert (await call(client, client.pods.stop, "p1")).desired_status == m.PodStatus.EXITED
    assert str(stop.last.url) == "https://mgmt.example/v2/pods/p1/action"
    assert stop.last_json() == {"action": "stop"}


async def test_pod_listing_filters_apply_over_v2(v2: V2Harness) -> None:
    """v2 lists pods unfiltered; v1's filters are applied by the client, the same way."""
    c = v2.client
    a = await v2.call(c.pods.create, name="a", image_name="img:1", gpu_type_ids=[GPU])
    b = await v2.call(
        c.pods.create, name="b", image_name="img:2", compute_type="CPU", cpu_flavor_ids=["cpu3c"]
    )
    await v2.call(c.pods.stop, b.id)
    ids = [p.id for p in await v2.call(c.pods.list)]
    assert sorted(ids) == sorted([a.id, b.id])
    assert [p.id for p in await v2.call(c.pods.list, name="a")] == [a.id]
    assert [p.id for p in await v2.call(c.pods.list, gpu_type_id=GPU)] == [a.id]
    assert [p.id for p in await v2.call(c.pods.list, compute_type="CPU")] == [b.id]
    assert [p.id for p in await v2.call(c.pods.list, desired_status="EXITED")] == [b.id]
    assert await v2.call(c.pods.list, image_name="img:9") == []
    with pytest.raises(BadRequest) as info:
        await v2.call(c.pods.list, endpoint_id="e1")
    assert "endpoint_id" in str(info.value) and info.value.sent is False


async def test_a_cpu_endpoint_over_v2_names_its_flavours(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="cpu", image_name="echo", is_serverless=True)
    with pytest.raises(BadRequest) as info:
        await v2.call(c.endpoints.create, template_id=tpl.id, compute_type="CPU")
    assert "cpu_flavor_ids" in str(info.value) and info.value.sent is False
    ep = await v2.call(
        c.endpoints.create,
        template_id=tpl.id,
        compute_type="CPU",
        cpu_flavor_ids=["cpu3c"],
        vcpu_count=4,
    )
    assert ep.compute_type == m.ComputeType.CPU and ep.gpu_type_ids is None
    wire = ep.to_wire()  # v1's Endpoint keeps fields it does not name
    assert (wire["cpuFlavorIds"], wire["vcpuCount"]) == (["cpu3c"], 4)
