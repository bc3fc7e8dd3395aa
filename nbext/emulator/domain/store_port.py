"""Where the emulator keeps records: a port the domain writes through, in memory or
SQLite (``--db FILE``), never knowing which (docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

Record = dict[str, Any]
T = TypeVar("T")


class CorruptRecord(ValueError):
    """A stored record that cannot be read back; says which, where, and how to recover."""

    def __init__(self, kind: str, key: str, detail: str, location: str | None = None) -> None:
        self.kind, self.key, self.detail, self.location = kind, key, detail, location
        text = f"{location}: " if location else ""
        text += f"stored record {kind} {key!r} is damaged ({detail})."
        if location:
            text += (
                f' To recover, delete that record (it is lost): sqlite3 {location} "DELETE '
                f"FROM records WHERE kind = '{kind}' AND key = '{key}'\"; or start on "
                "a new --db file."
            )
        super().__init__(text)

    def at(self, location: str) -> CorruptRecord:
        """The same error, naming the file it is in."""
        return CorruptRecord(self.kind, self.key, self.detail, self.location or location)


def read_record(kind: str, record: Any, read: Callable[[Record], T]) -> T:
    """``read(record)``, or ``CorruptRecord`` naming it when its shape is not the expected."""
    try:
        return read(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        key = record.get("id") if isinstance(record, dict) else None
        detail = f"{type(exc).__name__}: {exc}"
        raise CorruptRecord(kind, str(key or "?"), detail) from None


class Store(Protocol):
    """Keyed records per kind, safe from any thread. Writes raise ``errors.StoreFailed``
    (``StoreFull``: a full disk); reads ``CorruptRecord`` for one that cannot be read."""

    def put(self, kind: str, key: str, record: Record) -> None: ...

    def put_many(self, items: list[tuple[str, str, Record]]) -> None:
        """``put`` each ``(kind, key, record)``, all or none (a batch's requests)."""

    def delete(self, kind: str, key: str) -> None: ...

    def get(self, kind: str, key: str) -> Record | None: ...

    def all(self, kind: str) -> list[Record]:
        """Every record of ``kind``, in insertion order."""

    def clear(self, kind: str) -> None: ...

    def close(self) -> None: ...


class MemoryStore:
    """Records in dicts; copies on the way in and out so callers cannot alias state."""

    def __init__(self) -> None:
        self._kinds: dict[str, dict[str, Record]] = {}
        self._lock = threading.Lock()

    def put(self, kind: str, key: str, record: Record) -> None:
        self.put_many([(kind, key, record)])

    def put_many(self, items: list[tuple[str, str, Record]]) -> None:
        copied = copy.deepcopy(items)
        with self._lock:
            for kind, key, value in copied:
                self._kinds.setdefault(kind, {})[key] = value

    def delete(self, kind: str, key: str) -> None:
        with self._lock:
            self._kinds.get(kind, {}).pop(key, None)

    def get(self, kind: str, key: str) -> Record | None:
        with self._lock:
            record = self._kinds.get(kind, {}).get(key)
        return copy.deepcopy(record)

    def all(self, kind: str) -> list[Record]:
        with self._lock:
            records = list(self._kinds.get(kind, {}).values())
        return copy.deepcopy(records)

    def clear(self, kind: str) -> None:
        with self._lock:
            self._kinds.pop(kind, None)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "MemoryStore()"
