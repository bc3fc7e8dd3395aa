"""How a listing shows records: its columns, their dtypes and order.

Plain data, so a management resource's row (``v2.resources.RESOURCES``) can say how
``%runpod <resource>`` lists it; the notebook makes a DataFrame by it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["string", "category", "datetime", "int", "float", "bool", "object"]
Getter = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    """One column. ``source`` is a key of the record (flattened, ``"workers.min"``, or
    dotted into a mapping, ``"price.secure"``), a function of the record, or None for
    ``name``; ``categories`` orders a categorical's (states in lifecycle order)."""

    name: str
    kind: Kind = "string"
    source: str | Getter | None = None
    categories: tuple[str, ...] | None = None

    def value(self, record: Mapping[str, Any]) -> Any:
        source = self.source if self.source is not None else self.name
        if callable(source):
            return source(record)
        if source in record:
            return record[source]
        value: Any = record
        for part in source.split("."):
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value


@dataclass(frozen=True)
class ListingSpec:
    """The columns of one listing kind, in display order. ``extra="keep"`` appends the
    fields no column names (sorted), so one the service adds later is still visible;
    ``sort`` is (column, ascending)."""

    kind: str
    columns: tuple[Column, ...]
    extra: Literal["keep", "drop"] = "keep"
    sort: tuple[str, bool] | None = None
    hidden: frozenset[str] = field(default_factory=frozenset)
    """Record fields never shown, even with ``extra="keep"`` (secrets such as ``env``,
    nested blobs); a hidden name hides the fields flattened under it too."""
    shown: tuple[str, ...] | None = None
    """The columns a cell shows by default (``--all``: every one; the frame has every one).
    None: the spec's own columns, without the extra fields."""
    summary: str = ""
    """What it lists, as help says it (a management resource's ``%runpod`` subcommand)."""

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def default_columns(self) -> list[str]:
        return list(self.shown) if self.shown is not None else self.names
