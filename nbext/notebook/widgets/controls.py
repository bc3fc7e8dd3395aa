"""A live panel's controls: its buttons, in an output of their own under its content, with a
``text/plain`` that says how to stop where no widget manager draws them
(docs/architecture.md#notebook-modules).
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
