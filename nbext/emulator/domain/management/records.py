"""How management records are kept: in memory for speed, written through the Store port.

Each kind of record (templates, pods, ...) is a ``Book``: a dict by id that writes every
change to the store at once, so an emulator on a SQLite file loses nothing when stopped,
even killed. Records are JSON-ready dicts in the wire's own shape plus a few private
keys, so what is stored is what is served.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ..store_port import Record, Store, read_record

T = TypeVar("T")

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_id(length: int = 14) -> str:
    """An id shaped like the service's: lowercase letters and digits."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def new_cuid() -> str:
    """A registry-auth id shaped like the service's (``cl`` and 23 more characters)."""
    return "cl" + new_id(23)


def to_datetime(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def iso(ts: float) -> str:
    """``2026-01-01T00:00:00.000Z``, the service's timestamp format."""
    return to_datetime(ts).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(what: str, ts: float) -> str:
    """A pod's ``lastStatusChange``: ``Rented by User: Thu Jan 01 2026 00:00:00 GMT+0000``."""
    return f"{what} by User: {to_datetime(ts).strftime('%a %b %d %Y %H:%M:%S')} GMT+0000 (UTC)"


def wire(model: BaseModel) -> dict[str, Any]:
    """A record as served: wire names, absent values left out (never ``null``)."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class Book(Generic[T]):
    """Records of one kind by id, in insertion order, written through to the store."""

    def __init__(
        self,
        store: Store,
        kind: str,
        to_record: Callable[[T], Record],
        from_record: Callable[[Record], T],
    ) -> None:
        self.store = store
        self.kind = kind
        self._to_record = to_record
        self._from_record = from_record
        self.items: dict[str, T] = {}

    def load(self) -> None:
        """Take back what the store holds (a restart on the same database file)."""
        self.items = {}
        for record in self.store.all(self.kind):
            item = read_record(self.kind, record, self._from_record)
            self.items[record["id"]] = item

    def save(self, key: str, item: T) -> None:
        """Store, then keep: a store that fails (``StoreFailed``) leaves nothing created."""
        self.store.put(self.kind, key, self._to_record(item))
        self.items[key] = item

    def drop(self, key: str) -> None:
        self.store.delete(self.kind, key)
        self.items.pop(key, None)

    def get(self, key: str) -> T | None:
        return self.items.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def __iter__(self) -> Iterator[T]:
        return iter(list(self.items.values()))

    def __len__(self) -> int:
        return len(self.items)
