"""Showing a DataFrame in a cell: at most ``display_limit`` rows, and say what was cut."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ipython import show
from .table import Table

if TYPE_CHECKING:
    import pandas as pd


def show_frame(
    frame: pd.DataFrame,
    limit: int,
    *,
    what: str,
    stored_as: str | None,
    columns: list[str] | None = None,
) -> None:
    """Display the first ``limit`` rows of ``frame`` (0: all; its ``columns``, None: all)
    and one line on the rest; ``-o NAME`` stores all of it."""
    shown = frame if columns is None else frame[[c for c in columns if c in frame]]
    if limit > 0:
        shown = shown.head(limit)
    show(Table(shown))
    cut: list[str] = []
    hints: list[str] = []
    if len(shown) < len(frame):
        cut.append(f"{len(shown)} of {len(frame)} rows")
        hints.append("%config RunpodMagics.display_limit = N shows more")
    if len(shown.columns) < len(frame.columns):
        cut.append(f"{len(shown.columns)} of {len(frame.columns)} columns")
        hints.append("--all shows every column")
    if not cut:
        return
    keep = f"all of them are in `{stored_as}`" if stored_as else "-o NAME keeps all of them"
    print(f"{what}: showing {' and '.join(cut)} ({keep}; {'; '.join(hints)})")
