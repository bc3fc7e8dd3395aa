"""``/v2`` management in process: one emulator on a fake clock, no demo endpoints, both stores.

As for ``/v1`` (``tests/emulator/management``): ``emu`` overrides the job tests' fixture,
so ``http`` serves it; ``api`` is ``http`` under a name that reads well here. Helpers
create the records most tests start from, through v2 itself.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from ..management.conftest import api, emu, ok

__all__ = ["api", "emu", "ok"]
"""The fixtures and helper ``/v1``'s tests use, the same here."""

_names = itertools.count(1)
GPU = "NVIDIA A40"


async def problem(response: Any, status: int, *fragments: str) -> dict[str, Any]:
    """A problem document with ``status`` whose detail contains every fragment."""
    r = await response if not isinstance(response, httpx.Response) else response
    assert r.status_code == status, f"{r.status_code}: {r.text}"
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"], body
    for fragment in fragments:
        assert fragment in body["detail"], body
    return body


async def template(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"tpl-{next(_names)}", "image": "echo", **fields}
    return await ok(api.post("/v2/templates", json=body), 201)  # type: ignore[no-any-return]


async def pod(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": f"pod-{next(_names)}", "image": "img", "gpu": {"id": GPU}, **fields}
    return await ok(api.post("/v2/pods", json=body), 201)  # type: ignore[no-any-return]


async def endpoint(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {
        "name": f"ep-{next(_names)}",
        "type": "QUEUE",
        "image": "echo",
        "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
        "gpu": {"pools": ["AMPERE_48"]},
        **fields,
    }
    return await ok(api.post("/v2/serverless", json=body), 201)  # type: ignore[no-any-return]


async def volume(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"name": "vol", "size": 10, "dataCenter": "EU-RO-1", **fields}
    return await ok(api.post("/v2/network-volumes", json=body), 201)  # type: ignore[no-any-return]


async def events(api: httpx.AsyncClient, path: str, **headers: str) -> list[dict[str, Any]]:
    """The events of a log stream: each its ``id`` and decoded ``data``."""
    r = await api.get(path, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    found = []
    for block in r.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            found.append({"id": fields["id"], **json.loads(fields["data"])})
    return found
