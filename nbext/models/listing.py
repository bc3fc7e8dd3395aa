"""How a listing shows records: its columns, their dtypes and order.

Plain data, so a management resource's row (``v2.resources.RESOURCES``) can say how
``%runpod <resource>`` lists it beside its path and model; the notebook turns a list of
records into a DataFrame by it (``nbext/notebook/display/frames.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["string", "category", "datetime", "int", "float", "bool", "object"]
Getter = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    """One column: its name, where its value comes from, and its dtype.

    ``source`` is a key of the record (a flattened one, ``"workers.min"``, or dots
    reaching into a mapping: ``"price.secure"``), a function of the record, or None for
    ``name`` itself.
    ``categories`` fixes a categorical's categories and their order (states in
    lifecycle order, so ``value_counts`` and plots read naturally).
    """

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
    """The columns of one listing kind, in display order.

    ``extra`` decides what happens to record fields no column names: ``"keep"`` appends
    them (sorted, named in Python style) after the spec's columns, so a field the
    service adds later is still visible; ``"drop"`` leaves them out. ``sort`` orders
    the rows: (column, ascending).
    """

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
