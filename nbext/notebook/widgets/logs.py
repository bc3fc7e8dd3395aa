"""The log panel: a pod's or an endpoint's workers' log lines, live while followed.

Passive like the health panel: ``add(lines)`` keeps them and redraws, at most once per
throttle interval (a chatty container must not flood the browser); ``flush()`` draws
what is left. Only the last ``max_lines`` lines are kept (a trait: lowering it drops the
oldest at once), and only as many as fit in ``MAX_SHOWN`` characters of HTML, each line
cut to ``LINE_CHARS``: a log followed for hours, or a worker printing megabyte lines,
stays a bounded widget and, once static, a bounded output in the saved notebook, which
says it shows the last N lines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as widgets
import pandas as pd
from traitlets import Int, observe

from ..display.frames import to_frame
from ..display.specs import LOGS
from ..static import Rendering
from ..static_logs import (
    LogLine,
    LogView,
    Target,
    logs_lines_html,
    logs_plain,
    logs_status_html,
    logs_title_html,
    render_logs,
)
from .plain import PlainTextForm
from .throttle import Throttle

DEFAULT_MAX_LINES = 1000
"""Lines a panel keeps by default (``RunpodMagics.log_max_lines``)."""
LINE_CHARS = 2000
"""Characters of one line a panel keeps: its start and its last ``LINE_END_CHARS`` (where
a traceback's last words, or the emulator's mark on a line it cut, are), with a mark
saying how many between them are not shown."""
LINE_END_CHARS = 200
MAX_SHOWN = 200_000
"""Characters of escaped HTML the kept lines may take (each line counts ``ROW_CHARS``
besides its text): what one log display, and the cell it leaves in a saved notebook,
holds at most, whatever the lines' count."""
ROW_CHARS = 60
"""What a line's row costs besides its text (its time, worker, markup)."""


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


class LogPanel(PlainTextForm, widgets.VBox):  # type: ignore[misc]
    """The last ``max_lines`` lines of one pod's log, or of an endpoint's workers' logs.

    ``on_stop`` is called when the user stops following (the Stop button, ``%runpod logs
    --stop``, closing the panel), so the follower's task ends with the panel.
    """

    max_lines = Int(DEFAULT_MAX_LINES, min=1, help="Lines kept (the oldest go first).")

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
        """The name the user asked for the target by (None: they gave its id)."""
        self.following = following
        self.workers: int | None = None
        self.dropped = 0
        self.note = ""
        self.error: str | None = None
        self.task: asyncio.Task[Any] | None = None
        self.on_stop: Callable[[], None] | None = None
        self._lines: deque[LogLine] = deque()
        self._shown = 0
        """What the kept lines cost (``cost``), kept under ``MAX_SHOWN``."""
        self._held = False
        """Lines were added since the last drawing."""
        self._throttle = throttle or Throttle()
        self.title = widgets.HTML()
        self.body = widgets.HTML()
        self.status = widgets.HTML()
        self.stop_button = widgets.Button(
            description="Stop following",
            icon="stop",
            layout=widgets.Layout(display=None if following else "none"),
        )
        self.stop_button.on_click(lambda _b: self.stop())
        for part, name in (
            (self.title, "title"),
            (self.body, "lines"),
            (self.status, "status"),
            (self.stop_button, "stop"),
        ):
            part.add_class(f"nbext-logs-{name}")
        super().__init__([self.title, self.body, self.status, self.stop_button])
        self.max_lines = max_lines
        self.add_class("nbext-logs-panel")
        self._render()

    @observe("max_lines")
    def _resize(self, change: dict[str, Any]) -> None:
        if getattr(self, "_lines", None) is None:
            return
        if self._trim():
            self._render()

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
        """Keep ``lines`` (the oldest kept ones go past ``max_lines``); the count added.

        Redraws when ``draw`` and the throttle allows; ``flush()`` draws the rest.
        """
        added = 0
        for line in lines:
            kept = shortened(line)
            self._lines.append(kept)
            self._shown += cost(kept)
            self._trim()
            added += 1
        if added:
            self._held = True
            if draw and self._throttle.ready():
                self._render()
        return added

    def flush(self) -> None:
        """Draw now whatever ``add`` held back (nothing to do when nothing was)."""
        if self._held:
            self.redraw()

    def redraw(self) -> None:
        """Draw the panel now, whatever the throttle says."""
        self._throttle.mark()
        self._render()

    def set_workers(self, count: int) -> None:
        if count != self.workers:
            self.workers = count
            self._render()

    def set_error(self, error: str | None) -> None:
        self.error = error
        self._render()

    def set_note(self, note: str) -> None:
        self.note = note
        self._render()

    def frame(self) -> pd.DataFrame:
        """The lines kept, as a DataFrame (``ts``, ``worker``, ``source``, ``line``)."""
        return to_frame([dataclasses.asdict(line) for line in self._lines], LOGS)

    def stop(self, note: str = "") -> None:
        """Stop following: the follower's task ends, the panel keeps its lines and says
        why it stopped (``note``; by default, that the user stopped it)."""
        if not self.following:
            if note:
                self.set_note(note)
            return
        self.note = note or "stopped following"
        self.following = False
        if self.on_stop is not None:
            self.on_stop()
        self._render()

    def close(self) -> None:
        """Closing the panel stops its follower too (no one is left to show lines to)."""
        self.stop()
        super().close()

    @property
    def final(self) -> bool:
        return not self.following

    def view(self) -> LogView:
        return LogView(
            kind=self.kind,
            target=self.target,
            name=self.name,
            lines=tuple(self._lines),
            following=self.following,
            dropped=self.dropped,
            workers=self.workers,
            note=self.note,
            error=self.error,
        )

    def rendering(self) -> Rendering:
        return render_logs(self.view())

    def plain_text(self) -> str:
        return logs_plain(self.view())

    def _render(self) -> None:
        self._held = False
        view = self.view()
        self.title.value = logs_title_html(view)
        self.body.value = logs_lines_html(view)
        self.status.value = logs_status_html(view)
        self.stop_button.layout.display = None if self.following else "none"

    def __repr__(self) -> str:
        return f"LogPanel({self.kind} {self.target!r}, lines={len(self._lines)})"
