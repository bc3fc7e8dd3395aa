"""A job's phase under its panel's state: one line while it waits or runs, its timings at
the end, and a folded tail of a worker's log (docs/behaviour.md#phases-of-a-waiting-job).
"""

from __future__ import annotations

import html

from nbext.client import Phase, Timings
from nbext.models import HealthWorkers, JobStatus

from .display.text import format_ms
from .theme import ERROR, MUTED, jp

PLAIN_LOG_LINES = 5
"""Lines of a worker's log the ``text/plain`` form carries (the HTML folds them all)."""
WORKER_STATES = ("running", "idle", "initializing", "throttled", "unhealthy")
"""The states after ``ready`` a phase line names, when any worker is in them."""
LOG_STYLE = (
    "white-space:pre-wrap;margin:0.2em 0;max-height:16em;overflow:auto;"
    f"font-family:{jp('code-font-family', 'monospace')};font-size:0.85em"
)


def seconds_text(seconds: float) -> str:
    """``0.16 s``, ``3.1 s``, ``12 s``, ``2 min 5 s``: as precise as a reader needs."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return format_ms(seconds * 1000)


def workers_text(workers: HealthWorkers, cold_start: float | None) -> str:
    """``workers 0 ready, 1 initializing (12 s)``: ready always, the rest when counted."""
    parts = [f"{workers.ready} ready"]
    for name in WORKER_STATES:
        count = getattr(workers, name)
        if count:
            timed = name == "initializing" and cold_start is not None
            started = f" ({seconds_text(cold_start)})" if timed and cold_start is not None else ""
            parts.append(f"{count} {name}{started}")
    return "workers " + ", ".join(parts)


def timings_text(timings: Timings) -> str:
    """``queued 3.1 s, cold start 6.7 s, ran 0.16 s``; a phase the job did not go through
    (no cold start, a wait too short to count) is left out."""
    parts = []
    cold = timings.cold_start
    if timings.queued is not None and (timings.queued >= 0.05 or cold is None):
        parts.append(f"queued {seconds_text(timings.queued)}")
    if cold is not None:
        parts.append(f"cold start {seconds_text(cold)}")
    if timings.ran is not None:
        parts.append(f"ran {seconds_text(timings.ran)}")
    return ", ".join(parts)


def phase_line(phase: Phase) -> str:
    """The one line under a job's state: what it waits for, where it runs, or what each
    phase took. Empty when there is nothing to add to the state (a job just queued, one
    that ended without a cold start)."""
    if phase.timings is not None:  # the panel's own line has the queue and run times
        return timings_text(phase.timings) if phase.timings.cold_start is not None else ""
    if phase.status is JobStatus.IN_PROGRESS:
        where = f"running on {phase.worker_id}" if phase.worker_id else "running"
        cold = phase.cold_start
        return where + (f" · cold start {seconds_text(cold)}" if cold is not None else "")
    if phase.status is not JobStatus.IN_QUEUE or phase.health is None:
        return ""
    parts = ["in queue"]
    if phase.ahead:
        parts.append(f"up to {phase.ahead} job{'s' if phase.ahead != 1 else ''} ahead")
    parts.append(workers_text(phase.health.workers, phase.cold_start))
    return " · ".join(parts)


def phase_plain(phase: Phase) -> str:
    """The phase as ``text/plain``: its line, the likely cause, the log's last lines."""
    lines = [line] if (line := phase_line(phase)) else []
    if phase.cause is not None:
        lines.append(f"why: {phase.cause}")
    if phase.log:
        lines.append(f"log of {phase.log_worker or 'the worker'} (last lines):")
        lines.extend(f"  {text}" for text in phase.log[-PLAIN_LOG_LINES:])
    return "\n".join(lines)


def phase_html(phase: Phase) -> str:
    """The phase as HTML: its line; the cause in the theme's secondary colour, unless no
    worker could start (then the worker's last line is error text); the log folded."""
    parts = []
    line = phase_line(phase)
    if line:
        parts.append(f'<div class="nbext-phase-line">{html.escape(line)}</div>')
    if phase.cause is not None:
        cause = phase.cause
        last = phase.last_line
        if last is not None:
            cause = cause.removesuffix(f"; last line: {last}")
        parts.append(
            f'<div class="nbext-phase-cause" style="color:{MUTED}">why: {html.escape(cause)}</div>'
        )
        if last is not None:
            parts.append(
                f'<pre class="nbext-phase-last-line" style="color:{ERROR};white-space:pre-wrap;'
                f'margin:0.2em 0">{html.escape(last)}</pre>'
            )
    if phase.log:
        who = html.escape(phase.log_worker or "the worker")
        body = html.escape("\n".join(phase.log))
        parts.append(
            '<details class="nbext-phase-log"><summary>log of '
            f"<code>{who}</code> (last {len(phase.log)} lines)</summary>"
            f'<pre style="{LOG_STYLE}">{body}</pre></details>'
        )
    if not parts:
        return ""
    state = html.escape(phase.status.value)
    return f'<div class="nbext-phase" data-state="{state}">{"".join(parts)}</div>'
