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

UPSERT = (
    "INSERT INTO records (kind, key, data) VALUES (?, ?, ?) "
    "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data"
)


def _v1_notes(db: sqlite3.Connection) -> None:
    """Endpoint records kept v1's volume split (``v1_volumes``) and the fields a v1 body
    named that the record has none for (``v1_extra``) beside v2's fields; ``/v1`` keeps
    them itself now, as notes of kind ``v1`` (``api/v1/notes.py``)."""
    rows = db.execute("SELECT key, data FROM records WHERE kind = 'endpoint'").fetchall()
    for key, data in rows:
        try:
            record = json.loads(data)
            volumes, extra = record.pop("v1_volumes", None), record.pop("v1_extra", {})
        except (ValueError, AttributeError):
            continue
        db.execute(UPSERT, ("endpoint", key, json.dumps(record)))
        note = {"id": key, "volumes": volumes, "extra": extra}
        db.execute(UPSERT, ("v1", key, json.dumps(note)))


STEPS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1_notes,)


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
