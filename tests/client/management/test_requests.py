"""What each management call puts on the wire, and how answers are read.

The emulator tests show the calls work; these pin down the requests themselves (paths
under ``base_url``, wire names, only what the caller gave, query encodings, time
formats), against a recording transport, and the
reading of answers the emulator would never send (unknown fields, empty bodies, wrong
shapes).
"""

from __future__ import annotations

import inspect
import json
import re
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

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
from nbext.client._resources.wire import RENAMED

from ..conftest import KEY
from .conftest import Recorder, call, recorded_client

pytestmark = pytest.mark.anyio
BASE = "https://mgmt.example/v2"
REFERENCE = json.loads(
    (Path(__file__).parents[3] / "nbext/emulator/api/v2/reference.openapi.json").read_text()
)


def query_pairs(request: httpx.Request) -> list[tuple[str, str]]:
    return list(request.url.params.multi_items())


async def test_a_create_sends_only_what_was_given_under_wire_names(flavour: str) -> None:
    recorder = Recorder(body={"id": "t1", "name": "t", "image": "img:1"})
    client = recorded_client(flavour == "async", recorder)
    template = await call(
        client, client.templates.create, name="t", image="img:1", serverless=True, start_ssh=False
    )
    request = recorder.last
    assert (request.method, str(request.url)) == ("POST", f"{BASE}/templates")
    assert recorder.last_json() == {
        "name": "t",
        "image": "img:1",
        "serverless": True,
        "startSsh": False,
    }
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert template.image == "img:1"


@pytest.mark.parametrize(
    "base_url",
    [
        "https://mgmt.example/v2/",
        "https://proxy.example/runpod/management",
        "http://127.0.0.1:8080/prefix/v1/rest",
    ],
)
async def test_any_base_url_speaks_v2(flavour: str, base_url: str) -> None:
    """A trailing slash, a path prefix, a proxy: REST v2 all the same."""
    recorder = Recorder(body={"endpoints": []})
    client = recorded_client(flavour == "async", recorder, base_url=base_url)
    await call(client, client.endpoints.list)
    assert str(recorder.last.url) == base_url.rstrip("/") + "/serverless"
    recorder.body = {"id": "j", "status": "IN_QUEUE"}
    await call(client, client.endpoint("e1").run, {"x": 1})
    assert str(recorder.last.url) == "https://jobs.example/v2/e1/run"


async def test_every_operation_has_its_method_and_path(flavour: str) -> None:
    recorder = Recorder(body={})
    client = recorded_client(flavour == "async", recorder)
    c = client
    expected: list[tuple[Any, tuple[Any, ...], dict[str, Any], str, str, Any]] = [
        (c.templates.create, (), {"name": "t", "image": "i"}, "POST", "templates", {}),
        (c.templates.list, (), {}, "GET", "templates", {"templates": []}),
        (c.templates.get, ("t1",), {}, "GET", "templates/t1", {}),
        (c.templates.update, ("t1",), {"name": "r"}, "PATCH", "templates/t1", {}),
        (c.templates.delete, ("t1",), {}, "DELETE", "templates/t1", None),
        (c.pods.create, (), {"image": "i"}, "POST", "pods", {}),
        (c.pods.list, (), {}, "GET", "pods", {"pods": []}),
        (c.pods.get, ("p1",), {}, "GET", "pods/p1", {}),
        (c.pods.update, ("p1",), {"name": "n"}, "PATCH", "pods/p1", {}),
        (c.pods.delete, ("p1",), {}, "DELETE", "pods/p1", None),
        (c.pods.start, ("p1",), {}, "POST", "pods/p1/action", {}),
        (c.pods.stop, ("p1",), {}, "POST", "pods/p1/action", {}),
        (c.pods.restart, ("p1",), {}, "POST", "pods/p1/action", {}),
        (c.endpoints.create, (), {"template_id": "t"}, "POST", "serverless", {}),
        (c.endpoints.list, (), {}, "GET", "serverless", {"endpoints": []}),
        (c.endpoints.get, ("e1",), {}, "GET", "serverless/e1", {}),
        (c.endpoints.update, ("e1",), {"execution_timeout_ms": 9000}, "PATCH", "serverless/e1", {}),
        (c.endpoints.delete, ("e1",), {}, "DELETE", "serverless/e1", None),
        (
            c.network_volumes.create,
            (),
            {"name": "v", "size": 10, "data_center": "EU-RO-1"},
            "POST",
            "network-volumes",
            {},
        ),
        (c.network_volumes.list, (), {}, "GET", "network-volumes", {"networkVolumes": []}),
        (c.network_volumes.get, ("v1",), {}, "GET", "network-volumes/v1", {}),
        (c.network_volumes.update, ("v1",), {"size": 20}, "PATCH", "network-volumes/v1", {}),
        (c.network_volumes.delete, ("v1",), {}, "DELETE", "network-volumes/v1", None),
        (
            c.registry_auths.create,
            (),
            {"name": "r", "username": "u", "password": "p"},
            "POST",
            "registries",
            {},
        ),
        (c.registry_auths.list, (), {}, "GET", "registries", {"registries": []}),
        (c.registry_auths.get, ("a1",), {}, "GET", "registries/a1", {}),
        (c.registry_auths.delete, ("a1",), {}, "DELETE", "registries/a1", None),
        (c.billing.summary, (), {}, "GET", "billing", {"records": []}),
        (c.billing.pods, (), {}, "GET", "billing/pods", {"records": []}),
        (c.billing.serverless, (), {}, "GET", "billing/serverless", {"records": []}),
        (c.billing.network_volumes, (), {}, "GET", "billing/network-volumes", {"records": []}),
    ]
    full = {"id": "x", "name": "n", "image": "i", "status": "RUNNING", "workers": {}}
    full |= {"scaling": {"type": "QUEUE_DELAY"}, "size": 1, "dataCenter": "d"}
    for fn, args, kw, method, path, answer in expected:
        recorder.body = answer if answer != {} else full
        recorder.status = 204 if answer is None else 200
        result = await call(client, fn, *args, **kw)
        assert (recorder.last.method, str(recorder.last.url)) == (method, f"{BASE}/{path}")
        if answer is None:
            assert result is None
        elif answer != {}:
            assert result == []
        else:
            assert isinstance(result, BaseModel)
    assert len(recorder.requests) == len(expected) == 31


POD = {"id": "p1", "name": "p", "status": "RUNNING"}


async def test_ids_cannot_escape_their_path_segment(flavour: str) -> None:
    recorder = Recorder(body=POD)
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.pods.get, "../serverless/e1")
    assert recorder.last.url.raw_path == b"/v2/pods/..%2Fserverless%2Fe1"


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
    recorder = Recorder(body={"records": []})
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.billing.pods, start_time=given, end_time="2026-12-31T00:00:00Z")
    assert query_pairs(recorder.last)[0] == ("startTime", sent)


async def test_billing_queries_and_records(flavour: str) -> None:
    record = {"startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-01T01:00:00Z"}
    record |= {"totalAmount": 1.25, "gpuAmount": 1.0, "cpuAmount": 0.25, "serverlessId": "e1"}
    recorder = Recorder(body={"records": [record]})
    client = recorded_client(flavour == "async", recorder)
    [got] = await call(
        client,
        client.billing.serverless,
        start_time=date(2026, 1, 1),
        end_time=date(2026, 2, 1),
        bucket_size="hour",
        serverless_id="e1",
    )
    assert query_pairs(recorder.last) == [
        ("startTime", "2026-01-01T00:00:00Z"),
        ("endTime", "2026-02-01T00:00:00Z"),
        ("bucketSize", "hour"),
        ("serverlessId", "e1"),
    ]
    assert (got.start_time, got.total_amount) == (datetime(2026, 1, 1, tzinfo=UTC), 1.25)
    assert got.amounts() == {"gpuAmount": 1.0, "cpuAmount": 0.25}
    await call(client, client.billing.pods, pod_id="p1", last_n=3, bucket_size="week")
    assert query_pairs(recorder.last) == [("bucketSize", "week"), ("lastN", "3"), ("podId", "p1")]
    await call(client, client.billing.network_volumes, network_volume_id="v")
    assert query_pairs(recorder.last) == [("networkVolumeId", "v")]


async def test_a_queue_endpoint_scales_by_queue_delay_unless_told_otherwise(flavour: str) -> None:
    recorder = Recorder(body={"id": "e", "name": "e", "workers": {}, "scaling": {"type": "X"}})
    client = recorded_client(flavour == "async", recorder)
    default = {"type": "QUEUE_DELAY", "queueDelay": 4}
    await call(client, client.endpoints.create, template_id="t")
    assert recorder.last_json() == {
        "name": "t",
        "templateId": "t",
        "type": "QUEUE",
        "scaling": default,
    }
    given = {"type": "REQUEST_COUNT", "requestCount": 2}
    await call(client, client.endpoints.create, template_id="t", scaling=given)
    assert recorder.last_json()["scaling"] == given
    await call(client, client.endpoints.create, template_id="t", extra_body={"scaling": given})
    assert recorder.last_json()["scaling"] == given
    await call(client, client.endpoints.create, template_id="t", type="LOAD_BALANCER")
    assert "scaling" not in recorder.last_json()


async def test_extra_body_carries_fields_newer_than_this_client(flavour: str) -> None:
    recorder = Recorder(body=POD)
    client = recorded_client(flavour == "async", recorder)
    await call(client, client.pods.create, image="i", extra_body={"futureFlag": True, "n": [1]})
    assert recorder.last_json() == {"name": "my pod", "image": "i", "futureFlag": True, "n": [1]}


async def test_the_registry_password_goes_in_the_body_and_nowhere_else(flavour: str) -> None:
    recorder = Recorder(body={"id": "a1", "name": "r"})
    client = recorded_client(flavour == "async", recorder)
    auth = await call(
        client, client.registry_auths.create, name="r", username="u", password="s3cr3t-pw"
    )
    assert recorder.last_json() == {"name": "r", "username": "u", "password": "s3cr3t-pw"}
    assert "s3cr3t-pw" not in repr(auth) and "s3cr3t-pw" not in str(recorder.last.url)


async def test_answers_keep_fields_this_client_does_not_know(flavour: str) -> None:
    recorder = Recorder(
        body={"id": "p1", "name": "p", "status": "HIBERNATING", "gpu": {"id": "X", "newPrice": 3}}
    )
    client = recorded_client(flavour == "async", recorder)
    with pytest.raises(APIError, match="unexpected shape for Pod"):  # a status v2 has not
        await call(client, client.pods.get, "p1")
    recorder.body["status"] = "RUNNING"
    pod = await call(client, client.pods.get, "p1")
    assert pod.gpu.model_extra == {"newPrice": 3}
    recorder.body = {"templates": [{"id": "t1", "name": "t", "isPlatform": True}]}
    [template] = await call(client, client.templates.list)
    assert template.model_extra == {"isPlatform": True}


async def test_pod_actions_return_the_pod_or_none_when_the_answer_is_empty(flavour: str) -> None:
    answers = [httpx.Response(200, json={"id": "p1", "name": "p", "status": "EXITED"})]
    answers.append(httpx.Response(200, content=b""))
    transport = httpx.MockTransport(lambda request: answers.pop(0))
    cls = AsyncClient if flavour == "async" else Client
    client = cls(KEY, base_url=BASE, transport=transport)
    pod = await call(client, client.pods.stop, "p1")
    assert pod.status == "EXITED"
    assert await call(client, client.pods.start, "p1") is None


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"not": "a list"}, "no 'pods' list"),
        ({"pods": [{"id": 5}]}, "unexpected shape for a list of Pod"),
        ("<html>", "no 'pods' list"),
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


BODIES: list[tuple[Any, str, set[str]]] = [
    (Templates.create, "CreateTemplateRequest", set()),
    (Templates.update, "UpdateTemplateRequest", {"template_id"}),
    (Pods.create, "CreatePodRequest", set()),
    (Pods.update, "UpdatePodRequest", {"pod_id"}),
    (Endpoints.create, "CreateEndpointRequest", set()),
    (Endpoints.update, "UpdateEndpointRequest", {"endpoint_id"}),
    (NetworkVolumes.create, "CreateNetworkVolumeRequest", set()),
    (NetworkVolumes.update, "UpdateNetworkVolumeRequest", {"network_volume_id"}),
    (RegistryAuths.create, "CreateRegistryRequest", set()),
]


def reference_fields(schema: dict[str, Any]) -> set[str]:
    """Every property of a request schema, through its ``allOf`` and ``$ref``s."""
    if "$ref" in schema:
        return reference_fields(REFERENCE["components"]["schemas"][schema["$ref"].split("/")[-1]])
    found = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        found |= reference_fields(part)
    return found


@pytest.mark.parametrize(("method", "schema", "path_params"), BODIES, ids=[b[1] for b in BODIES])
def test_every_field_of_the_v2_reference_is_a_keyword(
    method: Any, schema: str, path_params: set[str]
) -> None:
    """A field added to the reference without a keyword (or a keyword with a typo) fails."""
    params = set(inspect.signature(method).parameters) - {"self", "extra_body"} - path_params
    params = {RENAMED.get(name, name) for name in params}  # timeout is HTTP seconds
    wire = reference_fields(REFERENCE["components"]["schemas"][schema])
    assert {re.sub(r"(?<=[a-z])(?=[A-Z])", "_", f).lower() for f in wire} == params


def test_base_url_comes_from_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    recorder = Recorder(body={"pods": []})
    none = tmp_path / "absent.toml"
    monkeypatch.setenv("RUNPOD_REST_BASE_URL", "http://127.0.0.1:8123/v2/")
    with Client(KEY, transport=recorder, config_file=none) as client:
        client.pods.list()
    assert str(recorder.last.url) == "http://127.0.0.1:8123/v2/pods"
    monkeypatch.delenv("RUNPOD_REST_BASE_URL")
    recorder.body = {"networkVolumes": []}
    with Client(KEY, transport=recorder, config_file=none) as client:
        assert client.network_volumes.list() == []
    assert str(recorder.last.url) == "https://api.runpod.io/v2/network-volumes"
