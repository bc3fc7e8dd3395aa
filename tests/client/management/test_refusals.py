"""Bad input to a management call is refused before anything is sent.

Each case breaks one rule of the documented field table (docs/behaviour.md#templates)
or the reference (through the shared input models) and expects BadRequest with
``sent=False``, a message that names the keyword, its wire name and the rule, and no
request on the wire.
"""

from __future__ import annotations

from typing import Any

import pytest

from nbext.client import BadRequest

from .conftest import Recorder, call, recorded_client

pytestmark = pytest.mark.anyio

T = {"name": "t", "image_name": "img:1"}
"""The smallest valid template."""

CASES: list[tuple[str, str, tuple[Any, ...], dict[str, Any], str]] = [
    # ---- templates.create: the documented field table
    ("templates", "create", (), {"name": None, "image_name": "i"}, "name: is required"),
    ("templates", "create", (), {"name": "  ", "image_name": "i"}, "name: must not be empty"),
    ("templates", "create", (), {"name": 5, "image_name": "i"}, "name: Input should be a valid"),
    ("templates", "create", (), {"name": "t", "image_name": ""}, "image_name (imageName): must"),
    ("templates", "create", (), {**T, "category": "TPU"}, "category: Input should be 'NVIDIA'"),
    ("templates", "create", (), {**T, "category": "TPU"}, "got 'TPU'"),
    (
        "templates",
        "create",
        (),
        {**T, "container_disk_in_gb": -1},
        "container_disk_in_gb (containerDiskInGb): Input should be greater than or equal to 0",
    ),
    ("templates", "create", (), {**T, "container_disk_in_gb": "50"}, "valid integer"),
    ("templates", "create", (), {**T, "volume_in_gb": 2.5}, "volume_in_gb (volumeInGb): Input"),
    ("templates", "create", (), {**T, "ports": ["8888"]}, "ports.0: each port must be"),
    ("templates", "create", (), {**T, "ports": ["22/udp"]}, "protocol http or tcp"),
    ("templates", "create", (), {**T, "ports": ["0/tcp"]}, "number 1-65535"),
    ("templates", "create", (), {**T, "ports": "8888/http"}, "ports: Input should be a valid list"),
    (
        "templates",
        "create",
        (),
        {**T, "volume_mount_path": "data"},
        "volume_mount_path (volumeMountPath): must be an absolute path",
    ),
    ("templates", "create", (), {**T, "env": {"A": 1}}, "env.A: Input should be a valid string"),
    ("templates", "create", (), {**T, "env": ["A=1"]}, "env: Input should be a valid dict"),
    ("templates", "create", (), {**T, "is_public": "yes"}, "is_public (isPublic): Input should"),
    ("templates", "create", (), {**T, "is_serverless": 1}, "is_serverless (isServerless):"),
    ("templates", "create", (), {**T, "readme": 7}, "readme: Input should be a valid string"),
    ("templates", "create", (), {**T, "docker_start_cmd": "bash"}, "docker_start_cmd (docker"),
    ("templates", "create", (), {**T, "docker_entrypoint": [1]}, "docker_entrypoint (dockerEn"),
    (
        "templates",
        "create",
        (),
        {**T, "container_registry_auth_id": 3},
        "container_registry_auth_id (containerRegistryAuthId): Input should be a valid string",
    ),
    ("templates", "create", (), {**T, "extra_body": {"imageName": "x"}}, "give it as a keyword"),
    ("templates", "create", (), {**T, "extra_body": {"future": float("nan")}}, "is not JSON"),
    # ---- templates: the other operations
    ("templates", "update", ("tpl",), {"name": ""}, "name: must not be empty"),
    ("templates", "update", ("tpl",), {"ports": ["x/http"]}, "ports.0: each port must be"),
    ("templates", "update", ("tpl",), {"volume_in_gb": -5}, "volume_in_gb (volumeInGb)"),
    ("templates", "update", ("tpl",), {"name": "n", "method": "PUT"}, "method must be 'PATCH'"),
    ("templates", "update", ("",), {"name": "n"}, "template id must be a non-empty string"),
    ("templates", "get", ("",), {}, "template id must be a non-empty string"),
    (
        "templates",
        "list",
        (),
        {"include_public_templates": "perhaps"},
        "include_public_templates (includePublicTemplates): Input should be a valid boolean",
    ),
    ("templates", "delete", (None,), {}, "template id must be a non-empty string"),
    # ---- pods.create: the reference's rules
    ("pods", "create", (), {}, "imageName is required unless templateId names a template"),
    ("pods", "create", (), {"image_name": "i", "gpu_count": 0}, "gpu_count (gpuCount): Input"),
    ("pods", "create", (), {"image_name": "i", "name": "x" * 192}, "at most 191 characters"),
    ("pods", "create", (), {"image_name": "i", "gpu_type_ids": ["GTX 1"]}, "gpu_type_ids (gpuT"),
    ("pods", "create", (), {"image_name": "i", "cloud_type": "PRIVATE"}, "'SECURE' or 'COMMUN"),
    ("pods", "create", (), {"image_name": "i", "compute_type": "TPU"}, "'GPU' or 'CPU'"),
    ("pods", "create", (), {"image_name": "i", "data_center_ids": ["MARS-1"]}, "data_center_id"),
    ("pods", "create", (), {"image_name": "i", "allowed_cuda_versions": ["10.0"]}, "allowed_cu"),
    ("pods", "create", (), {"image_name": "i", "cpu_flavor_ids": ["cpu9x"]}, "cpu_flavor_ids"),
    ("pods", "create", (), {"image_name": "i", "gpu_type_priority": "cheap"}, "gpu_type_prio"),
    ("pods", "create", (), {"image_name": "i", "min_download_mbps": -1}, "greater than or equal"),
    ("pods", "create", (), {"image_name": "i", "vcpu_count": 0}, "vcpu_count (vcpuCount)"),
    ("pods", "create", (), {"image_name": "i", "min_ram_per_gpu": -1}, "min_ram_per_gpu (minRAM"),
    ("pods", "create", (), {"image_name": "i", "locked": "no"}, "locked: Input should be a valid"),
    ("pods", "create", (), {"image_name": "i", "ports": ["80/udp"]}, "protocol http or tcp"),
    ("pods", "create", (), {"image_name": "i", "volume_mount_path": "w"}, "absolute path"),
    # ---- pods: the other operations
    ("pods", "list", (), {"desired_status": "GONE"}, "desired_status (desiredStatus): Input"),
    ("pods", "list", (), {"name": "x" * 192}, "name: String should have at most 191 characters"),
    ("pods", "list", (), {"compute_type": "TPU"}, "compute_type (computeType): Input should be"),
    ("pods", "get", ("",), {}, "pod id must be a non-empty string"),
    ("pods", "get", ("p",), {"include_machine": "perhaps"}, "include_machine (includeMachine)"),
    ("pods", "update", ("p",), {"name": "x" * 192}, "name: String should have at most 191"),
    ("pods", "update", ("p",), {"volume_mount_path": "rel"}, "must be an absolute path"),
    ("pods", "update", ("p",), {"image_name": ""}, "image_name (imageName): must not be empty"),
    ("pods", "update", ("p",), {"locked": "yes"}, "locked: Input should be a valid boolean"),
    ("pods", "update", ("p",), {"name": "n", "method": "GET"}, "method must be 'PATCH' or 'POST'"),
    ("pods", "delete", ("",), {}, "pod id must be a non-empty string"),
    ("pods", "start", ("",), {}, "pod id must be a non-empty string"),
    ("pods", "stop", (7,), {}, "pod id must be a non-empty string"),
    ("pods", "restart", ("",), {}, "pod id must be a non-empty string"),
    ("pods", "reset", ("",), {}, "pod id must be a non-empty string"),
    # ---- endpoints
    ("endpoints", "create", (), {"template_id": ""}, "template_id (templateId): must not be"),
    ("endpoints", "create", (), {"template_id": None}, "template_id (templateId): is required"),
    (
        "endpoints",
        "create",
        (),
        {"template_id": "t", "workers_min": 4},
        "workersMin (4) must not exceed workersMax (3)",
    ),
    ("endpoints", "create", (), {"template_id": "t", "workers_max": -1}, "workers_max (workersM"),
    ("endpoints", "create", (), {"template_id": "t", "idle_timeout": 0}, "idle_timeout (idleT"),
    ("endpoints", "create", (), {"template_id": "t", "idle_timeout": 3601}, "less than or equal"),
    ("endpoints", "create", (), {"template_id": "t", "scaler_value": 0}, "scaler_value (scale"),
    ("endpoints", "create", (), {"template_id": "t", "scaler_type": "CPU"}, "scaler_type (sca"),
    (
        "endpoints",
        "create",
        (),
        {"template_id": "t", "execution_timeout_ms": 10},
        "execution_timeout_ms (executionTimeoutMs): Input should be greater than or equal to 5000",
    ),
    ("endpoints", "create", (), {"template_id": "t", "cpu_flavor_ids": ["cpu5m"]}, "not offered"),
    ("endpoints", "create", (), {"template_id": "t", "min_cuda_version": "9.0"}, "min_cuda_vers"),
    ("endpoints", "create", (), {"template_id": "t", "gpu_count": 0}, "gpu_count (gpuCount)"),
    ("endpoints", "create", (), {"template_id": "t", "name": "e" * 192}, "at most 191"),
    ("endpoints", "create", (), {"template_id": "t", "flashboot": "on"}, "flashboot: Input"),
    (
        "endpoints",
        "update",
        ("e",),
        {"workers_min": 2, "workers_max": 1},
        "workersMin (2) must not exceed workersMax (1)",
    ),
    ("endpoints", "update", ("e",), {"idle_timeout": 0}, "idle_timeout (idleTimeout): Input"),
    ("endpoints", "update", ("e",), {"template_id": ""}, "template_id (templateId): must not be"),
    ("endpoints", "get", ("",), {}, "endpoint id must be a non-empty string"),
    ("endpoints", "list", (), {"include_workers": "perhaps"}, "include_workers (includeWorkers)"),
    ("endpoints", "delete", ("",), {}, "endpoint id must be a non-empty string"),
    # ---- network volumes
    (
        "network_volumes",
        "create",
        (),
        {"name": "v", "size": 4001, "data_center_id": "EU-RO-1"},
        "size: Input should be less than or equal to 4000",
    ),
    (
        "network_volumes",
        "create",
        (),
        {"name": "v", "size": -1, "data_center_id": "EU-RO-1"},
        "size: Input should be greater than or equal to 0",
    ),
    (
        "network_volumes",
        "create",
        (),
        {"name": "v", "size": 10, "data_center_id": "EU-XX-9"},
        "data_center_id (dataCenterId): Input should be",
    ),
    (
        "network_volumes",
        "create",
        (),
        {"name": "", "size": 1, "data_center_id": "EU-RO-1"},
        "empty",
    ),
    ("network_volumes", "update", ("v",), {"size": 5000}, "size: Input should be less than"),
    ("network_volumes", "update", ("v",), {"name": " "}, "name: must not be empty"),
    ("network_volumes", "get", ("",), {}, "network volume id must be a non-empty string"),
    ("network_volumes", "delete", ("",), {}, "network volume id must be a non-empty string"),
    # ---- container registry auths
    ("registry_auths", "create", (), {"name": "r", "username": "u", "password": ""}, "password:"),
    ("registry_auths", "create", (), {"name": "", "username": "u", "password": "p"}, "name: must"),
    ("registry_auths", "create", (), {"name": "r", "username": "", "password": "p"}, "username:"),
    ("registry_auths", "get", ("",), {}, "container registry auth id must be a non-empty string"),
    ("registry_auths", "delete", ("",), {}, "container registry auth id must be a non-empty"),
    # ---- billing
    (
        "billing",
        "pods",
        (),
        {"bucket_size": "minute"},
        "bucket_size (bucketSize): Input should be 'hour', 'day', 'week', 'month' or 'year'",
    ),
    ("billing", "pods", (), {"grouping": "endpointId"}, "Input should be 'podId' or 'gpuTypeId'"),
    ("billing", "pods", (), {"gpu_type_id": "NVIDIA GTX 1"}, "gpu_type_id (gpuTypeId): Input"),
    ("billing", "pods", (), {"start_time": "last week"}, "start_time (startTime): Input should"),
    ("billing", "pods", (), {"start_time": 2026}, "start_time (startTime): a time is a date"),
    ("billing", "endpoints", (), {"end_time": 1.7e9}, "not a number (1700000000.0)"),
    (
        "billing",
        "pods",
        (),
        {"start_time": "2026-01-03T00:00:00Z", "end_time": "2026-01-02"},
        "startTime (2026-01-03T00:00:00+00:00) must not be after endTime",
    ),
    ("billing", "endpoints", (), {"grouping": "templateId"}, "grouping: Input should be"),
    ("billing", "endpoints", (), {"data_center_id": ["MARS-1"]}, "data_center_id (dataCenterId)"),
    ("billing", "endpoints", (), {"gpu_type_id": "GTX 1"}, "gpu_type_id (gpuTypeId).0: Input"),
    ("billing", "network_volumes", (), {"bucket_size": "minute"}, "bucket_size (bucketSize)"),
    ("billing", "network_volumes", (), {"end_time": "31/01/2026"}, "end_time (endTime): Input"),
]


def case_id(case: tuple[Any, ...]) -> str:
    resource, method, _, _, expected = case
    return f"{resource}.{method}:{expected[:30]}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
async def test_refused_locally_and_nothing_sent(flavour: str, case: tuple[Any, ...]) -> None:
    resource, method, args, kw, expected = case
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(BadRequest) as info:
        await call(client, getattr(getattr(client, resource), method), *args, **kw)
    error = info.value
    assert expected in str(error)
    assert error.sent is False and error.status == 400
    if "id must be" not in expected:
        assert f"{resource}.{method} refused locally, nothing was sent: " in str(error)
    assert recorder.requests == []


async def test_a_refusal_lists_every_bad_field_at_once(flavour: str) -> None:
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(BadRequest) as info:
        await call(
            client,
            client.templates.create,
            name="",
            image_name="i",
            ports=["1/tcp", "nope"],
            volume_mount_path="rel",
        )
    text = str(info.value)
    assert "name: must not be empty" in text
    assert "ports.1: each port must be" in text
    assert "volume_mount_path (volumeMountPath): must be an absolute path" in text
    assert recorder.requests == []


async def test_the_password_of_a_refused_auth_is_not_in_the_error(flavour: str) -> None:
    recorder = Recorder()
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(BadRequest) as info:
        await call(client, client.registry_auths.create, name="r", username=7, password="s3cr3t-pw")
    assert "username: Input should be a valid string" in str(info.value)
    assert "s3cr3t-pw" not in str(info.value) and "s3cr3t-pw" not in repr(info.value.args)
    assert recorder.requests == []
