"""Bad input to a management call is refused in one line, and nothing is made.

What the client can tell by itself (an empty id, a nested value of the wrong shape, a
body that is not JSON, a billing period out of order) is refused before anything is
sent: ``BadRequest`` with ``sent=False``, naming the keyword, and no request on the wire.
The values' rules are the service's: REST v2 answers 422 naming the field, which the
client raises as ``BadRequest`` with ``sent=True``, and the emulator makes nothing.
(Nested values are named by their wire names, as the service names them.)
"""

from __future__ import annotations

from typing import Any

import pytest

from nbext.client import BadRequest

from .conftest import Recorder, V2Harness, call, recorded_client

pytestmark = pytest.mark.anyio

T = {"name": "t", "image": "img:1"}
"""The smallest valid template."""

LOCAL: list[tuple[str, str, tuple[Any, ...], dict[str, Any], str]] = [
    ("templates", "get", ("",), {}, "template id must be a non-empty string"),
    ("templates", "delete", (None,), {}, "template id must be a non-empty string"),
    ("templates", "create", (), {**T, "mounts": {"persistent": 5}}, "mounts: persistent: Input"),
    ("templates", "create", (), {**T, "mounts": {"persistent": {"size": 20}}}, "path: is req"),
    ("templates", "create", (), {**T, "extra_body": {"image": "x"}}, "extra_body repeats image"),
    ("templates", "create", (), {**T, "extra_body": {"f": float("nan")}}, "is not JSON"),
    ("templates", "update", ("t",), {"env": {"A": object()}}, "the body is not JSON"),
    ("pods", "create", (), {"image": "i", "gpu": {"count": 2}}, "gpu: id: is required"),
    ("pods", "create", (), {"image": "i", "cpu": "cpu3c"}, "cpu: Input should be a valid dict"),
    ("pods", "get", ("",), {}, "pod id must be a non-empty string"),
    ("pods", "stop", (7,), {}, "pod id must be a non-empty string"),
    ("pods", "update", ("p",), {"mounts": {"network": [{"path": "/d"}]}}, "network.0.volumeId"),
    ("endpoints", "create", (), {"template_id": "t", "workers": 3}, "workers: Input should be"),
    ("endpoints", "create", (), {"template_id": "t", "scaling": {"queue_delay": 2}}, "type: is"),
    ("endpoints", "create", (), {"template_id": "t", "cpu": [{"id": "c"}]}, "cpu.0: vcpuCount: is"),
    ("endpoints", "update", ("e",), {"gpu": {"count": "two"}}, "gpu: count: Input should be"),
    ("endpoints", "get", ("",), {}, "endpoint id must be a non-empty string"),
    ("network_volumes", "get", ("",), {}, "network volume id must be a non-empty string"),
    ("registry_auths", "create", (), {"name": "", "username": "u", "password": "p"}, "name must"),
    ("registry_auths", "create", (), {"name": "r", "username": 7, "password": "p"}, "username"),
    ("registry_auths", "get", ("",), {}, "container registry auth id must be a non-empty"),
    ("billing", "pods", (), {"bucket_size": "minute"}, "bucket_size (bucketSize): Input should"),
    ("billing", "pods", (), {"start_time": "last week"}, "start_time (startTime): Input should"),
    ("billing", "pods", (), {"start_time": 2026}, "start_time (startTime): a time is a date"),
    ("billing", "serverless", (), {"end_time": 1.7e9}, "not a number (1700000000.0)"),
    (
        "billing",
        "pods",
        (),
        {"start_time": "2026-01-03T00:00:00Z", "end_time": "2026-01-02"},
        "startTime (2026-01-03T00:00:00+00:00) must not be after endTime",
    ),
    ("billing", "summary", (), {"last_n": 0}, "last_n (lastN): must be a whole number from 1"),
    ("billing", "summary", (), {"last_n": 2, "end_time": "2026-01-02"}, "not both"),
]


def case_id(case: tuple[Any, ...]) -> str:
    resource, method, _, _, expected = case
    return f"{resource}.{method}:{expected[:30]}"


@pytest.mark.parametrize("case", LOCAL, ids=[case_id(c) for c in LOCAL])
async def test_refused_locally_and_nothing_sent(flavour: str, case: tuple[Any, ...]) -> None:
    resource, method, args, kw, expected = case
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(BadRequest) as info:
        await call(client, getattr(getattr(client, resource), method), *args, **kw)
    error = info.value
    assert expected in str(error) and "\n" not in str(error)
    assert error.sent is False and error.status == 400
    if "id must be" not in expected:
        assert f"{resource}.{method} refused locally, nothing was sent: " in str(error)
    assert recorder.requests == []


async def test_the_password_of_a_refused_auth_is_not_in_the_error(flavour: str) -> None:
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(BadRequest) as info:
        await call(client, client.registry_auths.create, name="r", username="u", password="")
    assert "password must be a non-empty string" in str(info.value)
    with pytest.raises(BadRequest) as info:
        await call(client, client.registry_auths.create, name="r", username=7, password="s3cr3t")
    assert "s3cr3t" not in str(info.value) and "s3cr3t" not in repr(info.value.args)
    assert recorder.requests == []


E = {"name": "e", "image": "echo", "gpu": {"pools": ["ADA_24"]}}
"""The smallest endpoint: no template, its own image."""

SERVICE: list[tuple[str, dict[str, Any], str]] = [
    ("templates", {**T, "name": ""}, "name"),
    ("templates", {**T, "disk": 0}, "disk"),
    ("templates", {**T, "ports": ["8888"]}, "ports.0"),
    ("templates", {**T, "category": "TPU"}, "category"),
    ("templates", {**T, "mounts": {"persistent": {"size": 5, "path": "/w"}}}, "mounts"),
    ("templates", {**T, "allowed_cuda_versions": ["twelve"]}, "allowedCudaVersions.0"),
    ("pods", {"image": "i", "gpu": {"id": "GTX 1"}}, "gpu.id"),
    ("pods", {"image": "i", "gpu": {"id": "NVIDIA A40", "count": 0}}, "gpu.count"),
    ("pods", {"image": "i", "cpu": {"id": "cpu3c", "vcpu_count": 1}}, "cpu.vcpuCount"),
    ("pods", {"image": "i", "gpu": {"id": "NVIDIA A40"}, "cloud": "PRIVATE"}, "cloud"),
    ("pods", {"image": "i", "gpu": {"id": "NVIDIA A40"}, "data_center_ids": ["MARS-1"]}, "data"),
    ("endpoints", {**E, "workers": {"max": -1}}, "workers.max"),
    ("endpoints", {**E, "workers": {"idle_timeout": 0}}, "workers.idleTimeout"),
    ("endpoints", {**E, "scaling": {"type": "CPU", "queue_delay": 4}}, "scaling"),
    ("endpoints", {**E, "gpu": {"pools": ["NOPE"]}}, "gpu.pools.0"),
    ("endpoints", {**E, "cpu": [{"id": "cpu5m", "vcpu_count": 2}]}, "cpu.0"),
    ("endpoints", {**E, "execution_timeout_ms": 10}, "timeout"),
    ("endpoints", {**E, "workers": {"min": 4, "max": 3}}, "workers.min"),
    ("network_volumes", {"name": "v", "size": 5000, "data_center": "EU-RO-1"}, "size"),
    ("network_volumes", {"name": "v", "size": 10, "data_center": "EU-XX-9"}, "dataCenter"),
]


@pytest.mark.parametrize(
    ("resource", "kw", "field"), SERVICE, ids=[f"{r}:{f}" for r, _, f in SERVICE]
)
async def test_refused_by_the_service_naming_the_field_and_nothing_made(
    v2: V2Harness, resource: str, kw: dict[str, Any], field: str
) -> None:
    fn = getattr(v2.client, resource).create
    with pytest.raises(BadRequest) as info:
        await v2.call(fn, **kw)
    error = info.value
    assert error.sent is True and error.status in (400, 422)
    assert field.split(".")[0] in str(error) and "\n" not in str(error)
    assert await v2.call(getattr(v2.client, resource).list) == []
