"""The field rules (docs/behaviour.md#management) and the reference's, as the input models
enforce them.

Each refusal must name the field (by its wire name) and the rule, since the emulator
answers 400 with exactly this text and the client raises it before sending.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import nbext.models.v1 as m
from nbext.models import DataCenterId, GpuTypeId, explain


def refusal(model: type[BaseModel], body: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        model.model_validate(body)
    return explain(info.value)


def test_template_defaults_are_the_services() -> None:
    t = m.TemplateCreateInput.model_validate({"name": "t", "imageName": "img:1"})
    assert t.model_dump(by_alias=True, mode="json") == {
        "name": "t",
        "imageName": "img:1",
        "category": "NVIDIA",
        "containerDiskInGb": 50,
        "containerRegistryAuthId": None,
        "dockerEntrypoint": [],
        "dockerStartCmd": [],
        "env": {},
        "isPublic": False,
        "isServerless": False,
        "ports": ["8888/http", "22/tcp"],
        "readme": "",
        "volumeInGb": 20,
        "volumeMountPath": "/workspace",
    }
    # Only what the caller set goes on the wire: the service applies its own defaults.
    assert t.to_wire() == {"name": "t", "imageName": "img:1"}


def test_defaults_are_not_shared_between_instances() -> None:
    a = m.TemplateCreateInput(name="a", image_name="i")
    a.ports.append("9000/tcp")
    a.env["X"] = "1"
    b = m.TemplateCreateInput(name="b", image_name="i")
    assert b.ports == ["8888/http", "22/tcp"] and b.env == {}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, "name: is required; imageName: is required"),
        ({"name": "  ", "imageName": "i"}, "name: must not be empty"),
        ({"name": "t", "imageName": ""}, "imageName: must not be empty"),
        ({"name": "t", "imageName": "i", "category": "TPU"}, "category: Input should be"),
        ({"name": "t", "imageName": "i", "category": "TPU"}, "got 'TPU'"),
        ({"name": "t", "imageName": "i", "ports": ["8888"]}, "ports.0: each port must be"),
        ({"name": "t", "imageName": "i", "ports": ["22/udp"]}, "protocol http or tcp"),
        ({"name": "t", "imageName": "i", "ports": ["0/tcp"]}, "number 1-65535"),
        ({"name": "t", "imageName": "i", "ports": ["70000/tcp"]}, "got '70000/tcp'"),
        ({"name": "t", "imageName": "i", "ports": "8888/http"}, "ports: Input should be"),
        ({"name": "t", "imageName": "i", "volumeMountPath": "data"}, "volumeMountPath: must be"),
        ({"name": "t", "imageName": "i", "env": {"A": 1}}, "env.A: Input should be a valid str"),
        ({"name": "t", "imageName": "i", "env": ["A=1"]}, "env: Input should be a valid dict"),
        ({"name": "t", "imageName": "i", "containerDiskInGb": "50"}, "containerDiskInGb: Input"),
        ({"name": "t", "imageName": "i", "containerDiskInGb": -1}, "greater than or equal to 0"),
        ({"name": "t", "imageName": "i", "volumeInGb": 2.5}, "volumeInGb: Input should be"),
        ({"name": "t", "imageName": "i", "isPublic": "yes"}, "isPublic: Input should be"),
        ({"name": "t", "imageName": "i", "isServerless": 1}, "isServerless: Input should be"),
        ({"name": "t", "imageName": "i", "readme": None}, "readme: must not be null"),
        ({"name": "t", "imageName": "i", "dockerStartCmd": "bash"}, "dockerStartCmd: Input"),
        ({"name": 5, "imageName": "i"}, "name: Input should be a valid string"),
    ],
)
def test_template_rules(body: dict[str, Any], expected: str) -> None:
    assert expected in refusal(m.TemplateCreateInput, body)


def test_unknown_fields_are_kept_not_refused() -> None:
    t = m.TemplateCreateInput.model_validate({"name": "t", "imageName": "i", "newField": 1})
    assert t.to_wire()["newField"] == 1
    pod = m.Pod.model_validate({"id": "p", "futureThing": {"a": 1}})
    assert pod.to_wire() == {"id": "p", "futureThing": {"a": 1}}


def test_snake_case_names_work_in_python() -> None:
    t = m.TemplateCreateInput(name="t", image_name="i", is_serverless=True, volume_in_gb=0)
    assert t.to_wire() == {"name": "t", "imageName": "i", "isServerless": True, "volumeInGb": 0}


def test_pod_needs_an_image_or_a_template() -> None:
    assert refusal(m.PodCreateInput, {}) == (
        "imageName is required unless templateId names a template that gives the image"
    )
    assert m.PodCreateInput.model_validate({"templateId": "abc"}).image_name is None
    pod = m.PodCreateInput.model_validate({"imageName": "i"})
    assert pod.gpu_count == 1 and pod.name == "my pod" and pod.cloud_type == "SECURE"
    assert pod.data_center_ids == list(DataCenterId)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"gpuCount": 0}, "gpuCount: Input should be greater than or equal to 1"),
        ({"name": "x" * 192}, "name: String should have at most 191 characters"),
        ({"gpuTypeIds": ["NVIDIA GTX 1"]}, "gpuTypeIds.0: Input should be"),
        ({"cloudType": "PRIVATE"}, "cloudType: Input should be 'SECURE' or 'COMMUNITY'"),
        ({"computeType": "TPU"}, "computeType: Input should be 'GPU' or 'CPU'"),
        ({"dataCenterIds": ["MARS-1"]}, "dataCenterIds.0: Input should be"),
        ({"allowedCudaVersions": ["10.0"]}, "allowedCudaVersions.0: Input should be"),
        ({"cpuFlavorIds": ["cpu9x"]}, "cpuFlavorIds.0: Input should be"),
        ({"gpuTypePriority": "cheapest"}, "gpuTypePriority: Input should be"),
        ({"minDownloadMbps": -1}, "minDownloadMbps: Input should be greater than or equal to 0"),
        ({"locked": None}, "locked: must not be null"),
    ],
)
def test_pod_rules(body: dict[str, Any], expected: str) -> None:
    assert expected in refusal(m.PodCreateInput, {"imageName": "i", **body})


def test_pod_disk_sizes_are_nullable_as_the_reference_says() -> None:
    pod = m.PodCreateInput.model_validate(
        {"imageName": "i", "containerDiskInGb": None, "volumeInGb": None}
    )
    assert pod.container_disk_in_gb is None and pod.volume_in_gb is None
    update = m.PodUpdateInput.model_validate({"volumeInGb": None})
    assert update.model_fields_set == {"volume_in_gb"}
    assert "name: must not be null" in refusal(m.PodUpdateInput, {"name": None})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, "templateId: is required"),
        ({"templateId": ""}, "templateId: must not be empty"),
        ({"templateId": "t", "workersMin": 4}, "workersMin (4) must not exceed workersMax (3)"),
        ({"templateId": "t", "workersMax": -1}, "workersMax: Input should be greater than"),
        ({"templateId": "t", "idleTimeout": 0}, "idleTimeout: Input should be greater than"),
        ({"templateId": "t", "idleTimeout": 3601}, "idleTimeout: Input should be less than"),
        ({"templateId": "t", "scalerValue": 0}, "scalerValue: Input should be greater than"),
        ({"templateId": "t", "scalerType": "CPU_LOAD"}, "scalerType: Input should be"),
        ({"templateId": "t", "executionTimeoutMs": 10}, "executionTimeoutMs: Input should be"),
        ({"templateId": "t", "cpuFlavorIds": ["cpu5m"]}, "cpu5m is not offered for serverless"),
        ({"templateId": "t", "minCudaVersion": "9.0"}, "minCudaVersion: Input should be"),
    ],
)
def test_endpoint_rules(body: dict[str, Any], expected: str) -> None:
    assert expected in refusal(m.EndpointCreateInput, body)


def test_endpoint_defaults() -> None:
    e = m.EndpointCreateInput.model_validate({"templateId": "t"})
    assert (e.workers_min, e.workers_max, e.idle_timeout) == (0, 3, 5)
    assert (e.scaler_type, e.scaler_value, e.gpu_count) == ("QUEUE_DELAY", 4, 1)
    assert e.execution_timeout_ms is None and e.compute_type == "GPU"


def test_endpoint_update_checks_worker_order_when_both_are_given() -> None:
    assert "workersMin (2) must not exceed workersMax (1)" in refusal(
        m.EndpointUpdateInput, {"workersMin": 2, "workersMax": 1}
    )
    assert m.EndpointUpdateInput.model_validate({"workersMin": 9}).workers_min == 9


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"name": "v", "size": 4001, "dataCenterId": "EU-RO-1"}, "size: Input should be less"),
        ({"name": "v", "size": -1, "dataCenterId": "EU-RO-1"}, "size: Input should be greater"),
        ({"name": "v", "size": 10, "dataCenterId": "EU-XX-9"}, "dataCenterId: Input should be"),
        ({"size": 10, "dataCenterId": "EU-RO-1"}, "name: is required"),
    ],
)
def test_network_volume_rules(body: dict[str, Any], expected: str) -> None:
    assert expected in refusal(m.NetworkVolumeCreateInput, body)


def test_registry_auth_password_never_shows() -> None:
    auth = m.ContainerRegistryAuthCreateInput(name="n", username="u", password="s3cr3t-pw")
    assert "s3cr3t-pw" not in repr(auth) and "s3cr3t-pw" not in str(auth)
    assert auth.to_wire()["password"] == "s3cr3t-pw"  # what goes to the service
    text = refusal(m.ContainerRegistryAuthCreateInput, {"name": "n", "username": "u"})
    assert text == "password: is required"
    text = refusal(
        m.ContainerRegistryAuthCreateInput, {"name": "n", "username": 7, "password": "s3cr3t-pw"}
    )
    assert "s3cr3t-pw" not in text
    assert "password: " in refusal(
        m.ContainerRegistryAuthCreateInput, {"name": "n", "username": "u", "password": ""}
    )


def test_response_datetimes_are_aware() -> None:
    pod = m.Pod.model_validate({"lastStartedAt": "2024-07-12T19:14:40.144Z"})
    assert pod.last_started_at == datetime(2024, 7, 12, 19, 14, 40, 144000, tzinfo=UTC)
    go = m.Pod.model_validate({"lastStartedAt": "2024-07-12 19:14:40.144 +0000 UTC"})
    assert go.last_started_at == pod.last_started_at
    naive = m.Endpoint.model_validate({"createdAt": "2024-07-12T19:14:40"})
    assert naive.created_at is not None and naive.created_at.tzinfo is not None
    record = m.BillingRecord.model_validate({"time": "2023-01-01T00:00:00Z", "amount": 1.5})
    assert record.time == datetime(2023, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError):
        m.Pod.model_validate({"lastStartedAt": "yesterday"})


def test_response_numbers_written_as_strings_are_read() -> None:
    """The reference's own example writes ``costPerHr`` as ``"0.74"``."""
    assert m.Pod.model_validate({"costPerHr": "0.74"}).cost_per_hr == 0.74


def test_billing_queries() -> None:
    q = m.PodBillingQuery.model_validate({"bucketSize": "hour", "grouping": "podId"})
    assert q.to_params() == [("bucketSize", "hour"), ("grouping", "podId")]
    assert m.PodBillingQuery().bucket_size == "day"
    assert m.PodBillingQuery().grouping == "gpuTypeId"
    assert m.EndpointBillingQuery().grouping == "endpointId"
    q2 = m.EndpointBillingQuery(
        gpu_type_id=[GpuTypeId.A40, GpuTypeId.L4],
        start_time=datetime(2026, 1, 1, 12),
        end_time=datetime(2026, 1, 2, tzinfo=UTC),
    )
    assert q2.to_params() == [
        ("startTime", "2026-01-01T12:00:00Z"),
        ("endTime", "2026-01-02T00:00:00Z"),
        ("gpuTypeId", "NVIDIA A40"),
        ("gpuTypeId", "NVIDIA L4"),
    ]
    assert "bucketSize: Input should be 'hour', 'day', 'week', 'month' or 'year'" in refusal(
        m.NetworkVolumeBillingQuery, {"bucketSize": "minute"}
    )
    assert "grouping: Input should be 'podId' or 'gpuTypeId'" in refusal(
        m.PodBillingQuery, {"grouping": "endpointId"}
    )
    assert "startTime (2026-01-03T00:00:00+00:00) must not be after endTime" in refusal(
        m.PodBillingQuery, {"startTime": "2026-01-03T00:00:00Z", "endTime": "2026-01-02"}
    )
    assert "startTime: Input should be a valid datetime" in refusal(
        m.PodBillingQuery, {"startTime": "last week"}
    )
    for number in (2026, "2026", 1.7e9, " -5 "):  # not seconds since 1970
        assert "a time is a date or date and time in ISO 8601" in refusal(
            m.PodBillingQuery, {"startTime": number}
        ), number
    assert m.PodBillingQuery.model_validate({"endTime": "2026-11-01"}).end_time == datetime(
        2026, 11, 1, tzinfo=UTC
    )


def test_listing_queries() -> None:
    q = m.PodListQuery.model_validate(
        {"includeMachine": "true", "gpuTypeId": ["NVIDIA A40"], "desiredStatus": "EXITED"}
    )
    assert q.include_machine is True and q.desired_status == m.PodStatus.EXITED
    assert q.to_params() == [
        ("includeMachine", "true"),
        ("desiredStatus", "EXITED"),
        ("gpuTypeId", "NVIDIA A40"),
    ]
    assert "desiredStatus: Input should be" in refusal(m.PodListQuery, {"desiredStatus": "GONE"})
    assert "includeTemplate: Input should be a valid boolean" in refusal(
        m.EndpointIncludes, {"includeTemplate": "perhaps"}
    )
    assert m.TemplateIncludes().to_params() == []
