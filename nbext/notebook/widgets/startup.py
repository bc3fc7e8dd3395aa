"""The deploy panel: a worker script's first worker awaited, the wait counted live
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import html

from ..rendering import Rendering, hint_html, note_html, panel_frame
from .live import INTERRUPT_HINT, LivePanel

HINT = INTERRUPT_HINT.replace("to cancel", "to stop waiting (the endpoint is removed)")


class StartupPanel(LivePanel):
    """One deploy's wait for its first worker to serve."""

    def __init__(self, script: str, endpoint_id: str, limit: float) -> None:
        super().__init__()
        self.title = f"deploying {script} as endpoint {endpoint_id!r}"
        self.limit = limit
        self.waited = 0.0
        self.seen = ""
        """What the starting worker's health path last answered ('' for a queue worker)."""
        self.outcome: str | None = None

    @property
    def final(self) -> bool:
        return self.outcome is not None

    def wait(self, waited: float, seen: str) -> None:
        """Count the wait (shown at the first count)."""
        self.waited, self.seen = waited, seen
        if self.cell_output is None:
            self.show()
        else:
            self.refresh()

    def end(self, outcome: str) -> None:
        self.outcome = outcome
        self.refresh(force=True)

    def rendering(self) -> Rendering:
        counted = f"{self.waited:.0f} s of {self.limit:.0f} s for its first worker to serve"
        lines = [f"{self.title}: waited {counted}", self.seen, self.outcome or HINT]
        shown = [line for line in lines if line]
        body = f"<b>{html.escape(shown[0])}</b><br>" + "<br>".join(map(html.escape, shown[1:-1]))
        body += f"<div>{note_html(self.outcome)}</div>" if self.outcome else hint_html(HINT)
        state = "waiting" if self.outcome is None else "ended"
        return Rendering(
            panel_frame("nbext-startup-panel", state, body, live=not self.final), "\n".join(shown)
        )
