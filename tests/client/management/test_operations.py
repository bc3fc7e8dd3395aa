"""Every management operation through the client, against the emulator's ``/v1``.

Each test runs four ways (sync and async clients; in-process and over TCP), on an empty
emulator with a fake clock. Errors the service itself gives (a duplicate name, a
shrinking volume, a locked pod) come back as BadRequest with ``sent=True`` and the
service's message, and change nothing.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

import nbext.models as m
from nbext.client import BadRequest, NotFound

from .conftest import V1Harness

pytestmark = pytest.mark.anyio

START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where the emulator's fake clock starts."""


async def serverless_template(h: V1Harness, name: str = "echo-tpl", image: str = "echo") -> Any:
    return await h.call(h.client.templates.create, name=name, image_name=image, is_serverless=True)


# ---- templates ----------------------------------------------------------------------------


async def test_template_create_applies_the_seeds_defaults(v1: V1Harness) -> None:
    t = await v1.call(v1.client.templates.create, name="base", image_name="img:1")
    assert isinstance(t, m.Template) and t.id
    assert (t.name, t.image_name, t.category) == ("base", "img:1", m.TemplateCategory.NVIDIA)
    assert (t.container_disk_in_gb, t.volume_in_gb, t.volume_mount_path) == (
        50,
        20,
        "/workspace",
    )
    assert t.ports == ["8888/http", "22/tcp"] and t.env == {} and t.readme == ""
    assert t.docker_entrypoint == [] and t.docker_start_cmd == []
    assert t.is_public is False and t.is_serverless is False


async def test_template_create_get_list_update_delete(v1: V1Harness) -> None:
    c = v1.client
    t = await v1.call(
        c.templates.create,
        name="full",
        image_name="img:2",
        category="CPU",
        container_disk_in_gb=10,
        docker_start_cmd=["python", "serve.py"],
        env={"MODE": "prod"},
        ports=["8000/http"],
        readme="# hi",
        volume_in_gb=0,
        volume_mount_path="/data",
    )
    assert t.category == "CPU" and t.env == {"MODE": "prod"} and t.ports == ["8000/http"]
    assert (await v1.call(c.templates.get, t.id)).to_wire() == t.to_wire()
    assert [x.id for x in await v1.call(c.templates.list)] == [t.id]

    patched = await v1.call(c.templates.update, t.id, readme="# changed", env={"MODE": "dev"})
    assert patched.readme == "# changed" and patched.env == {"MODE": "dev"}
    assert patched.image_name == "img:2"  # only what was named changed
    posted = await v1.call(c.templates.update, t.id, name="renamed", method="POST")
    assert posted.name == "renamed" and posted.readme == "# changed"
    assert (await v1.call(c.templates.get, t.id)).name == "renamed"

    assert await v1.call(c.templates.delete, t.id) is None
    with pytest.raises(NotFound) as info:
        await v1.call(c.templates.get, t.id)
    assert f"template {t.id!r}" in str(info.value)
    with pytest.raises(NotFound):
        await v1.call(c.templates.delete, t.id)


async def test_template_list_flags_widen_the_listing(v1: V1Harness) -> None:
    c = v1.client
    own = await v1.call(c.templates.create, name="own", image_name="i")
    bound = await serverless_template(v1, "bound")
    await v1.call(c.endpoints.create, template_id=bound.id)
    default = {t.id for t in await v1.call(c.templates.list)}
    assert own.id in default and bound.id not in default
    wider = {t.id for t in await v1.call(c.templates.list, include_endpoint_bound_templates=True)}
    assert {own.id, bound.id} <= wider
    official = await v1.call(c.templates.list, include_runpod_templates=True)
    assert any(t.is_runpod for t in official)  # the operator's own, e.g. the demo images
    assert not any(t.is_runpod for t in await v1.call(c.templates.list))


async def test_a_duplicate_template_name_is_refused_by_the_service(v1: V1Harness) -> None:
    c = v1.client
    await v1.call(c.templates.create, name="same", image_name="a")
    with pytest.raises(BadRequest) as info:
        await v1.call(c.templates.create, name="same", image_name="b")
    assert info.value.sent is True and info.value.status == 400
    assert "same" in str(info.value) and "POST templates (a new template)" in str(info.value)
    assert info.value.body and "same" in info.value.body
    assert [t.image_name for t in await v1.call(c.templates.list)] == ["a"]


# ---- container registry auths -------------------------------------------------------------


async def test_registry_auths_never_give_the_password_back(v1: V1Harness) -> None:
    c = v1.client
    auth = await v1.call(c.registry_auths.create, name="ghcr", username="me", password="s3cr3t-pw")
    assert isinstance(auth, m.ContainerRegistryAuth) and auth.name == "ghcr"
    for seen in (
        auth,
        await v1.call(c.registry_auths.get, auth.id),
        *await v1.call(c.registry_auths.list),
    ):
        assert "s3cr3t-pw" not in repr(seen) and "s3cr3t-pw" not in str(seen.to_wire())
    private = await v1.call(
        c.templates.create,
        name="private",
        image_name="ghcr.io/me/x",
        container_registry_auth_id=auth.id,
    )
    assert private.container_registry_auth_id == auth.id
    with pytest.raises(BadRequest, match="containerRegistryAuthId"):
        await v1.call(
            c.templates.create, name="p2", image_name="i", container_registry_auth_id="nope"
        )
    await v1.call(c.templates.delete, private.id)
    await v1.call(c.registry_auths.delete, auth.id)
    assert await v1.call(c.registry_auths.list) == []
    with pytest.raises(NotFound):
        await v1.call(c.registry_auths.get, auth.id)


# ---- network volumes ----------------------------------------------------------------------


async def test_network_volumes_grow_and_never_shrink(v1: V1Harness) -> None:
    c = v1.client
    vol = await v1.call(
        c.network_volumes.create, name="data", size=10, data_center_id=m.DataCenterId.EU_RO_1
    )
    assert isinstance(vol, m.NetworkVolume)
    assert (vol.name, vol.size, vol.data_center_id) == ("data", 10, "EU-RO-1")
    assert [v.id for v in await v1.call(c.network_volumes.list)] == [vol.id]
    grown = await v1.call(c.network_volumes.update, vol.id, size=20)
    assert grown.size == 20
    renamed = await v1.call(c.network_volumes.update, vol.id, name="data2", method="POST")
    assert (renamed.name, renamed.size) == ("data2", 20)
    with pytest.raises(BadRequest) as info:
        await v1.call(c.network_volumes.update, vol.id, size=5)
    assert info.value.sent is True and "size" in str(info.value)
    assert (await v1.call(c.network_volumes.get, vol.id)).size == 20  # nothing changed
    await v1.call(c.network_volumes.delete, vol.id)
    with pytest.raises(NotFound):
        await v1.call(c.network_volumes.get, vol.id)


# ---- endpoints ----------------------------------------------------------------------------


async def test_an_endpoint_created_here_serves_jobs_at_once(v1: V1Harness) -> None:
    c = v1.client
    tpl = await serverless_template(v1)
    ep = await v1.call(
        c.endpoints.create,
        template_id=tpl.id,
        name="echoer",
        workers_max=2,
        idle_timeout=30,
        gpu_type_ids=[m.GpuTypeId.L4],
    )
    assert isinstance(ep, m.Endpoint) and ep.id
    assert (ep.name, ep.template_id, ep.workers_max, ep.idle_timeout) == (
        "echoer",
        tpl.id,
        2,
        30,
    )
    assert ep.created_at is not None and ep.created_at.tzinfo is not None
    result = await v1.call(c.endpoint(ep.id).run_sync, {"hello": "world"}, wait=5, timeout=10)
    assert result.output == {"hello": "world"}


async def test_endpoint_get_list_update_delete(v1: V1Harness) -> None:
    c = v1.client
    tpl = await serverless_template(v1)
    ep = await v1.call(c.endpoints.create, template_id=tpl.id, name="e")
    listed = await v1.call(c.endpoints.list, include_template=True)
    assert [e.id for e in listed] == [ep.id]
    assert listed[0].template is not None and listed[0].template.id == tpl.id
    got = await v1.call(c.endpoints.get, ep.id, include_workers=True)
    assert got.id == ep.id and got.workers is not None

    patched = await v1.call(c.endpoints.update, ep.id, workers_max=5, workers_min=1)
    assert (patched.workers_min, patched.workers_max, patched.name) == (1, 5, "e")
    posted = await v1.call(c.endpoints.update, ep.id, name="renamed", method="POST")
    assert (posted.name, posted.workers_max) == ("renamed", 5)

    await v1.call(c.endpoints.delete, ep.id)
    with pytest.raises(NotFound) as info:
        await v1.call(c.endpoints.get, ep.id)
    assert info.value.endpoint_id == ep.id
    with pytest.raises(NotFound):
        await v1.call(c.endpoint(ep.id).health)  # its job address is gone too


async def test_an_endpoint_needs_a_serverless_template(v1: V1Harness) -> None:
    c = v1.client
    pod_tpl = await v1.call(c.templates.create, name="for-pods", image_name="echo")
    with pytest.raises(BadRequest) as info:
        await v1.call(c.endpoints.create, template_id=pod_tpl.id)
    assert "templateId" in str(info.value) and info.value.sent is True
    with pytest.raises(BadRequest):
        await v1.call(c.endpoints.create, template_id="no-such-template")
    assert await v1.call(c.endpoints.list) == []


# ---- pods ---------------------------------------------------------------------------------


async def create_pod(h: V1Harness, **kw: Any) -> Any:
    fields = {"image_name": "img:1", "name": "trainer", "gpu_type_ids": [m.GpuTypeId.A40], **kw}
    return await h.call(h.client.pods.create, **fields)


async def test_pod_create_get_and_list_with_filters(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1, env={"A": "1"})
    assert isinstance(pod, m.Pod) and pod.id
    assert pod.desired_status == m.PodStatus.RUNNING and pod.name == "trainer"
    assert pod.cost_per_hr is not None and pod.cost_per_hr > 0
    assert pod.last_started_at == START
    other = await create_pod(v1, name="other", gpu_type_ids=[m.GpuTypeId.L4])

    got = await v1.call(c.pods.get, pod.id, include_machine=True)
    assert got.id == pod.id and got.machine is not None and got.env == {"A": "1"}

    async def ids(**filters: Any) -> set[str]:
        return {p.id for p in await v1.call(c.pods.list, **filters)}

    assert await ids() == {pod.id, other.id}
    assert await ids(name="trainer") == {pod.id}
    assert await ids(gpu_type_id=m.GpuTypeId.L4) == {other.id}
    assert await ids(gpu_type_id=["NVIDIA A40", "NVIDIA L4"]) == {pod.id, other.id}
    assert await ids(desired_status="EXITED") == set()
    assert await ids(id=other.id) == {other.id}
    assert await ids(image_name="img:1", compute_type="GPU") == {pod.id, other.id}


async def test_pod_stop_start_restart_reset(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    stopped = await v1.call(c.pods.stop, pod.id)
    assert stopped is not None and stopped.desired_status == m.PodStatus.EXITED
    assert [p.id for p in await v1.call(c.pods.list, desired_status="EXITED")] == [pod.id]
    started = await v1.call(c.pods.start, pod.id)
    assert started is not None and started.desired_status == m.PodStatus.RUNNING

    await v1.advance(60)
    restarted = await v1.call(c.pods.restart, pod.id)
    assert restarted.desired_status == m.PodStatus.RUNNING
    assert restarted.last_started_at == START + timedelta(seconds=60)
    await v1.advance(60)
    reset = await v1.call(c.pods.reset, pod.id)
    assert reset.last_started_at == START + timedelta(seconds=120)
    now = await v1.call(c.pods.get, pod.id)
    assert now.last_started_at == START + timedelta(seconds=120)


async def test_a_locked_pod_refuses_stop_and_reset(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1, locked=True)
    for action in (c.pods.stop, c.pods.reset):
        with pytest.raises(BadRequest) as info:
            await v1.call(action, pod.id)
        assert "lock" in str(info.value).lower() and info.value.sent is True
    assert (await v1.call(c.pods.get, pod.id)).desired_status == m.PodStatus.RUNNING
    unlocked = await v1.call(c.pods.update, pod.id, locked=False)
    assert unlocked.locked is False
    assert (await v1.call(c.pods.stop, pod.id)).desired_status == m.PodStatus.EXITED


async def test_pod_update_and_its_post_synonym_then_delete(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    renamed = await v1.call(c.pods.update, pod.id, name="renamed")
    assert renamed.name == "renamed" and renamed.image == pod.image
    await v1.advance(30)
    changed = await v1.call(c.pods.update, pod.id, image_name="img:2", method="POST")
    assert changed.image == "img:2" and changed.name == "renamed"
    assert changed.last_started_at == START + timedelta(seconds=30)  # a new container
    await v1.call(c.pods.delete, pod.id)
    with pytest.raises(NotFound) as info:
        await v1.call(c.pods.get, pod.id)
    assert f"pod {pod.id!r}" in str(info.value)
    assert await v1.call(c.pods.list) == []


# ---- billing ------------------------------------------------------------------------------


async def test_pod_billing_follows_the_emulators_clock(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    await v1.advance(2 * 3600)
    records = await v1.call(
        c.billing.pods,
        start_time=date(2026, 1, 1),
        end_time=date(2026, 1, 2),
        bucket_size="hour",
        grouping="podId",
    )
    assert [r.time for r in records] == [START, START + timedelta(hours=1)]
    assert all(r.pod_id == pod.id for r in records)
    for record in records:
        assert record.amount == pytest.approx(pod.cost_per_hr, rel=1e-3)
    by_gpu = await v1.call(c.billing.pods, start_time=START, end_time="2026-01-02T00:00:00Z")
    assert len(by_gpu) == 1 and by_gpu[0].gpu_type_id == "NVIDIA A40"
    assert by_gpu[0].amount == pytest.approx(2 * pod.cost_per_hr, rel=1e-3)
    later = await v1.call(c.billing.pods, start_time=datetime(2026, 1, 1, 1, 30))  # naive: UTC
    assert sum(r.amount for r in later) == pytest.approx(pod.cost_per_hr / 2, rel=1e-3)


async def test_endpoint_billing_counts_worker_execution_time(v1: V1Harness) -> None:
    c = v1.client
    tpl = await serverless_template(v1, "sleeper", "sleep")
    ep = await v1.call(c.endpoints.create, template_id=tpl.id, gpu_type_ids=["NVIDIA L4"])
    job = await v1.call(c.endpoint(ep.id).run, {"seconds": 30})
    await v1.until(
        lambda: v1.job(job.id) is not None and v1.job(job.id).status.value == "IN_PROGRESS"
    )
    await v1.advance(30)
    await v1.call(job.wait, timeout=10)
    records = await v1.call(c.billing.endpoints, start_time=START, bucket_size="day")
    assert len(records) == 1 and records[0].endpoint_id == ep.id
    assert records[0].amount > 0 and records[0].time == START
    filtered = await v1.call(c.billing.endpoints, endpoint_id="someone-else")
    assert filtered == []


async def test_network_volume_billing(v1: V1Harness) -> None:
    c = v1.client
    await v1.call(c.network_volumes.create, name="v", size=100, data_center_id="EU-RO-1")
    await v1.advance(24 * 3600)
    records = await v1.call(
        c.billing.network_volumes, start_time=START, end_time=START + timedelta(days=1)
    )
    assert len(records) == 1 and records[0].time == START
    assert records[0].amount is not None and records[0].amount > 0
