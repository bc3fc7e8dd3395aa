"""A live panel's controls: its buttons, in an output of their own under its content.

The panel's content is plain HTML (``nbext.notebook.outputs``), which every front end
draws. Buttons need the widget manager, which VS Code (ipywidgets 8.1.9), Colab (8.x
without its custom manager) or a JupyterLab with the manager disabled lack; there the
output shows its ``text/plain`` fallback instead, which says how to stop without them.
So the buttons live in a separate small output: where they cannot be drawn, only they
are missing, and the text in their place tells what to do.

The bundle is written by hand (the widget protocol's view MIME type and the model id)
rather than through ``Widget._repr_mimebundle_``, which ipywidgets 7 lacks and whose
``text/plain`` is a repr like ``HBox(children=...)``.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""The MIME type a front end with the widget manager draws as a widget."""


class Controls:
    """Buttons shown under a live panel; ``hint`` is what shows where they cannot be."""

    def __init__(self, *buttons: widgets.Button, hint: str = "") -> None:
        self.buttons = buttons
        self.hint = hint
        self.box = widgets.HBox(list(buttons))
        self.box.add_class("nbext-controls")

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        view = {"version_major": 2, "version_minor": 0, "model_id": self.box.model_id}
        return {WIDGET_VIEW: view, "text/plain": self.hint}

    def close(self) -> None:
        """Close the buttons, their layouts and styles, and the box: each is a comm the
        kernel and the page keep alive until closed."""
        for button in self.buttons:
            button.layout.close()
            button.style.close()
            button.close()
        self.box.layout.close()
        self.box.close()

    def __repr__(self) -> str:
        return self.hint
