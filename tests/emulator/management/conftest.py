"""The management interface in process: one emulator on a fake clock, no demo endpoints.

``emu`` overrides the job tests' fixture of the same name (so ``http``, built on it,
serves this emulator) and runs on both stores like theirs. ``api`` is ``http`` under a
name that reads well in these tests; helpers create the records most tests start from.
"""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator

from ..conftest import MakeEmulator

_names = itertools.count(1)


@pytest.fixture
async def emu(make_emulator: MakeEmulator) -> Emulator:
    return make_emulator(demos=False)


@pytest.fixture
async def api(http: httpx.AsyncClient) -> httpx.AsyncClient:
    return http


async def ok(response: Any, status: int = 200) -> Any:
    """The JSON of a response that must have ``status`` (its body shown if not)."""
    r = await response if not isinstance(response, httpx.Response) else response
    assert r.status_code == status, f"{r.status_code}: {r.text}"
    return r.json() if r.content else None


async def refused(response: Any, *fragments: str, status: int = 400) -> str:
    """The message of a refusal with ``status``, which must contain every fragment."""
    r = await response if not isinstance(response, httpx.Response) else response
    assert r.status_code == status, f"{r.status_code}: {r.text}"
    message: str = r.json()["message"]
    for fragment in fragments:
        assert fragment in message, message
    return message


async def template(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"tpl-{next(_names)}", "imageName": "echo", **fields}
    return await ok(api.post("/v1/templates", json=body))  # type: ignore[no-any-return]


async def serverless_template(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    return await template(api, isServerless=True, **fields)


async def endpoint(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    if "templateId" not in fields:
        fields["templateId"] = (await serverless_template(api))["id"]
    return await ok(api.post("/v1/endpoints", json=fields))  # type: ignore[no-any-return]


async def pod(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    return await ok(api.post("/v1/pods", json={"imageName": "img", **fields}), 201)  # type: ignore[no-any-return]


async def volume(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": "vol", "size": 10, "dataCenterId": "EU-RO-1", **fields}
    return await ok(api.post("/v1/networkvolumes", json=body))  # type: ignore[no-any-return]


async def registry_auth(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"auth-{next(_names)}", "username": "me", "password": "pw-secret-1", **fields}
    return await ok(api.post("/v1/containerregistryauth", json=body))  # type: ignore[no-any-return]


async def listing(api: httpx.AsyncClient, path: str) -> Any:
    return await ok(api.get(path))
