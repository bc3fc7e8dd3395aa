"""Restarts in process: two ``Emulator`` objects on one SQLite file, one after the other.

The subprocess test (``test_persistence``) proves the whole command line; these pin the
details: what ``--endpoint`` does to an endpoint that came back, and that usage (open
intervals included) carries over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.domain.management import catalog, endpoint_views
from nbext.emulator.domain.management.records import wire
from nbext.models import (
    JobSubmission,
    PodBillingQuery,
)

pytestmark = pytest.mark.anyio

KEY = "rpa_RESTART000000000000000000000000000000000"
GPU = "NVIDIA A40"


def emulator(db: Path, clock: FakeClock) -> Emulator:
    emu = Emulator(api_key=KEY, clock=clock, db=db)
    emu.bind()
    return emu


async def test_ensure_deployed_keeps_a_restored_endpoint(tmp_path: Path) -> None:
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    first.ensure_deployed("a", "echo")
    first.ensure_deployed("h", handler=lambda job: "one")
    first.management.endpoints.change("a", {"workers_max": 7})
    first.close()

    second = emulator(db, clock)
    assert second.ensure_deployed("a", "echo") == "a"  # no "already exists"
    assert second.jobs.endpoints["a"].workers_max == 7  # and nothing was reset
    second.ensure_deployed("a", "sleep")  # another image: the endpoint runs it now
    assert second.jobs.endpoints["a"].image == "sleep"
    record = second.management.endpoints.get("a")
    assert second.management.templates.get(record.template_id).image == "sleep"
    assert record.version == 1
    second.ensure_deployed("h", handler=lambda job: "two")
    submission = JobSubmission.model_validate({"input": {}})
    result = await second.jobs.run_sync("h", submission, 5000)
    assert result["output"] == "two"
    second.close()


async def test_a_v1_endpoint_keeps_its_templates_image(tmp_path: Path) -> None:
    emu = emulator(tmp_path / "s.db", FakeClock())
    endpoint = emu.management.endpoints.add("demo-echo", {})
    with pytest.raises(ValueError, match="change that template's imageName"):
        emu.ensure_deployed(endpoint.id, "sleep")
    assert emu.jobs.endpoints[endpoint.id].image == "echo"
    emu.close()


async def test_usage_and_open_intervals_survive(tmp_path: Path) -> None:
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    gpu = {"id": str(catalog.DEFAULT_GPU_TYPE)}
    pod = first.management.pods.create({"name": "p", "image": "i", "gpu": gpu})
    clock.step(3600)
    first.close()
    clock.step(3600)  # the emulator was down; the pod stayed RUNNING all along
    second = emulator(db, clock)
    billed = [r["timeBilledMs"] for r in second.management.billing.pods(PodBillingQuery())]
    assert billed == [7_200_000]
    second.management.pods.stop(pod.id)
    clock.step(3600)
    billed = [r["timeBilledMs"] for r in second.management.billing.pods(PodBillingQuery())]
    assert billed == [7_200_000]
    second.close()


async def test_a_job_running_at_a_restart_runs_again_with_its_later_ttl(tmp_path: Path) -> None:
    """A running job's worker dies with the emulator: it comes back queued and starts on a
    new worker; a TTL set while it ran is kept, still counted from its submission."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, FakeClock(clock.now()))
    first.deploy("sleep", endpoint_id="s", workers_min=0, workers_max=1)
    submission = JobSubmission.model_validate({"input": {"seconds": 300}})
    job = first.jobs.submit("s", submission, sync=False)
    assert job.status.value == "IN_PROGRESS"
    first.jobs.status("s", job.id, ttl_ms=120_000)
    assert job.task is not None
    job.task.cancel()  # the worker dies with the emulator, which stops here
    await first.advance_async(0)
    first.close()

    clock.step(30)
    second = emulator(db, clock)
    second.ensure_deployed("s", "sleep")
    await second.advance_async(0)
    again = second.jobs.jobs[job.id]
    assert again.status.value == "IN_PROGRESS" and again.started_at == clock.now()
    assert again.ttl_ms == 120_000
    await second.advance_async(89.999)  # 119.999 s after submission
    assert second.jobs.status("s", job.id).status.value == "IN_PROGRESS"
    await second.advance_async(0.001)
    assert job.id not in second.jobs.jobs
    second.close()


async def test_a_volume_stored_in_v1s_shape_comes_back_with_its_type(tmp_path: Path) -> None:
    """A database from before volumes were kept in v2's shape: v1's record, its type a facet."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    old = {"id": "vol1", "name": "data", "size": 25, "dataCenterId": "EU-RO-1"}
    first.store.put("volume", "vol1", old)
    first.store.put("v2facet", "volume/vol1", {"id": "volume/vol1", "type": "HIGH_PERFORMANCE"})
    first.close()

    second = emulator(db, clock)
    volume = second.management.volumes.get("vol1")
    assert (volume.data_center, volume.size, volume.type) == ("EU-RO-1", 25, "HIGH_PERFORMANCE")
    assert second.management.v2.facets.get("volume", "vol1") == {}
    assert second.store.get("volume", "vol1") == volume.record()  # stored in v2's shape now
    second.close()


async def test_a_template_stored_in_v1s_shape_comes_back_in_v2s(tmp_path: Path) -> None:
    """A database from before templates were kept in v2's shape: v1's view, v2's fields a
    facet. Both interfaces serve it as before, and it is stored in v2's shape once loaded."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    view = {
        "id": "tpl1", "name": "old", "imageName": "img:1", "category": "NVIDIA",
        "containerDiskInGb": 30, "volumeInGb": 5, "volumeMountPath": "/data",
        "dockerEntrypoint": ["sh", "-c"], "dockerStartCmd": ["run", "a b"], "env": {"A": "1"},
        "ports": ["8888/http"], "readme": "kept", "isPublic": False, "isServerless": False,
        "isRunpod": False, "earned": 0.0, "runtimeInMin": 0,
    }  # fmt: skip
    first.store.put("template", "tpl1", {"id": "tpl1", "view": view, "deployedFor": None})
    facet = {"id": "template/tpl1", "startSsh": False, "allowedCudaVersions": ["12.4"]}
    first.store.put("v2facet", "template/tpl1", facet)
    first.close()

    second = emulator(db, clock)
    t = second.management.templates.get("tpl1")
    assert t.v1().model_dump(by_alias=True, exclude_none=True) == view
    shown = t.view()
    assert shown["args"] == "run 'a b'" and shown["mounts"] == {}  # 5 GB: below v2's minimum
    assert (shown["startSsh"], shown["startJupyter"]) == (False, True)
    assert shown["allowedCudaVersions"] == ["12.4"]
    assert second.management.v2.facets.get("template", "tpl1") == {}
    assert second.store.get("template", "tpl1") == t.record()  # stored in v2's shape now
    second.close()


async def test_an_endpoint_stored_in_v1s_shape_comes_back_in_v2s(tmp_path: Path) -> None:
    """A database from before endpoints were kept in v2's shape: v1's view, the exact queue
    delay and flashboot mode a facet. Both interfaces serve it as before, and it is stored
    in v2's shape once loaded."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    view = {
        "id": "ep1", "name": "old", "templateId": "demo-echo", "computeType": "GPU",
        "gpuTypeIds": ["NVIDIA L40S", "NVIDIA A40"], "gpuCount": 2,
        "dataCenterIds": ["EU-RO-1"], "workersMin": 0, "workersMax": 2, "idleTimeout": 7,
        "executionTimeoutMs": 60000, "scalerType": "QUEUE_DELAY", "scalerValue": 3,
        "networkVolumeIds": [], "env": {}, "version": 0,
        "createdAt": "2026-01-01T00:00:00Z", "userId": "user_2nbextEmulatorLocalUser00",
        "flashboot": True, "colour": "red",
    }  # fmt: skip
    row = {"id": "ep1", "view": view, "cpuFlavorIds": None, "vcpuCount": 2, "idleTimeoutS": 6.5}
    first.store.put("endpoint", "ep1", row)
    facet = {"id": "endpoint/ep1", "queueDelay": 2.5, "flashboot": "PRIORITY_FLASHBOOT"}
    first.store.put("v2facet", "endpoint/ep1", facet)
    first.close()

    second = emulator(db, clock)
    e = second.management.endpoints.get("ep1")
    assert e.v1() == view  # the empty networkVolumeIds and the unknown field, as they were
    shown = endpoint_views.view(second.management, e, "http://emulator/")
    assert shown["scaling"] == {"type": "QUEUE_DELAY", "queueDelay": 2.5}
    assert shown["flashboot"] == "PRIORITY_FLASHBOOT"
    assert shown["workers"] == {"min": 0, "max": 2, "idleTimeout": 7}
    assert shown["gpu"]["pools"] == ["ADA_48_PRO", "AMPERE_48"]
    assert second.jobs.endpoints["ep1"].idle_timeout == 6.5
    assert second.management.v2.facets.get("endpoint", "ep1") == {}
    assert second.store.get("endpoint", "ep1") == e.record()  # stored in v2's shape now
    second.close()


async def test_a_pod_stored_in_v1s_shape_comes_back_in_v2s(tmp_path: Path) -> None:
    """A database from before pods were kept in v2's shape: v1's view with the placement
    beside it, the CUDA version a facet. Both interfaces serve it as before, and it is
    stored in v2's shape once loaded."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    view = {
        "id": "pod1", "name": "old", "image": "img:1", "desiredStatus": "EXITED",
        "lastStartedAt": "2026-01-01T00:00:00Z",
        "lastStatusChange": "Exited by User: Thu Jan 01 2026 00:00:00 GMT+0000 (UTC)",
        "costPerHr": 0.4, "adjustedCostPerHr": 0.4, "gpu": catalog.gpu(GPU).wire(1),
        "vcpuCount": 8.0, "memoryInGb": 31.0, "containerDiskInGb": 30, "volumeInGb": 5,
        "volumeMountPath": "/data", "volumeEncrypted": False, "dockerEntrypoint": ["sh"],
        "dockerStartCmd": ["run", "a b"], "env": {"A": "1"}, "ports": ["22/tcp"],
        "portMappings": {}, "interruptible": False, "locked": True, "machineId": "m1",
        "consumerUserId": catalog.USER_ID,
    }  # fmt: skip
    row = {
        "id": "pod1", "view": view, "computeType": "GPU", "dataCenterId": "EU-RO-1",
        "cloudType": "SECURE", "gpuTypeId": GPU, "networkVolumeId": None,
        "extra": {"globalNetworking": True},
    }  # fmt: skip
    first.store.put("pod", "pod1", row)
    first.store.put("v2facet", "pod/pod1", {"id": "pod/pod1", "cudaVersion": "12.4"})
    first.close()

    second = emulator(db, clock)
    pods = second.management.pods
    p = pods.entry("pod1")
    assert wire(p.v1()) == view
    shown = pods.view(p)
    assert (shown["status"], shown["actions"]) == ("EXITED", ["start", "terminate"])
    assert shown["args"] == "run 'a b'" and shown["mounts"] == {}  # 5 GB: below v2's minimum
    assert shown["gpu"] == {"id": GPU, "count": 1} and shown["cudaVersion"] == "12.4"
    assert shown["globalNetworking"] == {"enabled": True, "internalDns": "pod1.runpod.internal"}
    assert second.management.v2.facets.get("pod", "pod1") == {}
    assert second.store.get("pod", "pod1") == p.record()  # stored in v2's shape now
    second.close()
