"""A store that cannot write (a full disk) never makes an answer contradict what happened.

Before the fix, with the disk full ``/run`` answered 500 while the job was queued anyway
and ran later; a job whose completion could not be stored stayed IN_PROGRESS for 51
minutes against a 600 s timeout, its worker "running" for ever. The disk fills here for
real: SQLite's ``max_page_count`` caps the database file, and a write that needs one more
page fails with SQLITE_FULL, as on a full disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.sqlite_store import SQLiteStore

from ..conftest import KEY, advance, client_for, until

pytestmark = pytest.mark.anyio

BIG = "x" * 200_000
"""Large enough that storing it needs new pages of the database file."""


def fill_disk(emu: Emulator) -> None:
    store = emu.store
    assert isinstance(store, SQLiteStore)
    with store._lock:
        (pages,) = store._db.execute("PRAGMA page_count").fetchone()
        store._db.execute(f"PRAGMA max_page_count = {pages}")


def free_disk(emu: Emulator) -> None:
    store = emu.store
    assert isinstance(store, SQLiteStore)
    with store._lock:
        store._db.execute("PRAGMA max_page_count = 1073741823")


def big_output(job: dict[str, Any]) -> Any:
    return {"blob": BIG}


@pytest.fixture
async def full(tmp_path: Path) -> Any:
    emu = Emulator(api_key=KEY, clock=FakeClock(), db=tmp_path / "e.db", rate_limit=False)
    emu.bind()
    emu.deploy("echo", endpoint_id="echo")
    emu.deploy(handler=big_output, endpoint_id="big")
    emu.deploy("sleep", endpoint_id="sleep", execution_timeout_ms=5_000)
    yield emu
    emu.jobs.reset()
    await emu.aclose()
    emu.close()


async def test_a_job_that_cannot_be_stored_is_refused_and_never_runs(full: Emulator) -> None:
    fill_disk(full)
    async with client_for(full) as http:
        for route in ("run", "runsync"):
            r = await http.post(f"/v2/echo/{route}", json={"input": {"blob": BIG}})
            assert r.status_code == 507, r.text
            assert "is full" in r.json()["error"] and "nothing was stored" in r.json()["error"]
        await advance(full, 60)
        assert full.jobs.jobs == {}
        assert (await http.get("/v2/echo/requests")).json() == []
        health = (await http.get("/v2/echo/health")).json()
        assert health["jobs"] == {"completed": 0, "failed": 0, "inProgress": 0, "inQueue": 0,
                                  "retried": 0}  # fmt: skip
        before = (await http.get("/v1/templates")).json()
        r = await http.post("/v1/templates", json={"name": "t", "imageName": "i", "readme": BIG})
        assert r.status_code == 507 and "is full" in r.json()["message"]
        assert (await http.get("/v1/templates")).json() == before


async def test_state_changes_go_on_while_the_disk_is_full_and_are_stored_later(
    full: Emulator, tmp_path: Path
) -> None:
    async with client_for(full) as http:
        big = (await http.post("/v2/big/run", json={"input": {}})).json()
        slow = (await http.post("/v2/sleep/run", json={"input": {"seconds": 60}})).json()
        fill_disk(full)  # both jobs were stored when accepted; now nothing more fits
        await until(lambda: full.jobs.jobs[big["id"]].status.value == "COMPLETED", "big's end")
        status = (await http.get(f"/v2/big/status/{big['id']}")).json()
        assert status["status"] == "COMPLETED" and status["output"] == {"blob": BIG}
        surfaced = (await http.get("/_emulator/store")).json()
        assert surfaced["unwrittenChanges"] > 0 and "is full" in surfaced["problem"]
        await advance(full, 5)  # the sleeping job's execution timeout still fires
        status = (await http.get(f"/v2/sleep/status/{slow['id']}")).json()
        assert status["status"] == "TIMED_OUT"
        health = (await http.get("/v2/sleep/health")).json()
        assert health["workers"]["running"] == 0
        assert (await http.post("/v2/echo/runsync", json={"input": {"n": 1}})).status_code in (
            200, 507)  # fmt: skip
        free_disk(full)
        await advance(full, 40)  # retries, backing off, reach the store again
        surfaced = (await http.get("/_emulator/store")).json()
        assert surfaced["unwrittenChanges"] == 0 and surfaced["problem"] is None
    # What was kept is on disk: another emulator on the same file sees the outcomes.
    again = Emulator(api_key=KEY, clock=FakeClock(), db=tmp_path / "e.db")
    records = {r["id"]: r for r in again.store.all("job")}
    assert records[big["id"]]["status"] == "COMPLETED"
    assert records[big["id"]]["output"] == {"blob": BIG}
    assert records[slow["id"]]["status"] == "TIMED_OUT"
    again.close()


async def test_a_batch_call_that_cannot_be_stored_adds_nothing_and_the_batch_goes_on(
    full: Emulator,
) -> None:
    async with client_for(full) as http:
        created = (await http.post("/v2/echo/batch", json=[{"input": {"n": 1}}])).json()
        path = f"/v2/echo/batch/{created['id']}"
        fill_disk(full)
        big = [{"input": {"blob": BIG}} for _ in range(5)]
        refused = await http.post("/v2/echo/batch", json=big)
        assert refused.status_code == 507 and "nothing was stored" in refused.json()["error"]
        added = await http.post(f"{path}/requests", json={"requests": big})
        assert added.status_code == 507
        assert (await http.get("/v2/echo/batch")).json()["total"] == 1
        assert (await http.get(path)).json()["requestTotal"] == 1
        free_disk(full)
        assert (await http.post(f"{path}/finalize")).json()["status"] == "FINALIZED"
        await until(lambda: full.batches.batches[created["id"]].ended == 1, "the batch done")
        results = (await http.get(f"{path}/requests")).json()["requests"]
        assert [r["output"] for r in results] == [{"n": 1}]
