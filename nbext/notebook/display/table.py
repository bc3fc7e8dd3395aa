"""A listing as a cell shows it: one mark for every missing value, times to the second (the
reading copy of the stored DataFrame: docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING, Any

from nbext import media
from nbext.client import usd_text

from .text import MISSING, compact_json

if TYPE_CHECKING:
    import pandas as pd

CSS_CLASS = "nbext-listing"
NO_WRAP = f"<style>table.{CSS_CLASS} td, table.{CSS_CLASS} th {{ white-space: nowrap; }}</style>"
"""JupyterLab lets table cells wrap at any space or hyphen, which cuts job ids and times
in two; a listing's rows stay one line each (a wide one scrolls sideways instead)."""
NOT_MATH = ("tex2jax_ignore", "mathjax_ignore")
"""MathJax 2's and 3's classes for "leave this alone": JupyterLab would typeset "$5 and
$6" in a cell as math (an HTML entity for ``$`` would not help)."""
MONEY = frozenset(
    {"cost_usd", "cost", "total_amount", "secure_usd_hr", "community_usd_hr", "serverless_usd_hr"}
)
"""The listings' columns of dollars, shown as money (``$0.00000153``, not ``1.5e-06``)."""
CELL_CHARS = 60
"""How much of a nested value (a job's output, a list of ports) one cell shows."""


def is_missing(value: Any) -> bool:
    """Missing in any of pandas' spellings (a list or a dict is a value, never missing)."""
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def cell_text(value: Any) -> str:
    if is_missing(value):
        return MISSING
    if isinstance(value, dict | list | tuple | str) and media.find(value):
        value = media.preview(value)  # each blob as its tag: <PNG 512×512, 340 KB>
    if isinstance(value, dict | list | tuple):
        return compact_json(value, CELL_CHARS)
    return str(value)


def _media_cells(frame: pd.DataFrame) -> dict[tuple[int, int], media.MediaList]:
    """The pictures of each cell that holds some, by (row, column) position."""
    found: dict[tuple[int, int], media.MediaList] = {}
    for col, (_, series) in enumerate(frame.items()):
        if series.dtype != object:
            continue
        for row, value in enumerate(series):
            if isinstance(value, dict | list | tuple | str):
                # a URL stays the link it is: only pictures sent in the output are drawn
                pictures = [m for m in media.find(value).images if m.data is not None]
                if pictures:
                    found[row, col] = media.MediaList(pictures)
    return found


def time_format(series: pd.Series) -> str:
    """Seconds, or just the date when every time is a midnight (daily billing buckets)."""
    times = series.dropna()
    if len(times) and (times == times.dt.normalize()).all():
        return "%Y-%m-%d"
    return "%Y-%m-%d %H:%M:%S"


class Table:
    """A DataFrame for reading in a cell (HTML and text/plain), not for computing."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def _view(self) -> pd.DataFrame:
        """Every column as the text its cells show (floats keep pandas' aligned decimals;
        ``na_rep`` never reaches ``<NA>`` in nullable dtypes, so cells are written here)."""
        import pandas as pd

        columns: dict[str, Any] = {}
        for name, series in self.frame.items():
            label = str(name)
            if isinstance(series.dtype, pd.DatetimeTZDtype):
                label = f"{name} ({series.dt.tz})"
                pattern = time_format(series)
                columns[label] = [MISSING if is_missing(v) else v.strftime(pattern) for v in series]
            elif name in MONEY:
                columns[label] = [MISSING if is_missing(v) else usd_text(v) for v in series]
            elif series.dtype == "float64":
                columns[label] = series  # NaN is marked by na_rep
            else:
                columns[label] = [cell_text(v) for v in series]
        return pd.DataFrame(columns, index=self.frame.index)

    def _repr_html_(self) -> str:
        view = self._view()
        cells = _media_cells(self.frame)
        # pandas escapes every cell: a media cell goes in as a marker, swapped afterwards
        # for its thumbnails and its text (escaped here), on one line as every cell.
        marks: dict[str, str] = {}
        for (row, col), items in cells.items():
            mark = f"nbext-media-cell-{row}-{col}"
            text = escape(str(view.iat[row, col]))
            marks[mark] = f"{media.inline_html(items)} {text}"
            view.iat[row, col] = mark
        html: str = view.to_html(
            na_rep=MISSING, notebook=True, border=0, classes=[CSS_CLASS, *NOT_MATH]
        )
        for mark, cell in marks.items():
            html = html.replace(f">{mark}<", f">{cell}<", 1)
        return NO_WRAP + html

    def __repr__(self) -> str:
        text: str = self._view().to_string(na_rep=MISSING)
        return text
