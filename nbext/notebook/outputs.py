"""A panel's place in its cell: the live widget while there is something live, then its
static rendering.

``PanelOutput`` displays a panel with a display id and replaces that output later. While
the panel is live, an update re-sends the widget (its ``text/plain`` twin follows the
state, for headless runs). Once the panel is final, the output becomes the panel's
``rendering()`` (HTML and text, no widget), and the panel's widgets are closed: a saved
notebook then shows the final state with no kernel and no widget state, in JupyterLab,
nbconvert's HTML, GitHub or VS Code. Later changes (a job retried from another cell)
keep updating that static output, so every output of a job follows it.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

from .ipython import Handle, show_updatable
from .static import Rendering


class Panel(Protocol):
    """What a panel offers its output: whether it is done, and how it looks then."""

    @property
    def final(self) -> bool: ...

    def rendering(self) -> Rendering: ...

    def close(self) -> None: ...


class PanelOutput:
    """The output of one panel in a cell (``show`` it once, ``update`` it on changes)."""

    def __init__(self, panel: Panel) -> None:
        self.panel = panel
        self.frozen = False
        """The widget was replaced by the static rendering (and closed)."""
        self._handle: Handle | None = None

    def show(self) -> PanelOutput:
        self._handle = show_updatable(self.panel)
        return self

    def update(self) -> None:
        """Re-send the output: the live widget, or (final) its static rendering.

        Sent from an empty context: a background task inherits the context of the cell
        that started it, and ipykernel would address the update to that finished cell,
        which headless runners (nbclient, nbval) no longer listen to; without the
        inherited context it goes out under the cell running now, and the display id
        routes it home.
        """
        contextvars.Context().run(self._update)

    def _update(self) -> None:
        if self._handle is None:
            return
        if self.frozen or self.panel.final:
            self._handle.update(self.panel.rendering())
            if not self.frozen:
                self.frozen = True
                self.panel.close()
        else:
            self._handle.update(self.panel)


def show_panel(panel: Any) -> PanelOutput:
    """Display ``panel`` live; the returned output turns static when the panel ends."""
    return PanelOutput(panel).show()
