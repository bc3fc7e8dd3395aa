"""``SQLiteStore``: the emulator's records in one SQLite file (the domain's ``Store`` port).

Every record is written through on each change and committed at once (WAL, one row per
record), so stopping the emulator, even killing it, loses nothing that was accepted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from .domain.errors import StoreFailed, StoreFull
from .domain.store_port import CorruptRecord, Record

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
"""
UPSERT = (
    "INSERT INTO records (kind, key, data) VALUES (?, ?, ?) "
    "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data"
)

_encode = json.JSONEncoder(separators=(",", ":")).encode
"""``json.dumps`` with these separators, without building an encoder for every record."""


class SQLiteStore:
    """Records as JSON rows keyed by (kind, key); insertion order kept through rowid."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        _create_private(self.path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def put(self, kind: str, key: str, record: Record) -> None:
        self._write(UPSERT, (kind, key, _encode(record)))

    def put_many(self, items: list[tuple[str, str, Record]]) -> None:
        """One transaction: a batch of 5,000 requests is one commit, not 5,000."""
        self._write(UPSERT, [(kind, key, _encode(record)) for kind, key, record in items])

    def delete(self, kind: str, key: str) -> None:
        self._write("DELETE FROM records WHERE kind = ? AND key = ?", (kind, key))

    def _write(self, sql: str, args: tuple[str, ...] | list[tuple[str, str, str]]) -> None:
        """One statement (or one per row of a list, in one transaction), committed; a
        failure says what it means for the caller."""
        try:
            with self._lock:
                if isinstance(args, list):
                    with self._db:  # BEGIN ... COMMIT, or ROLLBACK on a failure
                        self._db.execute("BEGIN")
                        self._db.executemany(sql, args)
                else:
                    self._db.execute(sql, args)
        except sqlite3.Error as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            if code == sqlite3.SQLITE_FULL:
                raise StoreFull(
                    f"the emulator's database {self.path} is full (no space left on its "
                    "disk); nothing was stored. Free some space and try again."
                ) from None
            raise StoreFailed(
                f"the emulator could not write to its database {self.path} ({exc}); "
                "nothing was stored. Try again."
            ) from None

    def get(self, kind: str, key: str) -> Record | None:
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM records WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
        return self._read(kind, key, row[0]) if row else None

    def all(self, kind: str) -> list[Record]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, data FROM records WHERE kind = ? ORDER BY rowid", (kind,)
            ).fetchall()
        return [self._read(kind, key, data) for (key, data) in rows]

    def _read(self, kind: str, key: str, data: Any) -> Record:
        """One row's record; a row that is not a JSON object is named, with its file."""
        try:
            record = json.loads(data)
        except (TypeError, ValueError) as exc:
            raise CorruptRecord(kind, key, f"not JSON: {exc}", str(self.path)) from None
        if not isinstance(record, dict):
            detail = f"not a JSON object but {type(record).__name__}"
            raise CorruptRecord(kind, key, detail, str(self.path))
        return record

    def clear(self, kind: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM records WHERE kind = ?", (kind,))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"


def _create_private(path: Path) -> None:
    """Create the file readable by its owner alone: it holds the API key and registry
    passwords. SQLite gives its -wal and -shm files the database file's permissions."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:  # it exists, or cannot be made: SQLite says which, in its own words
        return
    os.close(fd)
