"""REST v1's keywords still work for one release, each with a DeprecationWarning naming
the keyword that replaces it, against the emulator (v2, and the v1 adapter)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from nbext.client import BadRequest, Client

from ..conftest import KEY
from .conftest import Recorder, V1Harness, V2Harness, call, recorded_client

pytestmark = pytest.mark.anyio

GPU = "NVIDIA GeForce RTX 4090"


async def warned(h: V2Harness, fn: Any, *args: Any, **kw: Any) -> tuple[Any, list[str]]:
    """``fn``'s result and the deprecation messages it gave."""
    with pytest.warns(DeprecationWarning) as caught:
        result = await h.call(fn, *args, **kw)
    return result, [str(w.message) for w in caught if w.category is DeprecationWarning]


async def test_template_keywords(v2: V2Harness) -> None:
    t, said = await warned(
        v2,
        v2.client.templates.create,
        name="old",
        image_name="img:1",
        is_serverless=True,
        docker_start_cmd=["python", "-c", "print('a b')"],
        container_disk_in_gb=10,
        volume_in_gb=20,
    )
    assert (t.image, t.serverless, t.disk) == ("img:1", True, 10)
    assert t.args == "python -c 'print('\"'\"'a b'\"'\"')'"
    assert t.mounts.persistent.size == 20 and t.mounts.persistent.path == "/workspace"
    assert "templates.create: image_name= is REST v1's keyword, deprecated; use image=" in said
    assert any("is_serverless=" in m and "use serverless=" in m for m in said)
    assert any("volume_in_gb=" in m and "mounts={'persistent'" in m for m in said)
    assert len(said) == 5
    updated, said = await warned(v2, v2.client.templates.update, t.id, is_public=False)
    assert updated.public is False and said == [
        "templates.update: is_public= is REST v1's keyword, deprecated; use public="
    ]


async def test_endpoint_keywords_become_pools_workers_and_scaling(v2: V2Harness) -> None:
    c = v2.client
    tpl = await v2.call(c.templates.create, name="srv", image="echo", serverless=True)
    ep, said = await warned(
        v2,
        c.endpoints.create,
        template_id=tpl.id,
        compute_type="GPU",
        gpu_type_ids=[GPU],
        gpu_count=2,
        workers_min=0,
        workers_max=2,
        idle_timeout=30,
        scaler_type="QUEUE_DELAY",
        scaler_value=3,
        execution_timeout_ms=60_000,
        flashboot=True,
    )
    assert ep.gpu is not None and (ep.gpu.pools, ep.gpu.count) == (["ADA_24"], 2)
    assert (ep.workers.min, ep.workers.max, ep.workers.idle_timeout) == (0, 2, 30)
    assert (ep.scaling.type, ep.scaling.queue_delay) == ("QUEUE_DELAY", 3)
    assert (ep.timeout, ep.flashboot) == (60_000, "FLASHBOOT")
    assert any("workers_max=" in m and "use workers={'max': ...}" in m for m in said)
    assert any("gpu_type_ids=" in m and "gpu={'pools'" in m for m in said)
    assert len(said) == 10
    ep, _ = await warned(v2, c.endpoints.update, ep.id, scaler_type="REQUEST_COUNT", scaler_value=5)
    assert (ep.scaling.type, ep.scaling.request_count) == ("REQUEST_COUNT", 5)
    # a value alone keeps the endpoint's kind of scaling, read from the service
    ep, said = await warned(v2, c.endpoints.update, ep.id, scaler_value=7)
    assert (ep.scaling.type, ep.scaling.request_count) == ("REQUEST_COUNT", 7)
    cpu, _ = await warned(
        v2,
        c.endpoints.create,
        template_id=tpl.id,
        name="cpu",
        compute_type="CPU",
        cpu_flavor_ids=["cpu3c"],
        vcpu_count=4,
    )
    assert cpu.gpu is None and [(x.id, x.vcpu_count) for x in cpu.cpu] == [("cpu3c", 4)]
    # flashboot keeps its name: only True and False are the old spelling
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (await v2.call(c.endpoints.update, ep.id, flashboot="OFF")).flashboot == "OFF"


async def test_pod_volume_and_billing_keywords(v2: V2Harness) -> None:
    c = v2.client
    vol, said = await warned(
        v2, c.network_volumes.create, name="d", size=20, data_center_id="EU-RO-1"
    )
    assert vol.data_center == "EU-RO-1" and said == [
        "network_volumes.create: data_center_id= is REST v1's keyword, deprecated; use data_center="
    ]
    pod, said = await warned(
        v2,
        c.pods.create,
        name="p",
        image_name="img:1",
        gpu_type_ids=[GPU],
        gpu_count=2,
        cloud_type="SECURE",
        network_volume_id=vol.id,
        volume_mount_path="/data",
    )
    assert pod.gpu is not None and (pod.gpu.id, pod.gpu.count) == (GPU, 2)
    assert pod.mounts is not None and pod.mounts.network is not None
    assert (pod.mounts.network[0].volume_id, pod.mounts.network[0].path) == (vol.id, "/data")
    assert pod.cloud == "SECURE" and len(said) == 6
    changed, said = await warned(v2, c.pods.update, pod.id, image_name="img:2")
    assert changed.image == "img:2" and len(said) == 1
    records, said = await warned(v2, c.billing.endpoints, endpoint_id="someone")
    assert records == [] and said == [
        "billing.endpoints is REST v1's name, deprecated; use billing.serverless",
        "billing.serverless: endpoint_id= is REST v1's keyword, deprecated; use serverless_id=",
    ]


async def test_old_keywords_work_through_the_v1_adapter_too(v1: V1Harness) -> None:
    t, said = await warned(v1, v1.client.templates.create, name="t", image_name="img:1")  # type: ignore[arg-type]
    assert t.image == "img:1" and len(said) == 1


async def test_both_spellings_or_a_second_gpu_type_are_refused(flavour: str) -> None:
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.warns(DeprecationWarning), pytest.raises(BadRequest) as info:
        await call(client, client.templates.create, name="t", image="a", image_name="b")
    assert "give image= or REST v1's keywords for it, not both" in str(info.value)
    with pytest.warns(DeprecationWarning), pytest.raises(BadRequest) as info:
        await call(client, client.pods.create, image="i", gpu_type_ids=["A", "B"])
    assert "gpu_type_ids: REST v2 rents a pod on exactly one GPU type" in str(info.value)
    with pytest.raises(TypeError, match="readme"):  # v2 has no place for it
        await call(client, client.templates.create, name="t", image="a", readme="# hi")
    assert recorder.requests == []


def test_the_warning_points_at_the_callers_line() -> None:
    recorder = Recorder(body={"id": "t", "name": "t"})
    client = Client(KEY, base_url="https://m.example/v2", transport=recorder)
    with client, pytest.warns(DeprecationWarning) as caught:
        client.templates.create(name="t", image_name="i")  # type: ignore[call-arg]
    assert caught[0].filename == __file__
