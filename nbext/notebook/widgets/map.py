"""The map panel: one line while many jobs run, as a progress bar reads
(``endpoint [bar] 7/10 · COMPLETED 6 · FAILED 1 · 3.2 jobs/s · 0:02 < 0:01``), drawn by
``rendering.render_map`` live and once ended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import ipywidgets as widgets

from nbext.client import JobCost
from nbext.models import JobStatus

from ..cost import total_text
from ..rendering import MapView, Rendering, render_map
from .controls import Controls
from .live import LivePanel
from .throttle import Throttle

STATE_ORDER = [s.value for s in JobStatus]
STOP_HINT = "interrupt the kernel (■) to stop the map and cancel its jobs in flight"
"""How to stop a map, in every front end: its cell waits, so the interrupt reaches it."""


class MapPanel(LivePanel):
    """``done`` of ``total`` jobs, counts by final state, rate and ETA; then a note."""

    def __init__(
        self,
        endpoint_id: str,
        total: int,
        *,
        throttle: Throttle | None = None,
        started_ago: float = 0.0,
    ) -> None:
        self.endpoint_id = endpoint_id
        self.total = total
        self.counts: Counter[str] = Counter()
        self.costs: list[JobCost | None] = []
        """Each finished job's cost (None: unknown), for the running total."""
        self.note = ""
        self.finished = False
        self.cancel_available = False
        """Whether Cancel can act (an awaiting cell, whose kernel hears the click)."""
        self.on_cancel: Callable[[], None] | None = None
        self.cancel_button = widgets.Button(description="Cancel", icon="stop")
        self.cancel_button.on_click(lambda _button: self.cancel())
        self.cancel_button.add_class("nbext-map-cancel")
        super().__init__(throttle=throttle, controls=Controls(self.cancel_button, hint=STOP_HINT))
        self._started = self._throttle.now() - started_ago
        self._elapsed: float | None = None

    @property
    def final(self) -> bool:
        return self.finished

    def add(self, state: str) -> None:
        """One more input finished in ``state``."""
        self.counts[state] += 1
        self.refresh()

    def add_cost(self, cost: JobCost | None) -> None:
        """What one more finished job cost (None: not known), for the running total."""
        self.costs.append(cost)
        self.refresh()

    def cancel(self) -> None:
        """The Cancel button: the map's runner stops submitting and ends the cell."""
        if self.on_cancel is not None and not self.finished:
            self.cancel_button.disabled = True
            self.on_cancel()

    def finish(self, note: str = "") -> None:
        self.finished = True
        self._elapsed = self._throttle.now() - self._started
        self.note = note
        self.refresh(force=True)

    def view(self) -> MapView:
        now = self._throttle.now()
        elapsed = now - self._started if self._elapsed is None else self._elapsed
        ordered = sorted(
            self.counts, key=lambda s: STATE_ORDER.index(s) if s in STATE_ORDER else 99
        )
        return MapView(
            endpoint_id=self.endpoint_id,
            total=self.total,
            counts={state: self.counts[state] for state in ordered},
            elapsed=elapsed,
            finished=self.finished,
            note=self.note,
            hint="" if self.finished else self.hint,
            spent=total_text(self.costs),
        )

    def rendering(self) -> Rendering:
        return render_map(self.view())

    def controls_shown(self) -> bool:
        return self.cancel_available

    def __repr__(self) -> str:
        return f"MapPanel({self.endpoint_id!r}, {self.counts.total()}/{self.total})"
