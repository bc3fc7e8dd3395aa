"""Every v2 create and update refuses bad input with a problem document naming the field,
and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.emulator.api.v2.contract import schema_fields
from nbext.emulator.domain.management.endpoint_input import (
    CreateEndpointRequest,
    UpdateEndpointRequest,
)
from nbext.emulator.domain.management.pod_input import CreatePodRequest, UpdatePodRequest
from nbext.emulator.domain.management.refusals import Unprocessable, checked

from .conftest import GPU, endpoint, ok, pod, problem, template, volume

pytestmark = pytest.mark.anyio

CREATES: dict[str, tuple[str, dict[str, Any]]] = {
    "template": ("/v2/templates", {"name": "t", "image": "img"}),
    "pod": ("/v2/pods", {"name": "p", "image": "img", "gpu": {"id": GPU}}),
    "endpoint": (
        "/v2/serverless",
        {
            "name": "e",
            "type": "QUEUE",
            "image": "echo",
            "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
            "gpu": {"pools": ["AMPERE_48"]},
        },
    ),
    "volume": ("/v2/network-volumes", {"name": "v", "size": 10, "dataCenter": "EU-RO-1"}),
    "registry": ("/v2/registries", {"name": "r", "username": "u", "password": "p"}),
    "cluster": (
        "/v2/clusters",
        {
            "name": "c",
            "type": "TRAINING",
            "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
        },
    ),
}
LISTS = {
    "template": "/v2/templates",
    "pod": "/v2/pods",
    "endpoint": "/v2/serverless",
    "volume": "/v2/network-volumes",
    "registry": "/v2/registries",
    "cluster": "/v2/clusters",
}


async def snapshot(api: httpx.AsyncClient) -> dict[str, Any]:
    return {kind: await ok(api.get(path)) for kind, path in LISTS.items()}


@pytest.mark.parametrize("kind", sorted(CREATES))
async def test_missing_unknown_and_mistyped_fields_are_named(
    api: httpx.AsyncClient, kind: str
) -> None:
    path, good = CREATES[kind]
    before = await snapshot(api)
    required = next(iter(good))
    missing = {k: v for k, v in good.items() if k != required}
    body = await problem(api.post(path, json=missing), 422, f"{required}: is required")
    assert body["errors"] == [f"{required}: is required"]  # the fields given are not unknown
    body = await problem(api.post(path, json={**good, "colour": "red"}), 422)
    assert [e.split(" (")[0] for e in body["errors"]] == ["colour: unknown field"]
    body = await problem(api.post(path, json={**good, "name": 7}), 422)
    assert body["errors"] == ["name: 7 is not of type 'string'"]
    await problem(api.post(path, content=b"{not json"), 400, "not valid JSON")
    await problem(api.post(path, json=[good]), 422, "must be a JSON object")
    assert await snapshot(api) == before


ENDPOINT = CREATES["endpoint"][1]
POD = CREATES["pod"][1]
ONLY_THE_REAL_PROBLEMS: list[tuple[str, str, dict[str, Any], list[str]]] = [
    # a part of the body failing made JSON Schema call the fields it declares unknown
    (
        "/v2/serverless",
        "POST",
        {k: v for k, v in ENDPOINT.items() if k != "scaling"},
        ["scaling: is required"],
    ),
    (
        "/v2/serverless",
        "POST",
        {**ENDPOINT, "scaling": {"type": "QUEUE_DELAY"}},
        ["scaling: matches none of the allowed shapes ('queueDelay' is a required property)"],
    ),
    (
        "/v2/serverless",
        "POST",
        {**ENDPOINT, "gpu": {"pools": ["AMPERE_48"], "count": 0}, "timeout": "long"},
        ["gpu.count: 0 is less than the minimum of 1", "timeout: 'long' is not of type 'integer'"],
    ),
    (
        "/v2/serverless",
        "POST",
        {**ENDPOINT, "gpu": {"pools": ["AMPERE_48"], "colour": "red"}},
        ["gpu.colour: unknown field"],
    ),
    ("/v2/pods", "POST", {**POD, "gpu": {"count": 1}}, ["gpu.id: is required"]),
    ("/v2/pods", "POST", {**POD, "disk": 0}, ["disk: 0 is less than the minimum of 1"]),
    (
        "/v2/templates",
        "POST",
        {"name": "t", "image": "i", "mounts": {"persistent": {"size": 5, "path": "/w"}}},
        ["mounts.persistent.size: 5 is less than the minimum of 10"],
    ),
    (
        "/v2/network-volumes",
        "POST",
        {"name": "v", "size": 10},
        ["dataCenter: is required"],
    ),
    (
        "/v2/clusters",
        "POST",
        {"name": "c", "type": "TRAINING"},
        ["compute: is required"],
    ),
    (
        "/v2/serverless/{endpoint}",
        "PATCH",
        {"workers": {"min": "a"}, "name": "renamed"},
        ["workers.min: 'a' is not of type 'integer'"],
    ),
    (
        "/v2/pods/{pod}",
        "PATCH",
        {"disk": 0, "name": "renamed"},
        ["disk: 0 is less than the minimum of 1"],
    ),
]


@pytest.mark.parametrize(("path", "method", "data", "errors"), ONLY_THE_REAL_PROBLEMS)
async def test_a_refusal_names_only_the_real_problems(
    api: httpx.AsyncClient, path: str, method: str, data: dict[str, Any], errors: list[str]
) -> None:
    """No field the body may have is called unknown because another one failed."""
    path = path.format(endpoint=(await endpoint(api))["id"], pod=(await pod(api))["id"])
    before = await snapshot(api)
    body = await problem(api.request(method, path, json=data), 422)
    assert body["errors"] == errors
    assert body["detail"] == "; ".join(errors)
    assert await snapshot(api) == before


@pytest.mark.parametrize("path", ["/v2/pods", "/v2/serverless"])
async def test_gpu_and_cpu_together_and_cuda_rules(api: httpx.AsyncClient, path: str) -> None:
    base = dict(CREATES["pod" if path == "/v2/pods" else "endpoint"][1])
    gpu = dict(base["gpu"])
    cpu: Any = {"id": "cpu3c", "vcpuCount": 2}
    both = {**base, "cpu": [cpu] if path == "/v2/serverless" else cpu}
    before = await snapshot(api)
    await problem(api.post(path, json=both), 422, "gpu: a", "not both")
    cuda = {**gpu, "minCudaVersion": "12.1", "allowedCudaVersions": ["12.8"]}
    await problem(api.post(path, json={**base, "gpu": cuda}), 422, "gpu.minCudaVersion")
    floor_and_empty = {**gpu, "minCudaVersion": "12.1", "allowedCudaVersions": []}
    assert (await api.post(path, json={**base, "gpu": floor_and_empty})).status_code == 201
    after = await snapshot(api)
    kind = "pod" if path == "/v2/pods" else "endpoint"
    key = "pods" if kind == "pod" else "endpoints"
    assert len(after[kind][key]) == len(before[kind][key]) + 1


async def test_updates_refuse_and_change_nothing(api: httpx.AsyncClient) -> None:
    t, p, e, v = await template(api), await pod(api), await endpoint(api), await volume(api)
    before = await snapshot(api)
    cases = [
        (f"/v2/templates/{t['id']}", {"disk": "big"}, "disk: 'big' is not of type 'integer'"),
        (f"/v2/templates/{t['id']}", {"serverless": True}, "serverless: is fixed"),
        (f"/v2/pods/{p['id']}", {"image": "x", "cpu": {"id": "cpu3c"}}, "cpu: unknown field"),
        (f"/v2/pods/{p['id']}", {"name": ""}, "name: '' should be non-empty"),
        (f"/v2/serverless/{e['id']}", {"cpu": [{"id": "cpu3c", "vcpuCount": 2}]}, "cpu:"),
        (
            f"/v2/serverless/{e['id']}",
            {
                "gpu": {
                    "pools": ["AMPERE_48"],
                    "minCudaVersion": "12.1",
                    "allowedCudaVersions": ["12.8"],
                }
            },
            "gpu.minCudaVersion",
        ),
        (
            f"/v2/serverless/{e['id']}",
            {"workers": {"min": 5, "max": 1}},
            "workers.min (5) must not exceed workers.max (1)",
        ),
        (
            f"/v2/serverless/{e['id']}",
            {"workers": {"min": 5}},
            "workers.min (5) must not exceed workers.max (3) (one is the current)",
        ),
        (f"/v2/network-volumes/{v['id']}", {"size": 5}, "size: 5 is less than the minimum"),
        (f"/v2/network-volumes/{v['id']}", {}, "should be non-empty"),
    ]
    for path, body, fragment in cases:
        r = await api.patch(path, json=body)
        assert r.status_code in (400, 422), f"{path} {body}: {r.status_code} {r.text}"
        detail = r.json()["detail"]
        assert fragment in detail, (body, detail)
    assert await snapshot(api) == before


CPU = {"id": "cpu3c", "vcpuCount": 2}
ENDPOINT_RULES: list[tuple[dict[str, Any], str]] = [
    ({"cpu": [CPU, {"id": "cpu3m", "vcpuCount": 2}]}, "cpu.1.id: cpu3m is not offered"),
    ({"cpu": [{"id": "cpu9z", "vcpuCount": 2}]}, "cpu.0.id: Input should be"),
    (
        {"gpu": {"pools": ["AMPERE_48"], "allowedCudaVersions": ["12.8", "9.9"]}},
        "gpu.allowedCudaVersions.1: ",
    ),
    ({"gpu": {"pools": ["AMPERE_48"], "minCudaVersion": "9.9"}}, "gpu.minCudaVersion: "),
    ({"dataCenterIds": ["EU-RO-1", "MOON-1"]}, "dataCenterIds.1: "),
    ({"timeout": 1000}, "timeout: Input should be greater than or equal to 5000"),
    ({"name": "n" * 192}, "name: String should have at most 191 characters"),
    ({"workers": {"min": 2, "max": 1}}, "workers.min (2) must not exceed workers.max (1)"),
]


@pytest.mark.parametrize(("fields", "fragment"), ENDPOINT_RULES)
async def test_endpoint_rules_name_v2_fields_on_create_and_update(
    api: httpx.AsyncClient, fields: dict[str, Any], fragment: str
) -> None:
    """The catalog's values and the bounds the reference leaves to prose, refused by the
    field path a v2 caller wrote (not v1's names)."""
    path, good = CREATES["endpoint"]
    if "cpu" in fields:  # a CPU endpoint: its rules apply to a create and a CPU update
        good = {k: v for k, v in good.items() if k != "gpu"} | {"cpu": [CPU]}
    made = await ok(api.post(path, json=good), 201)
    before = await snapshot(api)
    await problem(api.post(path, json={**good, **fields}), 422, fragment)
    await problem(api.patch(f"{path}/{made['id']}", json=fields), 422, fragment)
    assert await snapshot(api) == before


@pytest.mark.parametrize(
    ("model", "schema"),
    [
        (CreateEndpointRequest, "CreateEndpointRequest"),
        (UpdateEndpointRequest, "UpdateEndpointRequest"),
    ],
)
def test_the_endpoint_input_models_are_the_references_bodies(
    model: type[UpdateEndpointRequest], schema: str
) -> None:
    """Every field the reference gives an endpoint body, but the container's (checked by
    the endpoint's own template), has a rule in the domain's model; a create without what
    the reference requires is refused in v2's names even when no schema ran first."""
    fields = {f.alias or name for name, f in model.model_fields.items()}
    container = {"image", "args", "disk", "env", "ports", "registry"}
    assert fields == set(schema_fields(schema)) - container
    if model is CreateEndpointRequest:
        with pytest.raises(Unprocessable) as refused:
            checked(model, {"gpu": {}})
        assert sorted(refused.value.errors) == [
            "gpu.pools: is required",
            "name: is required",
            "scaling: is required",
            "type: is required",
        ]


POD_RULES: list[tuple[dict[str, Any], str, bool]] = [
    ({"gpu": {"id": "NVIDIA Nope"}}, "gpu.id: Input should be", False),
    ({"gpu": None, "cpu": {"id": "cpu9z", "vcpuCount": 2}}, "cpu.id: Input should be", False),
    (
        {"gpu": {"id": GPU, "allowedCudaVersions": ["12.8", "9.9"]}},
        "gpu.allowedCudaVersions.1: ",
        False,
    ),
    ({"gpu": {"id": GPU, "minCudaVersion": "9.9"}}, "gpu.minCudaVersion: ", False),
    ({"dataCenterIds": ["EU-RO-1", "MOON-1"]}, "dataCenterIds.1: ", False),
    ({"name": "n" * 192}, "name: String should have at most 191 characters", True),
    ({"image": "  "}, "image: ", True),
    ({"ports": ["8888/http", "nope"]}, "ports.1: ", True),
    ({"mounts": {"persistent": {"size": 20, "path": "work"}}}, "mounts.persistent.path: ", True),
    ({"mounts": {"network": [{"volumeId": "v", "path": "data"}]}}, "mounts.network.0.path: ", True),
]


@pytest.mark.parametrize(("fields", "fragment", "on_update"), POD_RULES)
async def test_pod_rules_name_v2_fields_on_create_and_update(
    api: httpx.AsyncClient, fields: dict[str, Any], fragment: str, on_update: bool
) -> None:
    """The catalog's values and the rules the reference leaves to words, refused by the
    field path a v2 caller wrote (``gpu.id``, not v1's ``gpu.id.0``), and nothing changes."""
    path, good = CREATES["pod"]
    made = await ok(api.post(path, json=good), 201)
    before = await snapshot(api)
    body = {k: v for k, v in {**good, **fields}.items() if v is not None}
    await problem(api.post(path, json=body), 422, fragment)
    if on_update:
        await problem(api.patch(f"{path}/{made['id']}", json=fields), 422, fragment)
    assert await snapshot(api) == before


async def test_a_pods_references_and_its_lock_are_refused_in_v2_names(
    api: httpx.AsyncClient,
) -> None:
    """What a pod body refers to (a registry, a network volume) and a locked pod's reset
    are refused by the fields a v2 caller wrote, not v1's, and nothing changes."""
    path, good = CREATES["pod"]
    locked = await pod(api)
    await ok(api.patch(f"{path}/{locked['id']}", json={"locked": True}))
    before = await snapshot(api)
    for fields, fragment in [
        ({"registry": "nope"}, "registry: no container registry auth with id 'nope'"),
        (
            {"mounts": {"network": [{"volumeId": "nope", "path": "/data"}]}},
            "mounts.network.0.volumeId: no network volume with id 'nope'",
        ),
    ]:
        await problem(api.post(path, json={**good, **fields}), 400, fragment)
    await problem(
        api.patch(f"{path}/{locked['id']}", json={"image": "other", "disk": 30}),
        400,
        "changing disk, image would reset it",
    )
    assert await snapshot(api) == before


@pytest.mark.parametrize(
    ("model", "schema"),
    [(CreatePodRequest, "CreatePodRequest"), (UpdatePodRequest, "UpdatePodRequest")],
)
def test_the_pod_input_models_are_the_references_bodies(
    model: type[CreatePodRequest | UpdatePodRequest], schema: str
) -> None:
    """Every field the reference gives a pod body has a rule in the domain's model; a
    create without a name is refused in v2's names even when no schema ran first."""
    fields = {f.alias or name for name, f in model.model_fields.items()}
    assert fields == set(schema_fields(schema))
    if model is CreatePodRequest:
        with pytest.raises(Unprocessable) as refused:
            checked(model, {"gpu": {"count": 0}})
        assert sorted(refused.value.errors) == [
            "gpu.count: Input should be greater than or equal to 1",
            "gpu.id: is required",
            "name: is required",
        ]


async def test_an_empty_network_volumes_list_detaches_every_volume(api: httpx.AsyncClient) -> None:
    v = await volume(api)
    e = await endpoint(api, networkVolumes=[v["id"]])
    assert e["networkVolumes"] == [v["id"]]
    cleared = await ok(api.patch(f"/v2/serverless/{e['id']}", json={"networkVolumes": []}))
    assert cleared["networkVolumes"] == []
    v1 = await ok(api.get(f"/v1/endpoints/{e['id']}"))
    assert "networkVolumeId" not in v1 and "networkVolumeIds" not in v1


async def test_errors_are_problem_documents_everywhere(api: httpx.AsyncClient) -> None:
    await problem(api.get("/v2/templates/nope"), 404, "template 'nope' not found")
    await problem(api.put("/v2/pods"), 405, "PUT is not an operation")
    await problem(api.get("/v2/pods/x/nothing"), 404, "no operation at")
    await problem(api.get("/v2/pods?includeClusterPods=maybe"), 422, "includeClusterPods")
    await problem(api.get("/v2/pods?colour=red"), 422, "colour: unknown query parameter")
    anonymous = await api.get("/v2/pods", headers={"Authorization": ""})
    assert anonymous.status_code == 401 and anonymous.json()["title"] == "Unauthorized"
    await problem(api.patch("/v2/templates/demo-echo", json={"name": "x"}), 403, "official")
