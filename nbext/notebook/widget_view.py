"""A widget's view as display data, the same under ipywidgets 7 and 8.

nbext displays its widgets through IPython's formatters, with a display id, so an
output can be replaced later (a panel by its static HTML, a button by nothing) and
carries a ``text/plain`` twin. ipywidgets 8 draws a widget with ``_repr_mimebundle_``,
which takes part in that. ipywidgets 7 (Colab ships 7.7.1) has ``_ipython_display_``
instead: IPython calls it before any formatter and without the display id, so the output
could never be replaced and a saved notebook would keep a dead widget view. This module
is the one shim: ``view_bundle`` gives the data ipywidgets 8 would, under either version,
and ``WidgetView`` makes a widget class display through it.
"""

from __future__ import annotations

from typing import Any

from ipywidgets import Widget

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def view_bundle(widget: Any, **kwargs: Any) -> dict[str, Any]:
    """The display data of ``widget``'s view: its text, and the view unless it has none."""
    drawn = getattr(Widget, "_repr_mimebundle_", None)  # ipywidgets 8
    if drawn is not None:
        return dict(drawn(widget, **kwargs) or {})
    # ipywidgets 7: what its _ipython_display_ publishes, then what it tells on_displayed
    # callbacks (nothing of IPython's include/exclude, which Box's callback refuses)
    data: dict[str, Any] = {"text/plain": repr(widget)}
    if widget._view_name is not None:
        data[WIDGET_VIEW] = {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}
        widget._handle_displayed()
    return data


class WidgetView:
    """Mixin, before the ipywidgets class: displayed through ``view_bundle``, so with the
    display id under ipywidgets 7 too."""

    _ipython_display_ = None
    """Hides ipywidgets 7's, which IPython would call first, without the display id."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self, **kwargs)
