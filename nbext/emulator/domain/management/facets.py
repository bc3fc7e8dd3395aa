"""Facets: where an earlier version kept what v2 shows of a record that v1 had no field
for, beside the record (a template's ``startSsh``, a volume's ``type``, an endpoint's
exact queue delay, a pod's CUDA version).

Every record now keeps those fields itself. This book is only read when a database
written by that version loads: each area takes its facets into its records
(``adopt_facets``) and drops them, so nothing is lost and nothing is written here again.
"""

from __future__ import annotations

from typing import Any

from ..store_port import Store
from .records import Book


def _copy(record: dict[str, Any]) -> dict[str, Any]:
    return dict(record)


class Facets:
    """Stored extra fields per (kind, id); ``get`` answers {} for a record that has none."""

    def __init__(self, store: Store) -> None:
        self.book: Book[dict[str, Any]] = Book(store, "v2facet", _copy, _copy)

    @staticmethod
    def _key(kind: str, record_id: str) -> str:
        return f"{kind}/{record_id}"

    def get(self, kind: str, record_id: str) -> dict[str, Any]:
        found = self.book.get(self._key(kind, record_id))
        return dict(found) if found else {}

    def drop(self, kind: str, record_id: str) -> None:
        self.book.drop(self._key(kind, record_id))
