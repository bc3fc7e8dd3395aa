"""Records to DataFrames with real dtypes, driven by a column spec per listing kind
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel

from nbext.models.listing import Column, Kind, ListingSpec

if TYPE_CHECKING:
    import pandas as pd


def as_mapping(record: Any) -> Mapping[str, Any]:
    """A record as a mapping: a pydantic model flattened (``flat``)."""
    if isinstance(record, BaseModel):
        return flat(record)
    if isinstance(record, Mapping):
        return record
    if hasattr(record, "as_row"):
        row: Mapping[str, Any] = record.as_row()
        return row
    raise TypeError(f"cannot list a {type(record).__name__}; expected a mapping or a model")


def flat(model: BaseModel, prefix: str = "") -> dict[str, Any]:
    """A model's fields by their Python names, nested models' as ``outer.inner``; fields
    it does not know (the service's newer ones, in its camelCase) in snake case. A nested
    model left out (a CPU pod's ``gpu``) gives no column of its own: its fields' columns
    are missing in that row."""
    out: dict[str, Any] = {}
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out.update(flat(value, f"{prefix}{name}."))
        elif value is None and _nests(info.annotation):
            continue
        elif isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
            out[prefix + name] = [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
        else:
            out[prefix + name] = value
    for key, value in (model.model_extra or {}).items():
        out[prefix + snake_case(key)] = value
    return out


def _nests(annotation: Any) -> bool:
    """Whether a field's type is a model (or a model or None)."""
    types = get_args(annotation) or (annotation,)
    return any(isinstance(t, type) and issubclass(t, BaseModel) for t in types)


def to_frame(records: Iterable[Any], spec: ListingSpec) -> pd.DataFrame:
    """The records as a DataFrame with the spec's columns, dtypes and order."""
    import pandas as pd  # on first use: a kernel that never makes a frame never pays for it

    records = list(records)
    rows = [as_mapping(r) for r in records]
    data: dict[str, list[Any]] = {c.name: [c.value(row) for row in rows] for c in spec.columns}
    if spec.extra == "keep":
        used = _sources(spec)
        extras = sorted({k for row in rows for k in row if k not in used and not _hidden(spec, k)})
        for key in extras:
            data.setdefault(snake_case(key), [row.get(key) for row in rows])
    # objects first: pandas would turn [5, None] into floats before any spec is applied
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(rows)), dtype=object)
    for column in spec.columns:
        frame[column.name] = convert(frame[column.name], column)
    declared = _declared_kinds(records)
    for key in frame.columns[len(spec.columns) :]:
        frame[key] = _infer(frame[key], declared.get(key))
    if spec.sort is not None and len(frame):
        by, ascending = spec.sort
        frame = frame.sort_values(by, ascending=ascending, kind="stable").reset_index(drop=True)
    return frame


def snake_case(name: str) -> str:
    """``imageName`` -> ``image_name``: extra columns named like the spec's."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _sources(spec: ListingSpec) -> set[str]:
    used = set(spec.names)
    for column in spec.columns:
        if isinstance(column.source, str):
            used.add(column.source)
            used.add(column.source.split(".")[0])
    return used


def _hidden(spec: ListingSpec, key: str) -> bool:
    return any(key == h or key.startswith(f"{h}.") for h in spec.hidden)


def convert(series: pd.Series, column: Column) -> pd.Series:
    """One column to its dtype; values that do not fit become missing, never errors."""
    import pandas as pd

    kind = column.kind
    if kind == "string":
        return series.map(_text, na_action="ignore").astype("string")
    if kind == "category":
        values = series.map(_text, na_action="ignore")
        if column.categories is not None:
            extra = [v for v in pd.unique(values.dropna()) if v not in column.categories]
            return pd.Categorical(values, categories=[*column.categories, *extra])  # type: ignore[return-value]
        return values.astype("category")
    if kind == "datetime":
        instants = series.map(_instant, na_action="ignore")
        stamps = pd.to_datetime(instants, utc=True, errors="coerce", format="ISO8601")
        return stamps.dt.as_unit("us")  # one unit, however many values are missing
    if kind == "int":
        return pd.to_numeric(series, errors="coerce").astype("Int64")
    if kind == "float":
        return pd.to_numeric(series, errors="coerce").astype("float64")
    if kind == "bool":
        return series.astype("boolean")
    return plain_values(series)


def plain_values(series: pd.Series) -> pd.Series:
    """The values made plain, as objects (``map`` would turn ``[5, None]`` into floats)."""
    import pandas as pd

    return pd.Series([plain_value(v) for v in series], index=series.index, dtype=object)


def plain_value(value: Any) -> Any:
    """Enums (also inside lists and dicts) as their values: ``'NVIDIA A40'``, not
    ``<GpuTypeId.A40: 'NVIDIA A40'>``, in a cell and in the data."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return str(value.value)
    return str(value)


def _instant(value: Any) -> Any:
    import pandas as pd

    if isinstance(value, int | float) and not isinstance(value, bool):
        # epoch seconds, or milliseconds for values past year 2286 in seconds
        return pd.Timestamp(value, unit="ms" if value > 1e10 else "s", tz="UTC")
    if isinstance(value, datetime | date | str):
        return value
    return None


DECLARED: tuple[tuple[type, Kind], ...] = (
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (datetime, "datetime"),
    (str, "string"),
)
"""A model field's type -> the dtype of its column (bool before int: a bool is an int)."""


def _declared_kinds(records: list[Any]) -> dict[str, Kind]:
    """Each plainly typed field's declared kind, by column name: a field the service leaves
    empty in every record still gets its dtype, so dtypes do not depend on which management
    interface answered."""
    model = type(records[0]) if records and isinstance(records[0], BaseModel) else None
    if model is None:
        return {}
    kinds: dict[str, Kind] = {}
    for name, info in model.model_fields.items():
        types = [t for t in get_args(info.annotation) or (info.annotation,) if t is not type(None)]
        if len(types) != 1 or not isinstance(types[0], type):
            continue
        kind = next((k for base, k in DECLARED if issubclass(types[0], base)), None)
        if kind is not None:
            kinds[name] = kind
    return kinds


def _infer(series: pd.Series, declared: Kind | None = None) -> pd.Series:
    """Extra fields: numbers and booleans keep their type, nested values stay objects;
    a field with no value at all takes the type its model declares."""
    series = plain_values(series)
    values = series.dropna()
    if values.empty:
        if declared is not None:
            return convert(series, Column(str(series.name), declared))
        return series.astype("object")
    if all(isinstance(v, bool) for v in values):
        return series.astype("boolean")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return series.astype("Int64")
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return series.astype("float64")
    if all(isinstance(v, str) for v in values):
        return series.astype("string")
    return series.astype("object")
