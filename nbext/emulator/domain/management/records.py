"""How management records are kept: in memory, written through the Store port, changed
whole or not at all inside ``atomic()`` (docs/architecture.md#management-areas)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import MISSING, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel

from nbext.models.v2 import Rest

from ..errors import NotFound, StoreFailed
from ..ids import new_id as new_id  # the id of every record kind, as its modules import it
from ..store_port import Record, Store, read_record
from .refusals import refuse

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")


def new_cuid() -> str:
    """A registry-auth id shaped like the service's (``cl`` and 23 more characters)."""
    return "cl" + new_id(23)


def to_datetime(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def iso(ts: float) -> str:
    """``2026-01-01T00:00:00.000Z``, the service's timestamp format."""
    return to_datetime(ts).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def moment(name: str, value: str | None) -> datetime | None:
    """A query's RFC 3339 date-time, UTC when it names no offset, or a 422 naming the field
    ``name`` (the contract's validator does not check format ``date-time``)."""
    if value is None:
        return None
    try:
        found = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise refuse(name, f"{value!r} is not an RFC 3339 date-time") from None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def wire(model: BaseModel) -> dict[str, Any]:
    """A record as served: wire names, absent values left out (never ``null``)."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


D = TypeVar("D", bound="DataclassInstance")


def fields_of(item: DataclassInstance) -> dict[str, Any]:
    """A record kept as a dataclass, as stored: each field by its name."""
    return {f.name: getattr(item, f.name) for f in fields(item)}


OLD_LAYOUT = (
    "kept in v1's shape, as development builds did before records took REST v2's; no "
    "release wrote it, and this version does not read it"
)
"""Why a record of that layout is refused: a template, endpoint or pod row holding its v1
view (``view``), a volume row its ``dataCenterId``. Start on a new ``--db`` file."""


def from_fields(cls: type[D], record: dict[str, Any]) -> D:
    """The dataclass record ``fields_of`` stored; a field stored before it existed takes its
    default, one without a default is the ``KeyError`` of a damaged row."""
    if "view" in record:
        raise ValueError(OLD_LAYOUT)
    return cls(
        **{
            f.name: record[f.name]
            for f in fields(cls)
            if f.name in record or (f.default is MISSING and f.default_factory is MISSING)
        }
    )


class _Change:
    """The undos and deferred effects of the change being made (see ``atomic``)."""

    def __init__(self) -> None:
        self.undo: list[Callable[[], object]] = []
        self.after: list[Callable[[], object]] = []
        self.open = True


_current: ContextVar[_Change | None] = ContextVar("nbext_management_change", default=None)
"""Per thread and per asyncio task: concurrent requests never share a change."""


def _active() -> _Change | None:
    """The change being made here, if any: a task started inside one (a live endpoint's
    worker) inherits its context, and writes on its own once that change is over."""
    change = _current.get()
    return change if change is not None and change.open else None


@contextmanager
def atomic() -> Iterator[None]:
    """Everything written inside is kept, or undone when anything inside raises; nested
    blocks join the outermost, whose end runs the deferred effects (``after``)."""
    if _active() is not None:
        yield
        return
    change = _Change()
    token = _current.set(change)
    try:
        yield
    except BaseException:
        change.open = False
        _current.reset(token)
        for undo in reversed(change.undo):
            undo()
        raise
    change.open = False
    _current.reset(token)
    for effect in change.after:
        effect()


def after(effect: Callable[[], object]) -> None:
    """Run ``effect`` once the current change is stored (at once outside ``atomic``)."""
    change = _active()
    if change is None:
        effect()
    else:
        change.after.append(effect)


def on_undo(undo: Callable[[], object]) -> None:
    """Run ``undo`` if the current change fails (nothing outside ``atomic``)."""
    change = _active()
    if change is not None:
        change.undo.append(undo)


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

    @staticmethod
    def of(store: Store, kind: str, record: type[D]) -> Book[D]:
        """Records kept as instances of the dataclass ``record``, stored field by field."""
        return Book(store, kind, fields_of, functools.partial(from_fields, record))

    def load(self) -> None:
        """Take back what the store holds (a restart on the same database file)."""
        self.items = {}
        for record in self.store.all(self.kind):
            item = read_record(self.kind, record, self._from_record)
            self.items[record["id"]] = item

    def save(self, key: str, item: T) -> None:
        """Store, then keep: on ``StoreFailed`` the record, which callers change in place
        before saving, is read back from the store as it was."""
        before = self.store.get(self.kind, key) if _active() is not None else None
        try:
            self.store.put(self.kind, key, self._to_record(item))
        except StoreFailed:
            self._restore(key, self.store.get(self.kind, key))
            raise
        self.items[key] = item
        on_undo(lambda: self._undo(key, before))

    def drop(self, key: str) -> None:
        before = self.store.get(self.kind, key) if _active() is not None else None
        self.store.delete(self.kind, key)
        self.items.pop(key, None)
        if before is not None:
            on_undo(lambda: self._undo(key, before))

    def _restore(self, key: str, record: Record | None) -> None:
        """Memory as ``record`` says, changing back an existing object rather than
        replacing it: others may hold it (a view being served, a live endpoint's entry)."""
        if record is None:
            self.items.pop(key, None)
            return
        fresh = read_record(self.kind, record, self._from_record)
        current = self.items.get(key)
        if isinstance(current, dict) and isinstance(fresh, dict):
            current.clear()
            current.update(fresh)
        elif current is not None and type(current) is type(fresh) and hasattr(fresh, "__dict__"):
            vars(current).update(vars(fresh))
        else:
            self.items[key] = fresh

    def _undo(self, key: str, before: Record | None) -> None:
        """Back to ``before`` in memory, then in the store, into the room it had (so on a
        full disk this usually holds; if not, only the file keeps the newer record)."""
        self._restore(key, before)
        try:
            if before is None:
                self.store.delete(self.kind, key)
            else:
                self.store.put(self.kind, key, before)
        except StoreFailed:
            pass

    def get(self, key: str) -> T | None:
        return self.items.get(key)

    def need(self, key: str, what: str) -> T:
        """The record, or ``NotFound`` naming it as ``what`` ("pod", ...)."""
        found = self.items.get(key)
        if found is None:
            raise NotFound(f"{what} {key!r} not found")
        return found

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def __iter__(self) -> Iterator[T]:
        return iter(list(self.items.values()))


R = TypeVar("R")


class Served(Generic[R]):
    """An area whose records ``/v2``'s generic routes serve, naming its row as ``ROW``
    (docs/architecture.md#adding-a-management-resource)."""

    ROW: Rest[Any]
    book: Book[Any]

    def listed(self) -> Iterable[R]:
        return list(self.book)

    def get(self, record_id: str, /) -> R:
        return cast(R, self.book.need(record_id, self.ROW.what))

    def create(self, body: dict[str, Any], /) -> R:
        raise NotImplementedError  # each area's own, as its update is

    def update(self, record_id: str, body: dict[str, Any], /) -> R:
        raise NotImplementedError

    def changeable(self, record_id: str, /) -> object:
        """404 (or 403, 409) before an update's body is read."""
        return self.get(record_id)

    def delete(self, record_id: str, /) -> None:
        self.get(record_id)
        self.book.drop(record_id)

    def served(self, record: R, /) -> dict[str, Any]:
        return cast(dict[str, Any], record)
