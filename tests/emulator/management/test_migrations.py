"""A database an earlier version wrote is migrated once, when opened, to today's records.

The rows are those the management corpus recorded before records took v2's shape only
(``corpus.json``): endpoints and templates then carried what only ``/v1`` shows. That
``/v1`` still answers the same on them is ``test_corpus``'s; this pins the rows moved.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from nbext.emulator.migrations import STEPS
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
            expected = {f: v for f, v in data.items() if f not in OLD_ONLY[kind]}
            if kind == "endpoint":  # the second step: v2's name
                expected["scaling_type"] = expected.pop("scaling")
            assert store.get(kind, key) == expected
            note = store.get("v1", key) or {}
            if kind == "endpoint":
                assert (note["volumes"], note["extra"]) == (data["v1_volumes"], data["v1_extra"])
            else:
                assert (note["entrypoint"], note["readme"]) == (data["entrypoint"], data["readme"])
        store.close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(STEPS)


def test_pods_lose_v1_s_facts_and_endpoints_take_v2_s_names_once(tmp_path: Path) -> None:
    """A database the first step already migrated: its pods still held v1's entrypoint,
    status change and machine, its endpoints named the scaler's type ``scaling``."""
    pod = {"id": "pod1", "name": "p", "image": "img", "entrypoint": ["sh"], "machine_id": "m1"}
    pod["status_change"] = "Reset by User: Thu Jan 01 2026 00:00:00 GMT+0000 (UTC)"
    bare = {"id": "pod2", "name": "q", "image": "img", "entrypoint": [], "status_change": None}
    endpoint = {"id": "ep1", "name": "e", "template_id": "t", "scaling": "REQUEST_COUNT"}
    db = tmp_path / "v1.db"
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE records (kind TEXT, key TEXT, data TEXT, PRIMARY KEY (kind, key))"
        )
        rows = [("pod", "pod1", pod), ("pod", "pod2", bare), ("endpoint", "ep1", endpoint)]
        rows.append(("v1", "pod2", {"id": "pod2", "entrypoint": ["kept"]}))
        con.executemany(
            "INSERT INTO records VALUES (?, ?, ?)", [(k, n, json.dumps(d)) for k, n, d in rows]
        )
        con.execute("PRAGMA user_version = 1")
    for _ in range(2):
        store = SQLiteStore(db)
        assert store.get("pod", "pod1") == {"id": "pod1", "name": "p", "image": "img"}
        assert store.get("v1", "pod1") == {
            "id": "pod1",
            "entrypoint": ["sh"],
            "status_change": pod["status_change"],
            "machine_id": "m1",
        }
        assert store.get("pod", "pod2") == {"id": "pod2", "name": "q", "image": "img"}
        assert store.get("v1", "pod2") == {"id": "pod2", "entrypoint": ["kept"]}
        assert store.get("endpoint", "ep1") == {
            "id": "ep1",
            "name": "e",
            "template_id": "t",
            "scaling_type": "REQUEST_COUNT",
        }
        store.close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 2
