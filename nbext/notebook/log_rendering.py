"""A log, as HTML and text: what ``%runpod logs`` shows once, and what a followed log's
cell keeps when following stops.

The same fragments draw the live panel (``widgets.logs.LogPanel``), so a log looks the
same before and after it turns static. Lines are shown in a monospaced block that
scrolls; an endpoint's lines say which worker wrote them. Only the last lines are kept
(the panel's ``max_lines``, and as many as fit its size bound): a log followed for a day,
or a worker printing megabyte lines, must not grow the saved notebook without bound, and
the block says it shows the last N lines and how many earlier ones were left out.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .rendering import Rendering, hint_html, note_html, panel_frame
from .theme import ERROR, MUTED, jp

Target = Literal["pod", "endpoint"]
LOG_STYLE = (
    "white-space:pre-wrap;margin:0.3em 0;max-height:24em;overflow:auto;"
    f"font-family:{jp('code-font-family', 'monospace')};font-size:0.85em;"
    # newest lines at the bottom, and the view stays there as lines arrive
    "display:flex;flex-direction:column-reverse"
)


@dataclass(frozen=True)
class LogLine:
    """One line of a pod's or a worker's log; ``worker`` is None for a pod's."""

    ts: datetime
    source: str
    line: str
    worker: str | None = None

    def text(self) -> str:
        """``HH:MM:SS [worker] line``: what a reader needs, on one line."""
        who = f" [{self.worker}]" if self.worker else ""
        system = " (system)" if self.source == "system" else ""
        return f"{self.ts:%H:%M:%S}{who}{system} {self.line}"


@dataclass(frozen=True)
class LogView:
    """A log as a panel shows it: whose, whether it is followed, its last lines."""

    kind: Target
    target: str
    lines: Sequence[LogLine]
    name: str | None = None
    """The name the target was asked for by, when not its id."""
    following: bool = False
    dropped: int = 0
    """Earlier lines left out (only the last ``max_lines`` are kept)."""
    workers: int | None = None
    """An endpoint's workers whose logs are read (None for a pod)."""
    note: str = ""
    error: str | None = None
    held: int = 0
    """Earlier lines kept but not shown while followed (all show when it stops)."""
    hint: str = ""
    """How to stop following, said while it runs."""


def dropped_note(view: LogView) -> str:
    """What a view that left lines out says above its lines."""
    shown = len(view.lines)
    parts = []
    if view.held:
        parts.append(f"{view.held:,} earlier shown when following stops")
    if view.dropped:
        parts.append(f"{view.dropped:,} earlier line{'s' * (view.dropped != 1)} not kept")
    return f"… showing the last {shown:,} line{'s' * (shown != 1)}; {'; '.join(parts)}"


def logs_title_html(view: LogView) -> str:
    mode = "following" if view.following else "log"
    whose = f"{view.kind} <b>{html.escape(view.name or view.target)}</b>"
    if view.name:
        whose += f" <code>{html.escape(view.target)}</code>"
    count = f"{len(view.lines)} line{'s' * (len(view.lines) != 1)}"
    if view.workers is not None:
        count += f" from {view.workers} worker{'s' * (view.workers != 1)}"
    return f"{whose} <span>{mode} · {count}</span>"


def logs_lines_html(view: LogView) -> str:
    """The lines in a scrolling block (newest last), system lines muted."""
    rows: list[str] = []
    if view.dropped or view.held:
        rows.append(f'<span style="color:{MUTED}">{html.escape(dropped_note(view))}</span>')
    for line in view.lines:
        style = f' style="color:{MUTED}"' if line.source == "system" else ""
        rows.append(f'<span class="nbext-log-line"{style}>{html.escape(line.text())}</span>')
    if not view.lines:
        rows.append("<i>no lines yet</i>" if view.following else "<i>no lines</i>")
    # column-reverse shows the last child first: the rows go in as one child
    return f'<div class="nbext-log-lines" style="{LOG_STYLE}"><div>{"<br>".join(rows)}</div></div>'


def logs_status_html(view: LogView) -> str:
    parts = []
    if view.error:
        parts.append(
            f'<div class="nbext-error" style="color:{ERROR}">{html.escape(view.error)}</div>'
        )
    if view.note:
        parts.append(f"<div>{note_html(view.note)}</div>")
    if view.hint:
        parts.append(hint_html(view.hint))
    return "".join(parts)


def logs_plain(view: LogView) -> str:
    """The ``text/plain`` twin: a title line, then the lines as a terminal shows them."""
    who = f"{view.name} ({view.target})" if view.name else view.target
    title = f"{view.kind} {who}: {'following, ' if view.following else ''}"
    title += f"{len(view.lines)} line{'s' * (len(view.lines) != 1)}"
    if view.workers is not None:
        title += f" from {view.workers} worker{'s' * (view.workers != 1)}"
    lines = [title]
    if view.dropped or view.held:
        lines.append(dropped_note(view))
    lines += [line.text() for line in view.lines]
    if view.error:
        lines.append(f"error: {view.error}")
    if view.note:
        lines.append(f"({view.note})")
    if view.hint:
        lines.append(view.hint)
    return "\n".join(lines)


def render_logs(view: LogView) -> Rendering:
    body = (
        f'<div class="nbext-logs-title">{logs_title_html(view)}</div>'
        f'<div class="nbext-logs-lines">{logs_lines_html(view)}</div>'
        f'<div class="nbext-logs-status">{logs_status_html(view)}</div>'
    )
    state = "following" if view.following else "stopped"
    return Rendering(
        panel_frame("nbext-logs-panel", state, body, live=view.following), logs_plain(view)
    )
