"""A live output's place in its cell: content updated in place, and its controls below in an
output of their own (docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

from .ipython import Handle, show_updatable, updates_in_place

if TYPE_CHECKING:
    from .rendering import Rendering
    from .widgets.controls import Controls


class RemovedOutput:
    """What replaces controls that are gone: an empty line of text, no widget."""

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": ""}


class LiveOutput:
    """One panel's outputs in a cell: its content and, when it has any, its controls.

    Updates are sent from an empty context: a background task's inherited context would
    address them to its finished cell, which headless runners no longer listen to; the
    display id routes them home.
    """

    def __init__(self, content: Rendering, controls: Controls | None, shown: bool) -> None:
        self.in_place = updates_in_place()
        """Updates replace the output. Else (a terminal) only the end is shown again, and
        no controls: a terminal draws no widget, and the content says how to stop."""
        self.ended = False
        """The panel reached its end once (its controls are gone for good)."""
        self.controls = controls
        self._content: Handle = show_updatable(content)
        self._controls: Handle | None = None
        self._sent: str | None = None
        """The text in place of the controls on show (None: they are hidden)."""
        if controls is not None and self.in_place:
            self._sent = controls.hint if shown else None
            self._controls = show_updatable(controls if shown else RemovedOutput())

    def update(self, content: Rendering, controls_shown: bool) -> None:
        """Show ``content``; show or hide the controls (when that changed)."""
        if self.in_place:
            contextvars.Context().run(self._update, content, controls_shown)

    def _update(self, content: Rendering, controls_shown: bool) -> None:
        controls = self.controls if controls_shown else None
        wanted = controls.hint if controls is not None else None
        if self._controls is not None and wanted != self._sent:
            self._sent = wanted
            self._controls.update(controls if controls is not None else RemovedOutput())
        self._content.update(content)

    def end(self, content: Rendering) -> None:
        """The panel ended: its final content (in a terminal too); its controls closed."""
        self.ended = True
        contextvars.Context().run(self._update, content, False)
        if self.controls is not None:
            self.controls.close()
            self.controls = None
