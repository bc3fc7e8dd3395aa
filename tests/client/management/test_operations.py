"""Every management operation through the v1 adapter, against the emulator's ``/v1``.

A client asked for REST v1 (``management_api="v1"``) takes the same keywords and returns
the same REST v2 records as one on v2: the adapter spells each call the v1 way and gives
each answer v2's shape. Each test runs four ways (sync and async clients; in-process and
over TCP), on an empty emulator with a fake clock. Errors the service itself gives (a
duplicate name, a shrinking volume, a locked pod) come back as BadRequest with
``sent=True`` and the service's message, and change nothing.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from nbext.client import BadRequest, NotFound, UnsupportedOperation
from nbext.models import v2

from .conftest import V1Harness

pytestmark = pytest.mark.anyio

START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where the emulator's fake clock starts."""


async def serverless_template(h: V1Harness, name: str = "echo-tpl", image: str = "echo") -> Any:
    return await h.call(h.client.templates.create, name=name, image=image, serverless=True)


# ---- templates ----------------------------------------------------------------------------


async def test_template_create_applies_the_seeds_defaults(v1: V1Harness) -> None:
    t = await v1.call(v1.client.templates.create, name="base", image="img:1")
    assert isinstance(t, v2.Template) and t.id
    assert (t.name, t.image, t.category, t.disk) == ("base", "img:1", "NVIDIA", 50)
    assert t.mounts is not None and t.mounts.persistent is not None
    assert (t.mounts.persistent.size, t.mounts.persistent.path) == (20, "/workspace")
    assert t.ports == ["8888/http", "22/tcp"] and t.env == {} and t.args == ""
    assert t.public is False and t.serverless is False
    assert "readme" not in t.to_wire() and "imageName" not in t.to_wire()  # v2's record only


async def test_template_create_get_list_update_delete(v1: V1Harness) -> None:
    c = v1.client
    t = await v1.call(
        c.templates.create,
        name="full",
        image="img:2",
        category="CPU",
        disk=10,
        args="python serve.py",
        env={"MODE": "prod"},
        ports=["8000/http"],
        mounts={"persistent": {"size": 30, "path": "/data"}},
    )
    assert t.category == "CPU" and t.env == {"MODE": "prod"} and t.ports == ["8000/http"]
    assert t.args == "python serve.py" and t.mounts.persistent.path == "/data"
    assert (await v1.call(c.templates.get, t.id)).to_wire() == t.to_wire()
    assert [x.id for x in await v1.call(c.templates.list)] == [t.id]

    patched = await v1.call(c.templates.update, t.id, env={"MODE": "dev"})
    assert patched.env == {"MODE": "dev"} and patched.image == "img:2"  # only what was named
    renamed = await v1.call(c.templates.update, t.id, name="renamed")
    assert renamed.name == "renamed" and (await v1.call(c.templates.get, t.id)).name == "renamed"

    assert await v1.call(c.templates.delete, t.id) is None
    with pytest.raises(NotFound) as info:
        await v1.call(c.templates.get, t.id)
    assert f"template {t.id!r}" in str(info.value)
    with pytest.raises(NotFound):
        await v1.call(c.templates.delete, t.id)


async def test_a_duplicate_template_name_is_refused_by_the_service(v1: V1Harness) -> None:
    c = v1.client
    await v1.call(c.templates.create, name="same", image="a")
    with pytest.raises(BadRequest) as info:
        await v1.call(c.templates.create, name="same", image="b")
    assert info.value.sent is True and info.value.status == 400
    assert "same" in str(info.value) and "POST templates (a new template)" in str(info.value)
    assert info.value.body and "same" in info.value.body
    assert [t.image for t in await v1.call(c.templates.list)] == ["a"]


async def test_a_field_only_v2_has_is_refused_before_sending(v1: V1Harness) -> None:
    with pytest.raises(UnsupportedOperation) as info:
        await v1.call(v1.client.templates.create, name="t", image="i", start_ssh=False)
    text = str(info.value)
    assert "templates.create with start_ssh needs the management interface REST v2" in text
    assert "management_api" in text and "\n" not in text
    assert await v1.call(v1.client.templates.list) == []


# ---- container registry auths -------------------------------------------------------------


async def test_registry_auths_never_give_the_password_back(v1: V1Harness) -> None:
    c = v1.client
    auth = await v1.call(c.registry_auths.create, name="ghcr", username="me", password="s3cr3t-pw")
    assert isinstance(auth, v2.Registry) and auth.name == "ghcr"
    for seen in (
        auth,
        await v1.call(c.registry_auths.get, auth.id),
        *await v1.call(c.registry_auths.list),
    ):
        assert "s3cr3t-pw" not in repr(seen) and "s3cr3t-pw" not in str(seen.to_wire())
    private = await v1.call(c.templates.create, name="p", image="ghcr.io/me/x", registry=auth.id)
    assert private.registry == auth.id
    with pytest.raises(BadRequest, match="containerRegistryAuthId"):
        await v1.call(c.templates.create, name="p2", image="i", registry="nope")
    await v1.call(c.templates.delete, private.id)
    await v1.call(c.registry_auths.delete, auth.id)
    assert await v1.call(c.registry_auths.list) == []
    with pytest.raises(NotFound):
        await v1.call(c.registry_auths.get, auth.id)


# ---- network volumes ----------------------------------------------------------------------


async def test_network_volumes_grow_and_never_shrink(v1: V1Harness) -> None:
    c = v1.client
    vol = await v1.call(c.network_volumes.create, name="data", size=10, data_center="EU-RO-1")
    assert isinstance(vol, v2.NetworkVolume)
    assert (vol.name, vol.size, vol.data_center) == ("data", 10, "EU-RO-1")
    assert [v.id for v in await v1.call(c.network_volumes.list)] == [vol.id]
    assert (await v1.call(c.network_volumes.update, vol.id, size=20)).size == 20
    renamed = await v1.call(c.network_volumes.update, vol.id, name="data2")
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
        workers={"max": 2, "idle_timeout": 30},
        scaling={"type": "REQUEST_COUNT", "request_count": 3},
        timeout=60_000,
    )
    assert isinstance(ep, v2.Endpoint) and ep.id
    assert (ep.name, ep.type, ep.workers.max, ep.workers.idle_timeout) == ("echoer", "QUEUE", 2, 30)
    assert (ep.scaling.type, ep.scaling.request_count, ep.timeout) == ("REQUEST_COUNT", 3, 60_000)
    assert ep.created_at is not None and ep.created_at.tzinfo is not None
    # v1 has no requestUrls: the adapter names the client's own job interface
    assert ep.request_urls is not None and ep.request_urls.run_sync is not None
    assert ep.request_urls.run_sync.endswith(f"/v2/{ep.id}/runsync")
    result = await v1.call(c.endpoint(ep.id).run_sync, {"hello": "world"}, wait=5, timeout=10)
    assert result.output == {"hello": "world"}


async def test_endpoint_get_list_update_delete(v1: V1Harness) -> None:
    c = v1.client
    tpl = await serverless_template(v1)
    ep = await v1.call(c.endpoints.create, template_id=tpl.id, name="e")
    assert [e.id for e in await v1.call(c.endpoints.list)] == [ep.id]
    assert (await v1.call(c.endpoints.get, ep.id)).to_wire() == ep.to_wire()

    patched = await v1.call(c.endpoints.update, ep.id, workers={"max": 5, "min": 1})
    assert (patched.workers.min, patched.workers.max, patched.name) == (1, 5, "e")
    cpu = await v1.call(c.endpoints.update, ep.id, flashboot="FLASHBOOT", name="renamed")
    assert (cpu.name, cpu.flashboot, cpu.workers.max) == ("renamed", "FLASHBOOT", 5)

    await v1.call(c.endpoints.delete, ep.id)
    with pytest.raises(NotFound) as info:
        await v1.call(c.endpoints.get, ep.id)
    assert f"endpoint {ep.id!r}" in str(info.value)
    with pytest.raises(NotFound):
        await v1.call(c.endpoint(ep.id).health)  # its job address is gone too


async def test_gpu_pools_need_v2_and_an_endpoint_needs_a_serverless_template(
    v1: V1Harness,
) -> None:
    c = v1.client
    pod_tpl = await v1.call(c.templates.create, name="for-pods", image="echo")
    with pytest.raises(BadRequest) as info:
        await v1.call(c.endpoints.create, template_id=pod_tpl.id)
    assert "templateId" in str(info.value) and info.value.sent is True
    with pytest.raises(UnsupportedOperation) as needs:  # v1 names GPU types, not pools
        await v1.call(c.endpoints.create, template_id=pod_tpl.id, gpu={"pools": ["ADA_24"]})
    assert "gpu.pools" in str(needs.value)
    assert await v1.call(c.endpoints.list) == []


# ---- pods ---------------------------------------------------------------------------------


async def create_pod(h: V1Harness, **kw: Any) -> Any:
    fields = {"image": "img:1", "name": "trainer", "gpu": {"id": "NVIDIA A40"}, **kw}
    return await h.call(h.client.pods.create, **fields)


async def test_pod_create_get_and_list(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1, env={"A": "1"}, gpu={"id": "NVIDIA A40", "count": 2})
    assert isinstance(pod, v2.Pod) and pod.id
    assert (pod.status, pod.name, pod.cost > 0) == ("RUNNING", "trainer", True)
    assert pod.actions == ["stop", "restart", "terminate"]
    assert pod.gpu is not None and (pod.gpu.id, pod.gpu.count) == ("NVIDIA A40", 2)
    assert pod.started_at == START and pod.env == {"A": "1"}
    other = await create_pod(v1, name="other", cpu={"id": "cpu3c", "vcpu_count": 4})
    assert other.gpu is None and other.cpu is not None and other.cpu.vcpu_count == 4
    assert (await v1.call(c.pods.get, pod.id)).to_wire() == pod.to_wire()
    assert {p.id for p in await v1.call(c.pods.list)} == {pod.id, other.id}


async def test_pod_stop_start_restart(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    stopped = await v1.call(c.pods.stop, pod.id)
    assert stopped is not None and stopped.status == "EXITED"
    assert stopped.actions == ["start", "terminate"]
    started = await v1.call(c.pods.start, pod.id)
    assert started is not None and started.status == "RUNNING"
    await v1.advance(60)
    restarted = await v1.call(c.pods.restart, pod.id)
    assert restarted.status == "RUNNING"
    assert restarted.started_at == START + timedelta(seconds=60)
    assert (await v1.call(c.pods.get, pod.id)).started_at == START + timedelta(seconds=60)


async def test_a_locked_pod_refuses_stop(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    assert (await v1.call(c.pods.update, pod.id, locked=True)).locked is True
    with pytest.raises(BadRequest) as info:
        await v1.call(c.pods.stop, pod.id)
    assert "lock" in str(info.value).lower() and info.value.sent is True
    assert (await v1.call(c.pods.get, pod.id)).status == "RUNNING"
    unlocked = await v1.call(c.pods.update, pod.id, locked=False)
    assert unlocked.locked is False
    assert (await v1.call(c.pods.stop, pod.id)).status == "EXITED"


async def test_pod_update_of_a_container_field_resets_it_then_delete(v1: V1Harness) -> None:
    c = v1.client
    pod = await create_pod(v1)
    renamed = await v1.call(c.pods.update, pod.id, name="renamed")
    assert renamed.name == "renamed" and renamed.image == pod.image
    await v1.advance(30)
    changed = await v1.call(c.pods.update, pod.id, image="img:2")
    assert changed.image == "img:2" and changed.name == "renamed"
    assert changed.started_at == START + timedelta(seconds=30)  # a new container
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
        c.billing.pods, start_time=date(2026, 1, 1), end_time=date(2026, 1, 2), bucket_size="hour"
    )
    assert all(isinstance(r, v2.BillingRecord) for r in records)
    assert [r.start_time for r in records] == [START, START + timedelta(hours=1)]
    assert [r.end_time for r in records] == [START + timedelta(hours=h) for h in (1, 2)]
    assert all(r.model_extra == {"podId": pod.id} for r in records)
    for record in records:
        assert record.total_amount == pytest.approx(pod.cost, rel=1e-3)
    later = await v1.call(c.billing.pods, start_time=datetime(2026, 1, 1, 1, 30))  # naive: UTC
    assert sum(r.total_amount for r in later) == pytest.approx(pod.cost / 2, rel=1e-3)
    with pytest.raises(UnsupportedOperation):  # v1 counts no buckets back from now
        await v1.call(c.billing.pods, last_n=2)
    with pytest.raises(UnsupportedOperation):  # nor sums every category
        await v1.call(c.billing.summary)


async def test_serverless_billing_counts_worker_execution_time(v1: V1Harness) -> None:
    c = v1.client
    tpl = await serverless_template(v1, "sleeper", "sleep")
    ep = await v1.call(c.endpoints.create, template_id=tpl.id)
    job = await v1.call(c.endpoint(ep.id).run, {"seconds": 30})
    await v1.until(
        lambda: v1.job(job.id) is not None and v1.job(job.id).status.value == "IN_PROGRESS"
    )
    await v1.advance(30)
    await v1.call(job.wait, timeout=10)
    records = await v1.call(c.billing.serverless, start_time=START, bucket_size="month")
    assert len(records) == 1 and records[0].model_extra == {"serverlessId": ep.id}
    assert records[0].total_amount > 0 and records[0].start_time == START
    assert records[0].end_time == datetime(2026, 2, 1, tzinfo=UTC)
    assert await v1.call(c.billing.serverless, serverless_id="someone-else") == []


async def test_network_volume_billing(v1: V1Harness) -> None:
    c = v1.client
    await v1.call(c.network_volumes.create, name="v", size=100, data_center="EU-RO-1")
    await v1.advance(24 * 3600)
    records = await v1.call(
        c.billing.network_volumes, start_time=START, end_time=START + timedelta(days=1)
    )
    assert len(records) == 1 and records[0].start_time == START
    assert records[0].total_amount > 0
