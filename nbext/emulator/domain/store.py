"""Where the emulator keeps records: a port the domain writes through.

Records are JSON-ready dicts filed by kind ("template", "pod", "endpoint", "volume",
"registry_auth", "usage", "job", ...) and key. ``MemoryStore`` is the default; the SQLite
store (``nbext.emulator.store``) implements the same protocol so that an emulator given
``--db FILE`` loses nothing on restart. The domain never knows which one it has.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, Protocol

Record = dict[str, Any]


class Store(Protocol):
    """Keyed records per kind; every method is safe to call from any thread."""

    def put(self, kind: str, key: str, record: Record) -> None: ...

    def delete(self, kind: str, key: str) -> None: ...

    def get(self, kind: str, key: str) -> Record | None: ...

    def all(self, kind: str) -> list[Record]:
        """Every record of ``kind``, in insertion order."""
        ...

    def clear(self, kind: str) -> None: ...

    def close(self) -> None: ...


class MemoryStore:
    """Records in dicts; copies on the way in and out so callers cannot alias state."""

    def __init__(self) -> None:
        self._kinds: dict[str, dict[str, Record]] = {}
        self._lock = threading.Lock()

    def put(self, kind: str, key: str, record: Record) -> None:
        with self._lock:
            self._kinds.setdefault(kind, {})[key] = copy.deepcopy(record)

    def delete(self, kind: str, key: str) -> None:
        with self._lock:
            self._kinds.get(kind, {}).pop(key, None)

    def get(self, kind: str, key: str) -> Record | None:
        with self._lock:
            record = self._kinds.get(kind, {}).get(key)
            return copy.deepcopy(record) if record is not None else None

    def all(self, kind: str) -> list[Record]:
        with self._lock:
            return [copy.deepcopy(r) for r in self._kinds.get(kind, {}).values()]

    def clear(self, kind: str) -> None:
        with self._lock:
            self._kinds.pop(kind, None)

    def close(self) -> None:
        pass
