"""``SQLiteStore``: the emulator's records in one SQLite file.

Given ``--db FILE`` (or ``Emulator(db=...)``), every template, endpoint, pod, volume,
registry auth, usage record and job is written through on each change, committed at
once (WAL, one row per record), so stopping the emulator, even killing it, loses
nothing that was accepted. It implements the domain's ``Store`` port.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from .domain.store_port import Record

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
"""


class SQLiteStore:
    """Records as JSON rows keyed by (kind, key); insertion order kept through rowid."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def put(self, kind: str, key: str, record: Record) -> None:
        data = json.dumps(record, separators=(",", ":"))
        with self._lock:
            self._db.execute(
                "INSERT INTO records (kind, key, data) VALUES (?, ?, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data",
                (kind, key, data),
            )

    def delete(self, kind: str, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM records WHERE kind = ? AND key = ?", (kind, key))

    def get(self, kind: str, key: str) -> Record | None:
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM records WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def all(self, kind: str) -> list[Record]:
        with self._lock:
            rows = self._db.execute(
                "SELECT data FROM records WHERE kind = ? ORDER BY rowid", (kind,)
            ).fetchall()
        return [json.loads(data) for (data,) in rows]

    def clear(self, kind: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM records WHERE kind = ?", (kind,))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"
