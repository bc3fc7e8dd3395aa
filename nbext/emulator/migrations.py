"""A database file an earlier version wrote, brought to this version's record shapes once,
when it is opened: SQLite's ``user_version`` counts the steps already done, so a file is
never changed twice and a new one only takes the count.

Each step rewrites rows in place (an upsert keeps a row's place in insertion order); a row
it cannot read is left for the store to report when it is read (``CorruptRecord``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

UPSERT = (
    "INSERT INTO records (kind, key, data) VALUES (?, ?, ?) "
    "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data"
)
V1_ONLY: dict[str, dict[str, str]] = {
    "endpoint": {"v1_volumes": "volumes", "v1_extra": "extra"},
    "template": {"entrypoint": "entrypoint", "readme": "readme"},
}
"""Fields records kept beside v2's for ``/v1`` alone, by kind, with their names as
``/v1`` keeps them now (notes of kind ``v1``, ``api/v1/notes.py``)."""
POD_V1_ONLY = ("entrypoint", "status_change", "machine_id")
"""A pod's, which ``/v1`` keeps by the same names (a later step)."""


def _v1_notes(db: sqlite3.Connection) -> None:
    """Endpoints and templates lose their v1-only fields to ``/v1``'s notes; a pod's
    entrypoint is noted too (a pod v2 made shows its template's, from those notes)."""
    rows = db.execute(
        "SELECT kind, key, data FROM records WHERE kind IN ('endpoint', 'template', 'pod')"
    ).fetchall()
    for kind, key, data in rows:
        try:
            record: dict[str, Any] = json.loads(data)
            moved = {
                new: record.pop(old) for old, new in V1_ONLY.get(kind, {}).items() if old in record
            }
            if kind == "pod":
                moved["entrypoint"] = record["entrypoint"]
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        db.execute(UPSERT, (kind, key, json.dumps(record)))
        db.execute(UPSERT, ("v1", key, json.dumps({"id": key, **moved})))


def _v2_names(db: sqlite3.Connection) -> None:
    """Pods lose v1's entrypoint, status change and machine to ``/v1``'s notes (an empty
    entrypoint is the template's, not noted); an endpoint's scaler type takes v2's name,
    ``scaling_type`` (v2's ``scaling.type``)."""
    notes = dict(db.execute("SELECT key, data FROM records WHERE kind = 'v1'").fetchall())
    rows = db.execute("SELECT kind, key, data FROM records WHERE kind IN ('endpoint', 'pod')")
    for kind, key, data in rows.fetchall():
        try:
            record: dict[str, Any] = json.loads(data)
            if kind == "endpoint" and "scaling" in record:
                record["scaling_type"] = record.pop("scaling")
            elif kind == "pod":
                moved = {f: record.pop(f, None) for f in POD_V1_ONLY}
                kept = {f: v for f, v in moved.items() if v}
                note = {"id": key, **kept, **json.loads(notes.get(key, "{}"))}
                db.execute(UPSERT, ("v1", key, json.dumps(note)))
        except (ValueError, TypeError, AttributeError):
            continue
        db.execute(UPSERT, (kind, key, json.dumps(record)))


STEPS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1_notes, _v2_names)


def migrate(db: sqlite3.Connection) -> None:
    """Run the steps ``db`` has not had, each in a transaction with its count."""
    done = db.execute("PRAGMA user_version").fetchone()[0]
    for number, step in enumerate(STEPS[done:], done + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            step(db)
            db.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
