"""What v2 shows of a record that v1 has no field for, kept beside the v1 record.

A template made through v2 has ``startSsh``, ``startJupyter`` and ``allowedCudaVersions``;
a volume has a storage ``type``; an endpoint a routing ``type`` and a flashboot mode. v1's
records have no place for them and v1 must serve exactly what it always served, so they
live here, keyed by the record's kind and id, and are written through the store like
every record. A record made through v1 simply has none, and v2 shows its defaults.
"""

from __future__ import annotations

from typing import Any

from ..store_port import Store
from .records import Book


def _copy(record: dict[str, Any]) -> dict[str, Any]:
    return dict(record)


class Facets:
    """Extra fields per (kind, id); ``get`` answers {} for a record that has none."""

    def __init__(self, store: Store) -> None:
        self.book: Book[dict[str, Any]] = Book(store, "v2facet", _copy, _copy)

    @staticmethod
    def _key(kind: str, record_id: str) -> str:
        return f"{kind}/{record_id}"

    def get(self, kind: str, record_id: str) -> dict[str, Any]:
        found = self.book.get(self._key(kind, record_id))
        return dict(found) if found else {}

    def set(self, kind: str, record_id: str, **fields: Any) -> None:
        """Merge ``fields`` into the record's facets."""
        key = self._key(kind, record_id)
        current = self.book.get(key) or {"id": key}
        self.book.save(key, {**current, **fields})

    def drop(self, kind: str, record_id: str) -> None:
        self.book.drop(self._key(kind, record_id))
