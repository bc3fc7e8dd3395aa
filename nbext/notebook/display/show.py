"""Showing a DataFrame in a cell: at most ``display_limit`` rows, and say what was cut."""

from __future__ import annotations

import pandas as pd

from ..ipython import show


def show_frame(frame: pd.DataFrame, limit: int, *, what: str, stored_as: str | None) -> None:
    """Display the first ``limit`` rows of ``frame`` and one line on the rest.

    The whole frame is never cut: ``-o NAME`` stores all of it; only the display is.
    ``limit`` 0 shows every row.
    """
    if limit <= 0 or len(frame) <= limit:
        show(frame)
        return
    show(frame.head(limit))
    keep = f"all of them are in `{stored_as}`" if stored_as else "-o NAME keeps all of them"
    print(
        f"{what}: showing {limit} of {len(frame)} rows ({keep}; "
        "%config RunpodMagics.display_limit = N shows more)"
    )
