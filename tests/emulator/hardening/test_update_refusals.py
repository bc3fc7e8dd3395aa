"""An update the store refuses changes nothing: not in memory, not on disk, not live.

Every update path of ``/v1`` and ``/v2`` (templates, endpoints, pods and their start,
stop, restart and reset, network volumes) first changed the record in memory and then
saved it, so a refused save answered 503/507 while the change was served anyway. The
store fails for real here: a read-only database (``PRAGMA query_only``) refuses every
write (503), and a capped file (``max_page_count``) refuses a write that needs one more
page (507), as a full disk does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.sqlite_store import SQLiteStore

from ..conftest import KEY, client_for
from .test_store_failures import BIG, fill_disk, free_disk

pytestmark = pytest.mark.anyio

KINDS = ("template", "endpoint", "pod", "volume", "usage")
LISTINGS = (
    "/v1/templates",
    "/v1/endpoints",
    "/v1/pods",
    "/v1/networkvolumes",
    "/v2/templates",
    "/v2/serverless",
    "/v2/pods",
    "/v2/network-volumes",
    "/v1/billing/pods?bucketSize=hour",
)


def read_only(emu: Emulator, on: bool) -> None:
    store = emu.store
    assert isinstance(store, SQLiteStore)
    with store._lock:
        store._db.execute(f"PRAGMA query_only = {int(on)}")


@pytest.fixture
async def world(
    tmp_path: Path,
) -> AsyncIterator[tuple[Emulator, httpx.AsyncClient, dict[str, str]]]:
    """One of each resource, made through v1 and v2 while the store still writes."""
    emu = Emulator(api_key=KEY, clock=FakeClock(), db=tmp_path / "e.db", rate_limit=False)
    emu.bind()
    async with client_for(emu) as http:

        async def made(path: str, body: dict[str, Any]) -> str:
            r = await http.post(path, json=body)
            assert r.status_code in (200, 201), r.text
            return str(r.json()["id"])

        ids = {"template": await made("/v1/templates", {"name": "t", "imageName": "echo",
                                                         "isServerless": True})}  # fmt: skip
        ids["endpoint"] = await made("/v1/endpoints", {"templateId": ids["template"],
                                                       "workersMax": 2})  # fmt: skip
        ids["pod"] = await made("/v1/pods", {"imageName": "img", "name": "p"})
        ids["volume"] = await made(
            "/v1/networkvolumes", {"name": "v", "size": 10, "dataCenterId": "EU-RO-1"}
        )
        ids["v2template"] = await made(
            "/v2/templates", {"name": "t2", "image": "echo", "serverless": True}
        )
        ids["v2endpoint"] = await made("/v2/serverless", {
            "name": "e2", "type": "QUEUE", "image": "echo",
            "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
            "gpu": {"pools": ["AMPERE_48"]}})  # fmt: skip
        ids["v2pod"] = await made("/v2/pods", {"name": "p2", "image": "img",
                                               "gpu": {"id": "NVIDIA A40"}})  # fmt: skip
        ids["v2volume"] = await made(
            "/v2/network-volumes", {"name": "v2", "size": 10, "dataCenter": "EU-RO-1"}
        )
        yield emu, http, ids
    emu.jobs.reset()
    await emu.aclose()
    emu.close()


async def everything(emu: Emulator, http: httpx.AsyncClient) -> dict[str, Any]:
    """What is served, what is stored and how the live endpoints are set."""
    seen: dict[str, Any] = {}
    for path in LISTINGS:
        r = await http.get(path)
        assert r.status_code == 200, r.text
        seen[path] = r.json()
    for kind in KINDS:
        seen[f"stored {kind}"] = sorted(emu.store.all(kind), key=lambda r: str(r["id"]))
    seen["live"] = {
        e.id: (e.name, e.image, e.workers_min, e.workers_max, e.execution_timeout_ms)
        for e in emu.jobs.endpoints.values()
    }
    return seen


UPDATES = [
    ("patch", "/v1/templates/{template}", {"imageName": "other", "env": {"A": "1"}}),
    ("patch", "/v1/endpoints/{endpoint}", {"workersMax": 3, "name": "renamed"}),
    ("patch", "/v1/endpoints/{endpoint}", {"templateId": "{v2template}"}),
    ("patch", "/v1/pods/{pod}", {"name": "renamed", "locked": True}),
    ("patch", "/v1/pods/{pod}", {"imageName": "img:2"}),  # a change that resets the pod
    ("post", "/v1/pods/{pod}/stop", None),
    ("post", "/v1/pods/{pod}/restart", None),
    ("post", "/v1/pods/{pod}/reset", None),
    ("patch", "/v1/networkvolumes/{volume}", {"size": 20, "name": "grown"}),
    ("patch", "/v2/templates/{v2template}", {"image": "other", "startSsh": False}),
    ("patch", "/v2/serverless/{v2endpoint}", {"env": {"C": "c"}, "name": "renamed"}),
    ("patch", "/v2/serverless/{v2endpoint}", {"image": "echo:2"}),
    ("patch", "/v2/pods/{v2pod}", {"name": "renamed"}),
    ("post", "/v2/pods/{v2pod}/action", {"action": "stop"}),
    ("patch", "/v2/network-volumes/{v2volume}", {"size": 20}),
]


def fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: fill(v, ids) for k, v in value.items()}
    return value


@pytest.mark.parametrize(("method", "path", "body"), UPDATES, ids=lambda v: str(v)[:40])
async def test_an_update_the_store_refuses_changes_nothing_and_goes_through_later(
    world: tuple[Emulator, httpx.AsyncClient, dict[str, str]],
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    emu, http, ids = world
    url, payload = fill(path, ids), fill(body, ids)
    before = await everything(emu, http)
    read_only(emu, True)
    r = await http.request(method.upper(), url, json=payload)
    assert r.status_code == 503 and "nothing was stored" in r.text, r.text
    read_only(emu, False)
    assert await everything(emu, http) == before
    r = await http.request(method.upper(), url, json=payload)  # the store writes again
    assert r.status_code == 200, r.text
    after = await everything(emu, http)
    assert after != before
    served = {k: v for k, v in after.items() if not k.startswith("stored")}
    restarted = Emulator(api_key=KEY, clock=FakeClock(), db=emu.store.path)  # type: ignore[attr-defined]
    try:
        async with client_for(restarted) as again:
            on_disk = await everything(restarted, again)
    finally:
        restarted.close()
    for path_ in LISTINGS[:-1]:
        assert on_disk[path_] == served[path_], path_


async def test_a_template_change_too_big_for_the_disk_leaves_its_endpoints_as_they_were(
    world: tuple[Emulator, httpx.AsyncClient, dict[str, str]],
) -> None:
    emu, http, ids = world
    before = await everything(emu, http)
    fill_disk(emu)
    for url, body in (
        (f"/v1/templates/{ids['template']}", {"imageName": "other", "readme": BIG}),
        (f"/v2/templates/{ids['v2template']}", {"image": "other", "env": {"BLOB": BIG}}),
        (f"/v2/serverless/{ids['v2endpoint']}", {"env": {"BLOB": BIG}}),
        (f"/v1/pods/{ids['pod']}", {"env": {"BLOB": BIG}}),
    ):
        r = await http.patch(url, json=body)
        assert r.status_code == 507 and "is full" in r.text, (url, r.text)
        assert await everything(emu, http) == before, url
    free_disk(emu)
    r = await http.patch(f"/v1/templates/{ids['template']}", json={"imageName": "other"})
    assert r.status_code == 200, r.text
    endpoint = (await http.get(f"/v1/endpoints/{ids['endpoint']}")).json()
    assert endpoint["version"] == 1
    assert emu.jobs.endpoints[ids["endpoint"]].image == "other"


def refuse_writes_of(emu: Emulator, kind: str) -> None:
    """The store refuses every write of one kind of record; the others still go through."""
    store = emu.store
    assert isinstance(store, SQLiteStore)
    with store._lock:
        for event in ("INSERT", "UPDATE", "DELETE"):
            row = "OLD" if event == "DELETE" else "NEW"
            store._db.execute(
                f"CREATE TEMP TRIGGER refuse_{kind}_{event.lower()} BEFORE {event} ON records "
                f"WHEN {row}.kind = '{kind}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )


@pytest.mark.parametrize(
    ("url", "body", "refused"),
    [
        ("/v1/templates/{template}", {"imageName": "other"}, "endpoint"),
        ("/v1/pods/{pod}/stop", None, "usage"),
        ("/v1/networkvolumes/{volume}", {"size": 30}, "usage"),
        ("/v2/serverless/{v2endpoint}", {"image": "echo:2"}, "endpoint"),
        ("/v2/templates/{template}", {"image": "other", "startSsh": False}, "endpoint"),
        (
            "/v2/pods",
            {"name": "p3", "image": "img", "gpu": {"id": "NVIDIA A40"}},
            "usage",
        ),
    ],
)
async def test_a_change_whose_later_write_is_refused_takes_back_the_earlier_ones(
    world: tuple[Emulator, httpx.AsyncClient, dict[str, str]],
    url: str,
    body: dict[str, Any] | None,
    refused: str,
) -> None:
    emu, http, ids = world
    before = await everything(emu, http)
    refuse_writes_of(emu, refused)
    method = "PATCH" if body and not url.endswith("/v2/pods") else "POST"
    r = await http.request(method, fill(url, ids), json=body)
    assert r.status_code == 503 and "nothing was stored" in r.text, r.text
    assert await everything(emu, http) == before
