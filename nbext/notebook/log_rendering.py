"""A log, as HTML and text: what ``%runpod logs`` shows once, and what a followed log's
cell keeps when following stops (the live ``LogPanel`` draws with the same fragments).
Only the last lines are kept, and the block says how many earlier ones were left out.
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


def dropped_note(view: LogView) -> str:
    """What a view that left lines out says above its lines."""
    shown = len(view.lines)
    parts = []
    if view.held:
        parts.append(f"{view.held:,} earlier shown when following stops")
    if view.dropped:
        parts.append(f"{view.dropped:,} earlier line{'s' * (view.dropped != 1)} not kept")
    return f"… showing the last {shown:,} line{'s' * (shown != 1)}; {'; '.join(parts)}"


def count_text(view: LogView) -> str:
    count = f"{len(view.lines)} line{'s' * (len(view.lines) != 1)}"
    if view.workers is not None:
        count += f" from {view.workers} worker{'s' * (view.workers != 1)}"
    return count


def logs_title_html(view: LogView) -> str:
    mode = "following" if view.following else "log"
    whose = f"{view.kind} <b>{html.escape(view.name or view.target)}</b>"
    if view.name:
        whose += f" <code>{html.escape(view.target)}</code>"
    return f"{whose} <span>{mode} · {html.escape(count_text(view))}</span>"


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
    lines = [f"{view.kind} {who}: {'following, ' if view.following else ''}{count_text(view)}"]
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
