"""What each management call puts on the wire, and how answers are read.

The emulator tests show the calls work; these pin down the requests themselves (paths
under ``base_url``, wire names, only what the caller gave, query encodings, time
formats) against a recording transport, and the reading of answers the emulator
would never send (unknown fields, empty bodies, wrong shapes).
"""

from __future__ import annotations

import inspect
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

import nbext.models as m
from nbext.client import (
    APIError,
    AsyncBilling,
    AsyncClient,
    AsyncEndpoints,
    AsyncNetworkVolumes,
    AsyncPods,
    AsyncRegistryAuths,
    AsyncTemplates,
    Billing,
    Client,
    Endpoints,
    NetworkVolumes,
    Pods,
    RegistryAuths,
    Templates,
)

from ..conftest import KEY
from .conftest import Recorder, call, recorded_client

pytestmark = pytest.mark.anyio
BASE = "https://mgmt.example/v1"


def query_pairs(request: httpx.Request) -> list[tuple[str, str]]:
    return list(request.url.params.multi_items())


async def test_a_create_sends_only_what_was_given_under_wire_names(flavour: str) -> None:
    recorder = Recorder(body={"id": "t1", "name": "t", "imageName": "img:1"})
    client = recorded_client(flavour == "async", recorder)
    template = await call(
        client, client.templates.create, name="t", image_name="img:1", is_serverless=True
    )
    request = recorder.last
    assert (request.method, str(request.url)) == ("POST", f"{BASE}/templates")
    assert recorder.last_json() == {"name": "t", "imageName": "img:1", "isServerless": True}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert isinstance(template, m.Template) and template.image_name == "img:1"


async def test_calls_go_to_base_url_and_jobs_to_serverless_url(flavour: str) -> None:
    recorder = Recorder(body=[])
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.endpoints.list)
    assert str(recorder.last.url) == f"{BASE}/endpoints"
    recorder.body = {"id": "j", "status": "IN_QUEUE"}
    await call(client, client.endpoint("e1").run, {"x": 1})
    assert str(recorder.last.url) == "https://jobs.example/v2/e1/run"


@pytest.mark.parametrize(
    ("resource", "path"),
    [
        ("templates", "templates/x"),
        ("pods", "pods/x"),
        ("endpoints", "endpoints/x"),
        ("network_volumes", "networkvolumes/x"),
    ],
)
async def test_update_is_a_patch_or_its_post_synonym(
    flavour: str, resource: str, path: str
) -> None:
    recorder = Recorder(body={"id": "x"})
    client = recorded_client(flavour == "async", recorder)
    update = getattr(client, resource).update
    await call(client, update, "x", name="renamed")
    assert (recorder.last.method, str(recorder.last.url)) == ("PATCH", f"{BASE}/{path}")
    await call(client, update, "x", name="renamed", method="POST")
    assert (recorder.last.method, str(recorder.last.url)) == ("POST", f"{BASE}/{path}/update")
    assert recorder.last_json() == {"name": "renamed"}


async def test_every_operation_has_its_method_and_path(flavour: str) -> None:
    recorder = Recorder(body={})
    client = recorded_client(flavour == "async", recorder)
    c = client
    expected: list[tuple[Any, tuple[Any, ...], dict[str, Any], str, str, Any]] = [
        (c.templates.create, (), {"name": "t", "image_name": "i"}, "POST", "templates", {}),
        (c.templates.list, (), {}, "GET", "templates", []),
        (c.templates.get, ("t1",), {}, "GET", "templates/t1", {}),
        (c.templates.update, ("t1",), {"readme": "r"}, "PATCH", "templates/t1", {}),
        (c.templates.delete, ("t1",), {}, "DELETE", "templates/t1", None),
        (c.pods.create, (), {"image_name": "i"}, "POST", "pods", {}),
        (c.pods.list, (), {}, "GET", "pods", []),
        (c.pods.get, ("p1",), {}, "GET", "pods/p1", {}),
        (c.pods.update, ("p1",), {"name": "n"}, "PATCH", "pods/p1", {}),
        (c.pods.delete, ("p1",), {}, "DELETE", "pods/p1", None),
        (c.pods.start, ("p1",), {}, "POST", "pods/p1/start", {}),
        (c.pods.stop, ("p1",), {}, "POST", "pods/p1/stop", {}),
        (c.pods.restart, ("p1",), {}, "POST", "pods/p1/restart", {}),
        (c.pods.reset, ("p1",), {}, "POST", "pods/p1/reset", {}),
        (c.endpoints.create, (), {"template_id": "t"}, "POST", "endpoints", {}),
        (c.endpoints.list, (), {}, "GET", "endpoints", []),
        (c.endpoints.get, ("e1",), {}, "GET", "endpoints/e1", {}),
        (c.endpoints.update, ("e1",), {"workers_max": 5}, "PATCH", "endpoints/e1", {}),
        (c.endpoints.delete, ("e1",), {}, "DELETE", "endpoints/e1", None),
        (
            c.network_volumes.create,
            (),
            {"name": "v", "size": 10, "data_center_id": "EU-RO-1"},
            "POST",
            "networkvolumes",
            {},
        ),
        (c.network_volumes.list, (), {}, "GET", "networkvolumes", []),
        (c.network_volumes.get, ("v1",), {}, "GET", "networkvolumes/v1", {}),
        (c.network_volumes.update, ("v1",), {"size": 20}, "PATCH", "networkvolumes/v1", {}),
        (c.network_volumes.delete, ("v1",), {}, "DELETE", "networkvolumes/v1", None),
        (
            c.registry_auths.create,
            (),
            {"name": "r", "username": "u", "password": "p"},
            "POST",
            "containerregistryauth",
            {},
        ),
        (c.registry_auths.list, (), {}, "GET", "containerregistryauth", []),
        (c.registry_auths.get, ("a1",), {}, "GET", "containerregistryauth/a1", {}),
        (c.registry_auths.delete, ("a1",), {}, "DELETE", "containerregistryauth/a1", None),
        (c.billing.pods, (), {}, "GET", "billing/pods", []),
        (c.billing.endpoints, (), {}, "GET", "billing/endpoints", []),
        (c.billing.network_volumes, (), {}, "GET", "billing/networkvolumes", []),
    ]
    for fn, args, kw, method, path, answer in expected:
        recorder.body = answer if answer is not None else {}
        recorder.status = 204 if answer is None else 200
        result = await call(client, fn, *args, **kw)
        assert (recorder.last.method, str(recorder.last.url)) == (method, f"{BASE}/{path}")
        if answer is None:
            assert result is None
        elif isinstance(answer, list):
            assert result == []
        else:
            assert isinstance(result, BaseModel)
    assert len(recorder.requests) == len(expected) == 31


async def test_ids_cannot_escape_their_path_segment(flavour: str) -> None:
    recorder = Recorder(body={})
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.pods.get, "../endpoints/e1")
    assert recorder.last.url.raw_path == b"/v1/pods/..%2Fendpoints%2Fe1"


async def test_list_filters_take_one_value_or_several(flavour: str) -> None:
    recorder = Recorder(body=[])
    client = recorded_client(flavour == "async", recorder)
    await call(
        client,
        client.pods.list,
        desired_status=m.PodStatus.RUNNING,
        gpu_type_id=[m.GpuTypeId.A40, "NVIDIA L4"],
        data_center_id="EU-RO-1",
        name="trainer",
        include_machine=True,
        include_template=False,
    )
    assert query_pairs(recorder.last) == [
        ("includeMachine", "true"),
        ("dataCenterId", "EU-RO-1"),
        ("desiredStatus", "RUNNING"),
        ("gpuTypeId", "NVIDIA A40"),
        ("gpuTypeId", "NVIDIA L4"),
        ("name", "trainer"),
    ]
    await call(client, client.pods.list)
    assert query_pairs(recorder.last) == []  # defaults are the service's, not sent


async def test_include_flags_of_get_and_list(flavour: str) -> None:
    recorder = Recorder(body={})
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.endpoints.get, "e1", include_template=True, include_workers=True)
    assert query_pairs(recorder.last) == [("includeTemplate", "true"), ("includeWorkers", "true")]
    await call(client, client.templates.get, "t1", include_runpod_templates=True)
    assert query_pairs(recorder.last) == [("includeRunpodTemplates", "true")]
    recorder.body = []
    await call(
        client,
        client.templates.list,
        include_endpoint_bound_templates=True,
        include_public_templates=True,
    )
    assert query_pairs(recorder.last) == [
        ("includeEndpointBoundTemplates", "true"),
        ("includePublicTemplates", "true"),
    ]


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "2026-01-02T03:04:05Z"),
        (datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05Z"),  # naive: UTC
        (datetime(2026, 1, 2, 5, tzinfo=timezone(timedelta(hours=2))), "2026-01-02T03:00:00Z"),
        (date(2026, 1, 2), "2026-01-02T00:00:00Z"),
        ("2026-01-02", "2026-01-02T00:00:00Z"),
        ("2026-01-02T03:04:05+01:00", "2026-01-02T02:04:05Z"),
    ],
)
async def test_billing_times_are_datetimes_dates_or_iso_text(
    flavour: str, given: Any, sent: str
) -> None:
    recorder = Recorder(body=[])
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.billing.pods, start_time=given, end_time="2026-12-31T00:00:00Z")
    assert query_pairs(recorder.last)[0] == ("startTime", sent)


async def test_billing_filters_and_grouping(flavour: str) -> None:
    recorder = Recorder(body=[{"time": "2026-01-01T00:00:00Z", "amount": 1.25, "podId": "p"}])
    client = recorded_client(flavour == "async", recorder)
    records = await call(
        client,
        client.billing.endpoints,
        start_time=date(2026, 1, 1),
        end_time=date(2026, 2, 1),
        bucket_size="hour",
        grouping=m.EndpointBillingGrouping.GPU_TYPE_ID,
        endpoint_id="e1",
        gpu_type_id=m.GpuTypeId.A40,
        data_center_id=["EU-RO-1", "US-TX-3"],
        image_name="img",
        template_id="t1",
    )
    assert query_pairs(recorder.last) == [
        ("startTime", "2026-01-01T00:00:00Z"),
        ("endTime", "2026-02-01T00:00:00Z"),
        ("bucketSize", "hour"),
        ("grouping", "gpuTypeId"),
        ("endpointId", "e1"),
        ("gpuTypeId", "NVIDIA A40"),
        ("dataCenterId", "EU-RO-1"),
        ("dataCenterId", "US-TX-3"),
        ("imageName", "img"),
        ("templateId", "t1"),
    ]
    assert records[0].time == datetime(2026, 1, 1, tzinfo=UTC) and records[0].amount == 1.25
    await call(client, client.billing.pods, grouping="podId", pod_id="p1", bucket_size="week")
    assert query_pairs(recorder.last) == [
        ("bucketSize", "week"),
        ("grouping", "podId"),
        ("podId", "p1"),
    ]
    await call(client, client.billing.network_volumes, bucket_size=m.BucketSize.MONTH)
    assert query_pairs(recorder.last) == [("bucketSize", "month")]


async def test_extra_body_carries_fields_newer_than_this_version(flavour: str) -> None:
    recorder = Recorder(body={})
    client = recorded_client(flavour == "async", recorder)
    await call(
        client, client.pods.create, image_name="i", extra_body={"futureFlag": True, "n": [1]}
    )
    assert recorder.last_json() == {"imageName": "i", "futureFlag": True, "n": [1]}


async def test_the_registry_password_goes_in_the_body_and_nowhere_else(flavour: str) -> None:
    recorder = Recorder(body={"id": "a1", "name": "r"})
    client = recorded_client(flavour == "async", recorder)
    auth = await call(
        client, client.registry_auths.create, name="r", username="u", password="s3cr3t-pw"
    )
    assert recorder.last_json() == {"name": "r", "username": "u", "password": "s3cr3t-pw"}
    assert "s3cr3t-pw" not in repr(auth) and "s3cr3t-pw" not in str(recorder.last.url)


async def test_answers_keep_fields_this_version_does_not_know(flavour: str) -> None:
    recorder = Recorder(
        body={"id": "p1", "desiredStatus": "HIBERNATING", "gpu": {"id": "X", "newPrice": 3}}
    )
    client = recorded_client(flavour == "async", recorder)
    pod = await call(client, client.pods.get, "p1")
    assert pod.desired_status == "HIBERNATING"  # a state this version does not know
    assert pod.gpu.model_extra == {"newPrice": 3}
    recorder.body = [{"id": "t1", "isPlatform": True}]
    [template] = await call(client, client.templates.list)
    assert template.model_extra == {"isPlatform": True}


async def test_pod_actions_return_the_pod_or_none_when_the_answer_is_empty(flavour: str) -> None:
    answers = [httpx.Response(200, json={"id": "p1", "desiredStatus": "EXITED"})]
    answers.append(httpx.Response(200, content=b""))
    transport = httpx.MockTransport(lambda request: answers.pop(0))
    cls = AsyncClient if flavour == "async" else Client
    client = cls(KEY, base_url=BASE, transport=transport)
    pod = await call(client, client.pods.stop, "p1")
    assert pod.desired_status == m.PodStatus.EXITED
    assert await call(client, client.pods.start, "p1") is None


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"not": "a list"}, "unexpected shape for a list of Pod: Input should be a valid list"),
        ([{"id": 5}], "unexpected shape for a list of Pod"),
        ("<html>", "unexpected shape"),
    ],
)
async def test_an_answer_of_the_wrong_shape_is_an_api_error(
    flavour: str, answer: Any, expected: str
) -> None:
    recorder = Recorder(body=answer)
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(APIError) as info:
        await call(client, client.pods.list)
    assert expected in str(info.value) and "GET pods (pods)" in str(info.value)


async def test_a_body_that_is_not_json_is_an_api_error(flavour: str) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>oops"))
    cls = AsyncClient if flavour == "async" else Client
    client = cls(KEY, base_url=BASE, transport=transport)
    with pytest.raises(APIError, match="a body that is not JSON: <html>oops"):
        await call(client, client.templates.get, "t1")


# ---- the twins --------------------------------------------------------------------------

PAIRS = [
    (Templates, AsyncTemplates),
    (Pods, AsyncPods),
    (Endpoints, AsyncEndpoints),
    (NetworkVolumes, AsyncNetworkVolumes),
    (RegistryAuths, AsyncRegistryAuths),
    (Billing, AsyncBilling),
]


def operations(cls: type) -> dict[str, Any]:
    return {name: v for name, v in vars(cls).items() if not name.startswith("_") and callable(v)}


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_sync_and_async_twins_have_the_same_methods_and_signatures(
    sync: type, async_: type
) -> None:
    sync_ops, async_ops = operations(sync), operations(async_)
    assert sorted(sync_ops) == sorted(async_ops) and sync_ops
    for name, method in sync_ops.items():
        twin = async_ops[name]
        if not name.startswith("follow_"):  # followers return (async) iterators
            assert inspect.iscoroutinefunction(twin) and not inspect.iscoroutinefunction(method)
        sync_sig, async_sig = inspect.signature(method), inspect.signature(twin)
        assert sync_sig.parameters == async_sig.parameters, name
        assert method.__doc__ and method.__doc__ == twin.__doc__
        assert method.__name__ == name and method.__qualname__ == f"{sync.__name__}.{name}"


def test_resources_hang_off_both_clients() -> None:
    for cls, kinds in ((Client, [p[0] for p in PAIRS]), (AsyncClient, [p[1] for p in PAIRS])):
        client = cls(KEY, base_url=BASE, transport=Recorder())  # type: ignore[arg-type]
        found = [
            type(getattr(client, name))
            for name in (
                "templates",
                "pods",
                "endpoints",
                "network_volumes",
                "registry_auths",
                "billing",
            )
        ]
        assert found == kinds
        assert client.pods is client.pods  # made once
        assert KEY not in repr(client.pods) and "…" in repr(client.pods)


BODY_MODELS: list[tuple[Any, type[BaseModel], set[str]]] = [
    (Templates.create, m.TemplateCreateInput, set()),
    (Templates.update, m.TemplateUpdateInput, {"template_id"}),
    (Pods.create, m.PodCreateInput, set()),
    (Pods.update, m.PodUpdateInput, {"pod_id"}),
    (Endpoints.create, m.EndpointCreateInput, set()),
    (Endpoints.update, m.EndpointUpdateInput, {"endpoint_id"}),
    (NetworkVolumes.create, m.NetworkVolumeCreateInput, set()),
    (NetworkVolumes.update, m.NetworkVolumeUpdateInput, {"network_volume_id"}),
    (RegistryAuths.create, m.ContainerRegistryAuthCreateInput, set()),
    (Pods.list, m.PodListQuery, set()),
    (Pods.get, m.PodIncludes, {"pod_id"}),
    (Endpoints.list, m.EndpointIncludes, set()),
    (Endpoints.get, m.EndpointIncludes, {"endpoint_id"}),
    (Templates.list, m.TemplateIncludes, set()),
    (Templates.get, m.TemplateIncludes, {"template_id"}),
    (Billing.pods, m.PodBillingQuery, set()),
    (Billing.endpoints, m.EndpointBillingQuery, set()),
    (Billing.network_volumes, m.NetworkVolumeBillingQuery, set()),
]


@pytest.mark.parametrize(
    ("method", "model", "path_params"),
    BODY_MODELS,
    ids=[f"{b[0].__qualname__}" for b in BODY_MODELS],
)
def test_every_field_of_the_reference_is_a_keyword(
    method: Any, model: type[BaseModel], path_params: set[str]
) -> None:
    """A field added to a model without a keyword (or a keyword with a typo) fails here."""
    params = set(inspect.signature(method).parameters) - {"self", "extra_body", "method"}
    assert params - path_params == set(model.model_fields)


def test_base_url_comes_from_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    recorder = Recorder(body=[])
    none = tmp_path / "absent.toml"
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://127.0.0.1:8123/v1/")
    with Client(KEY, transport=recorder, config_file=none) as client:
        client.pods.list()
    assert str(recorder.last.url) == "http://127.0.0.1:8123/v1/pods"
    monkeypatch.delenv("RUNPOD_REST_BASE_URL")
    recorder.body = {"networkVolumes": []}
    with Client(KEY, transport=recorder, config_file=none) as client:
        assert client.network_volumes.list() == []
    assert str(recorder.last.url) == "https://api.runpod.io/v2/network-volumes"
