"""What every live panel shares: its state drawn as plain output, at a bounded rate and only
when it changed (docs/behaviour.md#live-panels).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..outputs import LiveOutput
from ..rendering import Rendering
from .controls import Controls
from .throttle import Throttle

INTERRUPT_HINT = "interrupt the kernel (■) to cancel"
"""How to stop a cell that waits, in every front end: the kernel's interrupt (Ctrl-C)."""


class LivePanel:
    """The machinery of a panel; subclasses give ``final``, ``rendering`` and controls."""

    def __init__(
        self, *, throttle: Throttle | None = None, controls: Controls | None = None
    ) -> None:
        self._throttle = throttle or Throttle()
        self.controls = controls
        self.renders = 0
        """How many drawings changed the output (what the throttle bounds)."""
        self.cell_output: LiveOutput | None = None
        self._drawn: tuple[Rendering, bool] | None = None
        self.provenance: Callable[[], dict[str, Any]] | None = None
        """Where the panel's content came from, put in its output's metadata."""

    @property
    def hint(self) -> str:
        """How to stop what the panel follows, said while it is live: in the panel, and
        in place of its controls where they cannot be drawn."""
        return self.controls.hint if self.controls is not None else ""

    @hint.setter
    def hint(self, hint: str) -> None:
        if self.controls is not None:
            self.controls.hint = hint

    @property
    def final(self) -> bool:
        raise NotImplementedError

    def rendering(self) -> Rendering:
        """The panel as HTML and text: live while it runs, the static output once final."""
        raise NotImplementedError

    @property
    def drawn(self) -> Rendering | None:
        """What the panel's output shows now: its last drawing (None before any)."""
        return self._drawn[0] if self._drawn is not None else None

    def controls_shown(self) -> bool:
        """Whether the controls can act now (else their output is empty)."""
        return False

    def show(self) -> LivePanel:
        """Display the panel in the cell running now; it then updates that output."""
        rendering, shown = self._drawn = self._state()
        if self.final:  # nothing live to control: no output for controls at all
            self.cell_output = LiveOutput(rendering, None, shown=False)
            self.cell_output.ended = True
            self.close()
        else:
            self.cell_output = LiveOutput(rendering, self.controls, shown)
        return self

    def _state(self) -> tuple[Rendering, bool]:
        shown = self.controls is not None and not self.final and self.controls_shown()
        rendering = self.rendering()
        if self.provenance is not None:
            rendering = dataclasses.replace(rendering, provenance=self.provenance())
        return rendering, shown

    def throttle_wait(self) -> float:
        """Seconds until the throttle lets the next refresh through."""
        return self._throttle.wait_left()

    def refresh(self, force: bool = False) -> bool:
        """Draw, at most once per throttle interval (``force``: now); whether it drew."""
        if force:
            self._throttle.mark()
        elif not self._throttle.ready():
            return False
        self.draw()
        return True

    def draw(self) -> None:
        """Send the panel's state to its output now, if it changed."""
        state = self._state()
        if state == self._drawn:
            return
        self._drawn = state
        self.renders += 1
        output = self.cell_output
        if output is None:
            return
        if self.final and not output.ended:
            output.end(state[0])
        else:
            output.update(*state)

    def close(self) -> None:
        """Close the panel's widgets (its controls); its output keeps its last state."""
        if self.controls is not None:
            self.controls.close()

    def _repr_mimebundle_(self, **_: Any) -> Any:
        """A panel stored with ``-o NAME`` and shown again reads as its rendering."""
        return self.rendering()._repr_mimebundle_()


class StoppablePanel(LivePanel):
    """A panel fed by a task between cells until the user stops it (Stop, the ``--stop``
    that ``hint`` names, or closing it): ``stopped`` is set, and the task ends."""

    def __init__(
        self, *, running: bool, button: str, css: str, hint: str, throttle: Throttle | None = None
    ) -> None:
        self.running = running
        self.task: asyncio.Task[Any] | None = None
        self.stopped = asyncio.Event()
        self.stop_button = widgets.Button(description=button, icon="stop")
        self.stop_button.on_click(lambda _b: self.stop())
        self.stop_button.add_class(css)
        super().__init__(throttle=throttle, controls=Controls(self.stop_button, hint=hint))

    def stop(self) -> None:
        """Stop: the task ends and the panel keeps what it shows."""
        if not self.running:
            return
        self.running = False
        self.stopped.set()
        self.draw()

    def close(self) -> None:
        """Closing the panel stops its task too (no one is left to show to)."""
        self.stop()
        super().close()

    @property
    def final(self) -> bool:
        return not self.running

    def controls_shown(self) -> bool:
        return self.running
