"""A live panel's controls: its buttons, in an output of their own under its content.

Buttons need the widget manager, which VS Code, Colab or a JupyterLab with it disabled
may lack; there an output shows its ``text/plain`` instead. So the buttons live in a
small output of their own, whose text says how to stop without them. The bundle is
written by hand: ipywidgets 7 has no ``Widget._repr_mimebundle_``, and its text is a repr.
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
        """Close the buttons, their layouts and styles, and the box (each is a comm)."""
        for button in self.buttons:
            button.layout.close()
            button.style.close()
            button.close()
        self.box.layout.close()
        self.box.close()

    def __repr__(self) -> str:
        return self.hint
