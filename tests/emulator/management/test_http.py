"""What every ``/v1`` operation shares: auth, the error body, the served reference.

Operations are enumerated from the reference document itself, so none is missed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import ok, refused

pytestmark = pytest.mark.anyio

REFERENCE_PATH = (
    Path(__file__).resolve().parents[3] / "nbext/emulator/api/v1/reference.openapi.json"
)
REFERENCE: dict[str, Any] = json.loads(REFERENCE_PATH.read_text())
OPERATIONS = [
    (method.upper(), path, op)
    for path, ops in REFERENCE["paths"].items()
    for method, op in ops.items()
]
SECURED = [(m, p) for m, p, op in OPERATIONS if op.get("security", REFERENCE["security"])]
PUBLIC = [(m, p) for m, p, op in OPERATIONS if not op.get("security", REFERENCE["security"])]


def test_the_reference_has_37_operations() -> None:
    assert len(OPERATIONS) == 37 and len(PUBLIC) == 2


def concrete(path: str) -> str:
    return "/v1" + path.replace("{", "x-").replace("}", "")


async def test_every_operation_needs_the_key(api: httpx.AsyncClient) -> None:
    api.headers.pop("Authorization")
    for auth in (None, "Bearer rpa_WRONGKEY0000000000000000000000000000000", "x"):
        headers = {"Authorization": auth} if auth else {}
        for method, path in SECURED:
            response = await api.request(method, concrete(path), headers=headers, json={})
            message = await refused(response, status=401)
            assert "API key" in message and "WRONGKEY" not in message, (method, path)


async def test_the_bare_key_is_accepted(api: httpx.AsyncClient) -> None:
    key = api.headers["Authorization"].removeprefix("Bearer ")
    r = await api.get("/v1/pods", headers={"Authorization": key})
    assert r.status_code == 200


@pytest.mark.parametrize(("method", "path"), PUBLIC)
async def test_the_docs_are_public(api: httpx.AsyncClient, method: str, path: str) -> None:
    api.headers.pop("Authorization")
    r = await api.request(method, concrete(path))
    assert r.status_code == 200


async def test_the_reference_is_served_as_it_is(api: httpx.AsyncClient) -> None:
    r = await api.get("/v1/openapi.json")
    assert r.headers["content-type"] == "application/json"
    assert r.content == REFERENCE_PATH.read_bytes()
    page = await api.get("/v1/docs")
    assert page.headers["content-type"].startswith("text/html")
    assert "/v1/pods/{podId}/restart" in page.text and "<script" not in page.text


@pytest.mark.parametrize(
    ("method", "path", "what"),
    [
        ("GET", "/v1/pods/nope", "pod 'nope'"),
        ("GET", "/v1/endpoints/nope", "endpoint 'nope'"),
        ("GET", "/v1/templates/nope", "template 'nope'"),
        ("GET", "/v1/networkvolumes/nope", "network volume 'nope'"),
        ("GET", "/v1/containerregistryauth/nope", "container registry auth 'nope'"),
        ("DELETE", "/v1/pods/nope", "pod 'nope'"),
        ("DELETE", "/v1/endpoints/nope", "endpoint 'nope'"),
        ("DELETE", "/v1/templates/nope", "template 'nope'"),
        ("DELETE", "/v1/networkvolumes/nope", "network volume 'nope'"),
        ("DELETE", "/v1/containerregistryauth/nope", "container registry auth 'nope'"),
        ("PATCH", "/v1/endpoints/nope", "endpoint 'nope'"),
        ("POST", "/v1/templates/nope/update", "template 'nope'"),
        ("POST", "/v1/networkvolumes/nope/update", "network volume 'nope'"),
    ],
)
async def test_unknown_ids_are_404_naming_them(
    api: httpx.AsyncClient, method: str, path: str, what: str
) -> None:
    await refused(api.request(method, path, json={}), what, "not found", status=404)


async def test_unknown_paths_and_methods_answer_in_the_interfaces_shape(
    api: httpx.AsyncClient,
) -> None:
    await refused(api.get("/v1/gpus"), "no operation at /v1/gpus", "/v1/openapi.json", status=404)
    await refused(api.put("/v1/pods"), "PUT is not an operation of /v1/pods", status=405)
    # Other interfaces keep their own shapes.
    r = await api.get("/_emulator/nothing-here")
    assert r.status_code == 404 and "message" not in r.json()


async def test_a_body_over_the_limit_is_refused(api: httpx.AsyncClient) -> None:
    body = {"name": "t", "imageName": "i", "readme": "x" * (1024 * 1024 + 1)}
    r = await api.post("/v1/templates", json=body)
    assert r.status_code == 413 and "limit" in r.json()["message"]
    assert await ok(api.get("/v1/templates")) == []
