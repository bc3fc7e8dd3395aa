"""The ``text/plain`` form every panel carries next to its widget view.

A notebook saved without widget state, run headless (nbclient, nbval) or shown in a
terminal has no widget to render; it shows ``text/plain``. Each panel writes its own
summary there, and the cell's display is updated when the job ends, so the saved
output says how things ended, not how they began.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class PlainTextForm:
    """Mixin for a widget: ``_repr_mimebundle_`` with ``plain_text()`` as ``text/plain``."""

    def plain_text(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        """Close the widget; its ``text/plain`` form stays (ipywidgets blanks the repr)."""
        closer = getattr(super(), "close", None)
        if closer is not None:
            closer()
        vars(self).pop("_repr_mimebundle_", None)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        widget_repr = getattr(super(), "_repr_mimebundle_", None)
        data: Mapping[str, Any] = {}
        if widget_repr is not None:
            try:
                data = widget_repr(**kwargs) or {}
            except Exception:  # a closed widget has no view left; its text still stands
                data = {}
        return {**data, "text/plain": self.plain_text()}
