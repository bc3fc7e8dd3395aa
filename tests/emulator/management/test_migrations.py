"""A database an earlier version wrote is migrated once, when opened, to today's records.

The rows are those the management corpus recorded before records took v2's shape only
(``corpus.json``): endpoints and templates then carried what only ``/v1`` shows. That
``/v1`` still answers the same on them is ``test_corpus``'s; this pins the rows moved.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from nbext.emulator.sqlite_store import SQLiteStore

from . import corpus

OLD_ONLY = {"endpoint": {"v1_volumes", "v1_extra"}, "template": {"entrypoint", "readme"}}


def test_old_records_lose_their_v1_only_fields_to_v1_s_notes_once(tmp_path: Path) -> None:
    rows = json.loads(corpus.FIXTURE.read_text())["stored"]["rows"]
    old = {(kind, key): data for kind, key, data in rows if kind in OLD_ONLY}
    assert any(OLD_ONLY[kind] <= data.keys() for (kind, _), data in old.items())
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE records (kind TEXT, key TEXT, data TEXT, PRIMARY KEY (kind, key))"
        )
        con.executemany(
            "INSERT INTO records VALUES (?, ?, ?)", [(k, n, json.dumps(d)) for k, n, d in rows]
        )
    for _ in range(2):  # the second opening finds the step done and changes nothing
        store = SQLiteStore(db)
        for (kind, key), data in old.items():
            assert store.get(kind, key) == {
                f: v for f, v in data.items() if f not in OLD_ONLY[kind]
            }
            note = store.get("v1", key) or {}
            if kind == "endpoint":
                assert (note["volumes"], note["extra"]) == (data["v1_volumes"], data["v1_extra"])
            else:
                assert (note["entrypoint"], note["readme"]) == (data["entrypoint"], data["readme"])
        store.close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1
