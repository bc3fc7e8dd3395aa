"""The ``text/plain`` form every panel carries next to its widget view, and closing.

A notebook run headless (nbclient, nbval) or shown in a terminal has no widget to
render; it shows ``text/plain``. Each panel writes its own summary there. (A saved
notebook keeps more: when a panel ends, its cell shows the panel's static rendering,
``nbext.notebook.static``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ipywidgets import Widget

from ..widget_view import WidgetView


def close_parts(widget: Any) -> None:
    """Close ``widget``'s children (and theirs), its layout and its style: each one is a
    comm the kernel and the page keep alive until closed."""
    for child in getattr(widget, "children", ()):
        close_parts(child)
        child.close()
    for name in ("layout", "style"):
        part = getattr(widget, name, None)
        if isinstance(part, Widget):
            part.close()


class PlainTextForm(WidgetView):
    """Mixin for a widget: ``_repr_mimebundle_`` with ``plain_text()`` as ``text/plain``
    (its view through ``WidgetView``, under ipywidgets 7 and 8)."""

    def plain_text(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        """Close the widget and all its parts; its ``text/plain`` form stays (ipywidgets
        blanks the repr of a closed widget)."""
        close_parts(self)
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
