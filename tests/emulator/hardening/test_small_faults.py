"""Issue 16's smaller faults: damaged database rows, the file's mode, loose numbers."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import httpx
import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.__main__ import main
from nbext.emulator.domain.store_port import CorruptRecord
from nbext.models import JobSubmission

from ..conftest import KEY

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "query",
    ["wait=1_000", "wait=%D9%A1%D9%A0%D9%A0%D9%A0", "wait=+1000", "wait=%201000", "wait=1e3"],
)
async def test_wait_takes_ascii_digits_only(http: httpx.AsyncClient, query: str) -> None:
    response = await http.post(f"/v2/echo/runsync?{query}", json={"input": {}})
    assert response.status_code == 400, response.text
    assert (
        "wait must be an integer number of milliseconds (digits 0-9 only)"
        in (response.json()["error"])
    )


async def test_ttl_takes_ascii_digits_only(http: httpx.AsyncClient) -> None:
    job = (await http.post("/v2/held/run", json={"input": {}})).json()
    fullwidth = "%EF%BC%91%EF%BC%90%EF%BC%90%EF%BC%90%EF%BC%90"  # "10000" in fullwidth digits
    response = await http.get(f"/v2/held/status/{job['id']}?ttl={fullwidth}")
    assert response.status_code == 400 and "ttl must be" in response.json()["error"]


def test_the_database_file_is_private(tmp_path: Path) -> None:
    db = tmp_path / "emulator.db"
    emulator = Emulator(db=db)  # a generated key is stored in it
    emulator.deploy("echo", endpoint_id="echo")
    emulator.close()
    for path in tmp_path.iterdir():  # the database and SQLite's -wal and -shm beside it
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def _damage(db: Path, kind: str, data: str) -> str:
    with sqlite3.connect(db) as con:
        (key,) = con.execute("SELECT key FROM records WHERE kind = ? LIMIT 1", (kind,)).fetchone()
        data = data.replace("{key}", key)
        con.execute("UPDATE records SET data = ? WHERE kind = ? AND key = ?", (data, kind, key))
    con.close()
    return str(key)


@pytest.mark.parametrize(
    ("kind", "data", "detail"),
    [
        ("template", "{not json", "not JSON"),
        ("endpoint", "[1, 2]", "not a JSON object but list"),
        ("settings", '"text"', "not a JSON object"),
        ("template", '{"id": "{key}"}', "KeyError"),
        ("endpoint_counters", '{"id": "held", "completed": "many", "failed": 0, "retried": 0}',
         "counters must be integers"),
    ],
)  # fmt: skip
def test_a_damaged_row_names_the_file_the_record_and_the_way_out(
    tmp_path: Path, kind: str, data: str, detail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "emulator.db"
    emulator = Emulator(db=db)
    emulator.deploy("no-such-image", endpoint_id="held")
    emulator.jobs.persistence.save_counters(emulator.jobs.endpoints["held"])
    emulator.close()
    key = _damage(db, kind, data)
    with pytest.raises(CorruptRecord) as caught:
        Emulator(db=db)
    message = str(caught.value)
    assert str(db) in message and kind in message and repr(key) in message
    assert detail in message and "DELETE FROM records" in message, message
    # The command line says it in one line, and exits 2.
    assert main(["--db", str(db), "--port", "0", "--endpoint", "held=echo"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {db}: stored record {kind}") and "\n" not in err
    # Following the advice brings the emulator back.
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM records WHERE kind = ? AND key = ?", (kind, key))
    con.close()
    Emulator(db=db).close()


def test_a_damaged_job_row_is_named_too(tmp_path: Path) -> None:
    db = tmp_path / "emulator.db"
    emulator = Emulator(api_key=KEY, db=db, clock=FakeClock())
    emulator.deploy("no-such-image", endpoint_id="held")
    job = emulator.jobs.submit("held", JobSubmission(input={"x": 1}), sync=False)
    emulator.close()
    _damage(db, "job", '{"id": "{key}", "endpoint_id": "held"}')
    with pytest.raises(CorruptRecord) as caught:
        Emulator(api_key=KEY, db=db)
    assert f"stored record job {job.id!r} is damaged (KeyError" in str(caught.value)
    assert str(db) in str(caught.value)
