"""A listing as a cell shows it: one mark for every missing value, times to the second.

The DataFrame itself (what ``-o NAME`` stores) is data: pandas' own missing values per
dtype (``NaN``, ``<NA>``, ``NaT``, ``None``) and times to the microsecond, so it sorts,
filters and resamples as pandas users expect. Shown as pandas shows it, though, one
table mixes four spellings of "nothing here" and times no one reads to the microsecond.
``Table`` is the reading copy: every missing value is ``–`` (as in the panels), times are
to the second (or the day, when every one is at midnight) with the zone in the header,
and nested values are compact JSON, in HTML and in its ``text/plain`` twin alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from .text import compact_json

MISSING = "–"
"""What a cell shows where there is no value, whatever the column's dtype."""
CELL_CHARS = 60
"""How much of a nested value (a job's output, a list of ports) one cell shows."""


def is_missing(value: Any) -> bool:
    """Missing in any of pandas' spellings (a list or a dict is a value, never missing)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def cell_text(value: Any) -> str:
    if is_missing(value):
        return MISSING
    if isinstance(value, dict | list | tuple):
        return compact_json(value, CELL_CHARS)
    return str(value)


def time_format(series: pd.Series) -> str:
    """Seconds, or just the date when every time is a midnight (daily billing buckets)."""
    times = series.dropna()
    if len(times) and (times == times.dt.normalize()).all():
        return "%Y-%m-%d"
    return "%Y-%m-%d %H:%M:%S"


def time_text(pattern: str) -> Callable[[Any], str]:
    def text(value: Any) -> str:
        return MISSING if is_missing(value) else str(value.strftime(pattern))

    return text


class Table:
    """A DataFrame for reading in a cell (HTML and text/plain), not for computing."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def _view(self) -> tuple[pd.DataFrame, dict[str, Callable[[Any], str]]]:
        """The frame with zone-labelled time headers, and one formatter per column."""
        renamed: dict[str, str] = {}
        formatters: dict[str, Callable[[Any], str]] = {}
        for name, series in self.frame.items():
            label = str(name)
            if isinstance(series.dtype, pd.DatetimeTZDtype):
                label = f"{name} ({series.dt.tz})"
                renamed[str(name)] = label
                formatters[label] = time_text(time_format(series))
            elif series.dtype == "float64":
                continue  # pandas' float formatting (aligned decimals); na_rep marks NaN
            else:
                formatters[label] = cell_text
        return self.frame.rename(columns=renamed), formatters

    def _repr_html_(self) -> str:
        view, formatters = self._view()
        html: str = view.to_html(
            na_rep=MISSING,
            formatters=formatters,
            notebook=True,
            border=0,
        )
        return html

    def __repr__(self) -> str:
        view, formatters = self._view()
        text: str = view.to_string(na_rep=MISSING, formatters=formatters)
        return text
