"""The log panel: a pod's or an endpoint's workers' log lines, live while followed, kept
bounded for a saved notebook (docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import dataclasses
import html
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..display.frames import to_frame
from ..display.specs import LOGS
from ..log_rendering import LogLine, LogView, Target, render_logs
from ..rendering import Rendering
from .live import StoppablePanel
from .throttle import Throttle

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MAX_LINES = 1000
"""Lines a panel keeps by default (``RunpodMagics.log_max_lines``)."""
LINE_CHARS = 2000
"""Characters of one line a panel keeps: its start and its last ``LINE_END_CHARS`` (where
a traceback's last words are)."""
LINE_END_CHARS = 200
MAX_SHOWN = 200_000
"""Characters of escaped HTML the kept lines may take (each also costs ``ROW_CHARS``)."""
ROW_CHARS = 60
"""What a line's row costs besides its text (its time, worker, markup)."""
LIVE_SHOWN = 20_000
"""Characters of escaped HTML the lines of a followed panel's redraw take at most."""


def shortened(line: LogLine) -> LogLine:
    """``line`` cut to ``LINE_CHARS`` (its start and its end), saying how much is not shown."""
    text = line.line
    if len(text) <= LINE_CHARS:
        return line
    start, end = text[: LINE_CHARS - LINE_END_CHARS], text[-LINE_END_CHARS:]
    hidden = len(text) - LINE_CHARS
    return dataclasses.replace(line, line=f"{start} … [{hidden:,} characters not shown] … {end}")


def cost(line: LogLine) -> int:
    """Characters the line adds to the panel's HTML (escaping included)."""
    return len(html.escape(line.line)) + ROW_CHARS


def live_start(lines: tuple[LogLine, ...]) -> int:
    """Where the lines a live redraw shows start: the newest that fit ``LIVE_SHOWN``
    (the newest one always)."""
    start, room = len(lines), LIVE_SHOWN
    while start > 0:
        need = cost(lines[start - 1])
        if need > room and start < len(lines):
            break
        room -= need
        start -= 1
    return start


class LogPanel(StoppablePanel):
    """The last ``max_lines`` lines of one pod's log, or of an endpoint's workers' logs."""

    def __init__(
        self,
        kind: Target,
        target: str,
        *,
        name: str | None = None,
        following: bool = False,
        max_lines: int = DEFAULT_MAX_LINES,
        throttle: Throttle | None = None,
    ) -> None:
        self.kind: Target = kind
        self.target = target
        self.name = name if name != target else None
        self.workers: int | None = None
        self.dropped = 0
        self.note = ""
        self.error: str | None = None
        self._lines: deque[LogLine] = deque()
        self._shown = 0
        """What the kept lines cost (``cost``), kept under ``MAX_SHOWN``."""
        self._held = False
        """Lines were added since the last drawing."""
        self._max_lines = max(1, max_lines)
        hint = f"%runpod logs --stop {name or target} to stop following"
        super().__init__(
            running=following,
            button="Stop following",
            css="nbext-logs-stop",
            hint=hint,
            throttle=throttle,
        )

    @property
    def max_lines(self) -> int:
        """Lines kept (the oldest go first); lowering it drops the oldest at once."""
        return self._max_lines

    @max_lines.setter
    def max_lines(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"max_lines must be at least 1, got {value}")
        self._max_lines = value
        if self._trim():
            self.draw()

    def _trim(self) -> bool:
        """Drop the oldest lines past ``max_lines`` or ``MAX_SHOWN`` (the newest is always
        kept); whether any was."""
        dropped = 0
        while len(self._lines) > 1 and (
            len(self._lines) > self.max_lines or self._shown > MAX_SHOWN
        ):
            self._shown -= cost(self._lines.popleft())
            dropped += 1
        self.dropped += dropped
        return dropped > 0

    @property
    def lines(self) -> list[LogLine]:
        """The lines kept, oldest first."""
        return list(self._lines)

    def add(self, lines: Iterable[LogLine], *, draw: bool = True) -> int:
        """Keep ``lines``; the count added. Redraws when ``draw`` and the throttle allow."""
        added = 0
        for line in lines:
            kept = shortened(line)
            self._lines.append(kept)
            self._shown += cost(kept)
            self._trim()
            added += 1
        if added:
            self._held = True
            if draw:
                self.refresh()
        return added

    def flush(self) -> None:
        """Draw now whatever ``add`` held back (nothing to do when nothing was)."""
        if self._held:
            self.refresh(force=True)

    def set_workers(self, count: int) -> None:
        if count != self.workers:
            self.workers = count
            self.draw()

    def set_error(self, error: str | None) -> None:
        self.error = error
        self.draw()

    def set_note(self, note: str) -> None:
        self.note = note
        self.draw()

    def frame(self) -> pd.DataFrame:
        """The lines kept, as a DataFrame (``ts``, ``worker``, ``source``, ``line``)."""
        return to_frame([dataclasses.asdict(line) for line in self._lines], LOGS)

    def stop(self, note: str = "") -> None:
        """Stop following, saying why (``note``; by default, that the user stopped it)."""
        if not self.running:
            if note:
                self.set_note(note)
            return
        self.note = note or "stopped following"
        super().stop()

    def view(self) -> LogView:
        lines = tuple(self._lines)
        held = live_start(lines) if self.running else 0
        lines = lines[held:]
        return LogView(
            kind=self.kind,
            target=self.target,
            name=self.name,
            lines=lines,
            following=self.running,
            dropped=self.dropped,
            held=held,
            workers=self.workers,
            note=self.note,
            error=self.error,
            hint=self.hint if self.running else "",
        )

    def draw(self) -> None:
        self._held = False
        super().draw()

    def rendering(self) -> Rendering:
        return render_logs(self.view())

    def __repr__(self) -> str:
        return f"LogPanel({self.kind} {self.target!r}, lines={len(self._lines)})"
