"""``/v1/templates``: defaults and rules (docs/behaviour.md#templates), uniqueness, updates.

Every refusal is 400 with a message naming the field and the rule, and the listing is
the same afterwards: nothing half-made.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .conftest import endpoint, ok, refused, registry_auth, serverless_template, template

pytestmark = pytest.mark.anyio

ALL = "/v1/templates?includeEndpointBoundTemplates=true&includeRunpodTemplates=true"


async def test_create_applies_the_seeds_defaults(api: httpx.AsyncClient) -> None:
    t = await ok(api.post("/v1/templates", json={"name": "mine", "imageName": "img:1"}))
    assert len(t["id"]) == 10 and t["id"].isalnum()
    assert {k: v for k, v in t.items() if k != "id"} == {
        "name": "mine",
        "imageName": "img:1",
        "category": "NVIDIA",
        "containerDiskInGb": 50,
        "volumeInGb": 20,
        "volumeMountPath": "/workspace",
        "dockerEntrypoint": [],
        "dockerStartCmd": [],
        "env": {},
        "ports": ["8888/http", "22/tcp"],
        "readme": "",
        "isPublic": False,
        "isServerless": False,
        "isRunpod": False,
        "earned": 0.0,
        "runtimeInMin": 0,
    }
    assert await ok(api.get(f"/v1/templates/{t['id']}")) == t
    assert await ok(api.get("/v1/templates")) == [t]


async def test_create_keeps_every_field_given(api: httpx.AsyncClient) -> None:
    auth = await registry_auth(api)
    body = {
        "name": "full",
        "imageName": "me/private:2",
        "category": "AMD",
        "containerDiskInGb": 0,
        "containerRegistryAuthId": auth["id"],
        "dockerEntrypoint": ["python"],
        "dockerStartCmd": ["-m", "server"],
        "env": {"A": "1", "B": ""},
        "isPublic": True,
        "isServerless": False,
        "ports": ["80/http", "2222/tcp", "65535/tcp"],
        "readme": "# hi",
        "volumeInGb": 0,
        "volumeMountPath": "/data",
    }
    t = await ok(api.post("/v1/templates", json=body))
    assert {k: t[k] for k in body} == body


async def test_names_are_unique(api: httpx.AsyncClient) -> None:
    first = await template(api, name="same")
    await refused(
        api.post("/v1/templates", json={"name": "same", "imageName": "other"}),
        "name:",
        "'same' already exists",
        first["id"],
        "must be unique",
    )
    assert await ok(api.get("/v1/templates")) == [first]
    # An official template's name is taken too.
    await refused(
        api.post("/v1/templates", json={"name": "nbext demo: echo", "imageName": "x"}),
        "already exists",
    )


BAD_BODIES: list[tuple[Any, str]] = [
    ({}, "name: is required; imageName: is required"),
    ({"name": "t"}, "imageName: is required"),
    ({"name": "", "imageName": "i"}, "name: must not be empty"),
    ({"name": "t", "imageName": "i", "category": "TPU"}, "category: Input should be 'NVIDIA'"),
    ({"name": "t", "imageName": "i", "ports": ["8888"]}, "ports.0: each port must be"),
    ({"name": "t", "imageName": "i", "ports": ["53/udp"]}, "protocol http or tcp"),
    ({"name": "t", "imageName": "i", "ports": ["99999/tcp"]}, "number 1-65535"),
    ({"name": "t", "imageName": "i", "ports": "8888/http,22/tcp"}, "ports: Input should be"),
    ({"name": "t", "imageName": "i", "volumeMountPath": "workspace"}, "volumeMountPath: must"),
    ({"name": "t", "imageName": "i", "env": {"A": 1}}, "env.A: Input should be a valid str"),
    ({"name": "t", "imageName": "i", "containerDiskInGb": -5}, "containerDiskInGb: Input"),
    ({"name": "t", "imageName": "i", "volumeInGb": "20"}, "volumeInGb: Input should be"),
    ({"name": "t", "imageName": "i", "isServerless": "true"}, "isServerless: Input should"),
    ({"name": "t", "imageName": "i", "dockerEntrypoint": [1]}, "dockerEntrypoint.0: Input"),
    ({"name": "t", "imageName": "i", "readme": None}, "readme: must not be null"),
    (
        {"name": "t", "imageName": "i", "containerRegistryAuthId": "nope"},
        "containerRegistryAuthId: no container registry auth with id 'nope'",
    ),
    (["name", "imageName"], "request body must be a JSON object, got an array"),
]


@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
async def test_bad_input_is_refused_and_changes_nothing(
    api: httpx.AsyncClient, body: Any, message: str
) -> None:
    before = await ok(api.get(ALL))
    await refused(api.post("/v1/templates", json=body), message)
    assert await ok(api.get(ALL)) == before


async def test_a_body_that_is_not_json_is_refused(api: httpx.AsyncClient) -> None:
    await refused(api.post("/v1/templates", content=b"{name"), "not valid JSON")
    await refused(api.post("/v1/templates", content=b""), "request body is empty")


async def test_listing_include_flags(api: httpx.AsyncClient) -> None:
    plain = await template(api)
    bound_template = await serverless_template(api)
    await endpoint(api, templateId=bound_template["id"])
    ids = [t["id"] for t in await ok(api.get("/v1/templates"))]
    assert ids == [plain["id"]]  # an endpoint's template is left out by default
    with_bound = await ok(api.get("/v1/templates?includeEndpointBoundTemplates=true"))
    assert [t["id"] for t in with_bound] == [plain["id"], bound_template["id"]]
    official = await ok(api.get("/v1/templates?includeRunpodTemplates=true"))
    assert [t["id"] for t in official][:1] == [plain["id"]]
    demos = [t for t in official if t["isRunpod"]]
    assert {t["imageName"] for t in demos} == {
        "echo",
        "sleep",
        "fail",
        "stream-text",
        "image-gen",
        "text-to-speech",
        "llm",
    }
    assert all(t["isServerless"] and t["isPublic"] for t in demos)
    # Without other users there are no community templates; the flag is accepted.
    assert await ok(api.get("/v1/templates?includePublicTemplates=true")) == await ok(
        api.get("/v1/templates")
    )
    await refused(api.get("/v1/templates?includeRunpodTemplates=maybe"), "includeRunpodTemplates:")


async def test_get_finds_a_template_whatever_the_flags(api: httpx.AsyncClient) -> None:
    t = await serverless_template(api)
    await endpoint(api, templateId=t["id"])
    assert (await ok(api.get(f"/v1/templates/{t['id']}")))["id"] == t["id"]
    assert (await ok(api.get("/v1/templates/demo-echo")))["isRunpod"] is True
    await refused(api.get("/v1/templates/nope"), "template 'nope' not found", status=404)


@pytest.mark.parametrize("how", ["PATCH", "POST .../update"])
async def test_update_changes_only_what_it_names(api: httpx.AsyncClient, how: str) -> None:
    t = await template(api, env={"A": "1"})
    change = {"name": "renamed", "volumeInGb": 100, "env": {"B": "2"}}
    if how == "PATCH":
        updated = await ok(api.patch(f"/v1/templates/{t['id']}", json=change))
    else:
        updated = await ok(api.post(f"/v1/templates/{t['id']}/update", json=change))
    assert updated == {**t, **change}
    assert await ok(api.get(f"/v1/templates/{t['id']}")) == updated


async def test_update_refusals_change_nothing(api: httpx.AsyncClient) -> None:
    a = await template(api, name="a")
    b = await template(api, name="b")
    await refused(api.patch(f"/v1/templates/{b['id']}", json={"name": "a"}), "'a' already exists")
    await refused(
        api.patch(f"/v1/templates/{b['id']}", json={"imageName": "new", "ports": ["x"]}), "ports.0"
    )
    await refused(
        api.patch(
            f"/v1/templates/{b['id']}", json={"imageName": "new", "containerRegistryAuthId": "no"}
        ),
        "containerRegistryAuthId: no container registry auth",
    )
    await refused(api.patch(f"/v1/templates/{b['id']}", json={"name": None}), "must not be null")
    assert await ok(api.get("/v1/templates")) == [a, b]
    # Renaming to its own name is no clash.
    assert (await ok(api.patch(f"/v1/templates/{a['id']}", json={"name": "a"})))["name"] == "a"
    await refused(api.patch("/v1/templates/nope", json={}), "not found", status=404)


async def test_official_templates_are_read_only(api: httpx.AsyncClient) -> None:
    await refused(api.patch("/v1/templates/demo-echo", json={"readme": "x"}), "official template")
    await refused(api.delete("/v1/templates/demo-echo"), "official template")
    assert (await ok(api.get("/v1/templates/demo-echo")))["readme"] != "x"


async def test_delete(api: httpx.AsyncClient) -> None:
    t = await template(api)
    r = await api.delete(f"/v1/templates/{t['id']}")
    assert r.status_code == 204 and r.content == b""
    await refused(api.get(f"/v1/templates/{t['id']}"), "not found", status=404)
    await refused(api.delete(f"/v1/templates/{t['id']}"), "not found", status=404)
    assert await ok(api.get("/v1/templates")) == []


async def test_a_template_in_use_by_an_endpoint_cannot_be_deleted(api: httpx.AsyncClient) -> None:
    t = await serverless_template(api)
    e = await endpoint(api, templateId=t["id"])
    await refused(api.delete(f"/v1/templates/{t['id']}"), f"used by endpoint(s) {e['id']}")
    await ok(api.delete(f"/v1/endpoints/{e['id']}"), 204)
    await ok(api.delete(f"/v1/templates/{t['id']}"), 204)
