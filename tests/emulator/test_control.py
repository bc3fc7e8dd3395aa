"""``/_emulator/...``: reset, the clock, webhook deliveries, endpoints and their workers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, RealClock
from nbext.emulator.domain.clock import settle

from .conftest import MakeEmulator, Receiver, client_for, status_of, submit, until

pytestmark = pytest.mark.anyio


async def test_reset_forgets_jobs_counters_deliveries_and_rate_history(
    emu: Emulator, http: httpx.AsyncClient, receiver: Receiver
) -> None:
    done = submit(emu, "echo", webhook=receiver.url())
    queued = submit(emu, "held")
    await settle()
    await until(lambda: len(emu.webhooks.deliveries) == 1, "the webhook")
    for _ in range(2):
        await http.post("/v2/held/purge-queue")
    response = await http.post("/_emulator/reset")
    assert response.status_code == 200 and response.json() == {"status": "reset"}
    for endpoint, job in (("echo", done), ("held", queued)):
        assert (await http.get(f"/v2/{endpoint}/status/{job.id}")).status_code == 404
    assert (await http.get("/v2/echo/health")).json()["jobs"]["completed"] == 0
    assert (await http.get("/_emulator/webhooks")).json() == []
    assert (await http.post("/v2/held/purge-queue")).status_code == 200  # window cleared
    assert sorted(e["id"] for e in (await http.get("/_emulator/endpoints")).json()) == sorted(
        emu.jobs.endpoints
    )


async def test_reset_stops_running_jobs(emu: Emulator, http: httpx.AsyncClient) -> None:
    job = submit(emu, "sleep", {"seconds": 60})
    await settle()
    await http.post("/_emulator/reset")
    await settle()
    assert job.task is None or job.task.done()
    assert (await http.get("/v2/sleep/health")).json()["workers"]["running"] == 0


async def test_clock_reports_the_time_and_that_it_is_fake(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    assert (await http.get("/_emulator/clock")).json() == {"now": emu.clock.now(), "fake": True}


async def test_clock_advance_moves_time_and_fires_what_falls_due(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    start = emu.clock.now()
    job = submit(emu, "sleep", {"seconds": 30})
    await settle()
    response = await http.post("/_emulator/clock/advance", json={"seconds": 30})
    assert response.status_code == 200
    body = response.json()
    assert body["now"] == start + 30 and body["timersFired"] >= 1
    assert status_of(emu, "sleep", job.id)["output"] == {"slept": 30}


@pytest.mark.parametrize(
    "body", [{"seconds": -1}, {"seconds": "5"}, {"seconds": True}, {}, [5], {"seconds": None}]
)
async def test_clock_advance_refuses_a_bad_amount(
    emu: Emulator, http: httpx.AsyncClient, body: Any
) -> None:
    start = emu.clock.now()
    response = await http.post("/_emulator/clock/advance", json=body)
    assert response.status_code == 400
    assert "seconds must be a number >= 0" in response.json()["error"]
    assert emu.clock.now() == start


async def test_clock_advance_is_refused_on_the_real_clock(make_emulator: MakeEmulator) -> None:
    emu = make_emulator(clock=RealClock())
    async with client_for(emu) as http:
        response = await http.post("/_emulator/clock/advance", json={"seconds": 1})
        assert response.status_code == 409
        assert "real clock" in response.json()["error"]
        assert (await http.get("/_emulator/clock")).json()["fake"] is False


async def test_endpoints_lists_each_endpoint_with_its_workers(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("sleep", endpoint_id="pool", workers={"min": 1, "max": 2, "idleTimeout": 7})
    job = submit(emu, "pool", {"seconds": 60})
    submit(emu, "pool", {"seconds": 60})
    submit(emu, "pool", {"seconds": 60})
    await settle()
    listed = {e["id"]: e for e in (await http.get("/_emulator/endpoints")).json()}
    pool = listed["pool"]
    # the settings in the words a deploy takes them in (v2's), the fleet apart
    assert pool["image"] == "sleep"
    assert pool["workers"] == {"min": 1, "max": 2, "idleTimeout": 7}
    assert not {"workersMin", "workersMax", "idleTimeout"} & pool.keys()
    assert pool["executionTimeoutMs"] == 600_000 and pool["queued"] == 1
    assert [w["state"] for w in pool["fleet"]] == ["running", "running"]
    assert job.id in {w["jobId"] for w in pool["fleet"]}
    assert listed["held"]["fleet"] == [] and listed["held"]["queued"] == 0


async def test_endpoints_shows_how_long_a_worker_has_been_idle(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="warm", workers={"min": 1})
    await http.post("/_emulator/clock/advance", json={"seconds": 2.5})
    listed = {e["id"]: e for e in (await http.get("/_emulator/endpoints")).json()}
    (worker,) = listed["warm"]["fleet"]
    assert worker["state"] == "idle" and worker["jobId"] is None and worker["idleForS"] == 2.5


async def test_deploy_creates_an_endpoint_that_serves_jobs_at_once(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    response = await http.post(
        "/_emulator/endpoints",
        json={"image": "echo", "id": "made", "workers": {"min": 1, "max": 2}},
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["id"], body["image"], body["workers"]["min"], body["workers"]["max"]) == (
        "made",
        "echo",
        1,
        2,
    )
    answer = await http.post("/v2/made/runsync", json={"input": {"x": 1}})
    assert answer.json()["output"] == {"x": 1}


async def test_deploy_without_an_id_generates_one(http: httpx.AsyncClient) -> None:
    response = await http.post("/_emulator/endpoints", json={"image": "echo"})
    assert response.status_code == 201
    endpoint_id = response.json()["id"]
    assert (await http.get(f"/v2/{endpoint_id}/health")).status_code == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "string 'image'"),
        ({"image": 5}, "string 'image'"),
        ([], "string 'image'"),
        ({"image": "echo", "id": "echo"}, "already exists"),
        ({"image": "echo", "id": "bad id"}, "must be 1-64 letters"),
        ({"image": "echo", "workers": {"min": 5, "max": 1}}, "must not exceed"),
        ({"image": "echo", "workers": {"max": "many"}}, "many"),
        (
            {"image": "echo", "workers": {"max": True}},
            "workers.max must be a whole number >= 0, got True",
        ),
        ({"image": "echo", "workers": {"maximum": 2}}, "workers has no 'maximum': give min, max"),
        ({"image": "echo", "workersMax": 2}, "workersMax is not a setting: give workers"),
        ({"image": "echo", "executionTimeoutMs": 10}, "between 5000"),
    ],
)
async def test_deploy_refuses_a_bad_body_saying_why(
    emu: Emulator, http: httpx.AsyncClient, body: Any, message: str
) -> None:
    before = set(emu.jobs.endpoints)
    response = await http.post("/_emulator/endpoints", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert set(emu.jobs.endpoints) == before
