"""The job panel: one job's state, timings, streamed text, output, error and buttons.

The panel is a passive view. Whoever follows the job (``nbext.notebook.follow``) feeds
it data with ``start``, ``add_chunk``, ``set_result`` and friends, which are cheap:
they reach the widgets only through ``refresh``, which turns the data into widget values
at most ten times a second (``Throttle``); ``add_chunk(..., draw=False)`` only collects,
for a caller that draws a whole answer of chunks at once, and ``refresh(force=True)``
shows the current state exactly (a state change, the end). Buttons only call back: the
follower decides what Cancel and Retry do.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from nbext.models import JobResult, JobStatus, StreamChunk

from ..display.text import (
    EXPANDED_CHARS,
    chunk_text,
    compact_json,
    format_ms,
    metrics_line,
    shorten,
    to_json,
)
from .plain import PlainTextForm
from .style import badge_html
from .throttle import Throttle

DISPLAY_TEXT_CHARS = 200_000
"""The streamed text shown live is at most this long (its tail); ``panel.text`` has all."""
PLAIN_TEXT_CHARS = 2_000
"""How much streamed text the ``text/plain`` form carries."""
CANCELLABLE = frozenset({JobStatus.IN_QUEUE.value, JobStatus.IN_PROGRESS.value})
RETRYABLE = frozenset({JobStatus.FAILED.value, JobStatus.TIMED_OUT.value})


def _hidden(widget: widgets.DOMWidget, hidden: bool) -> None:
    display = "none" if hidden else None
    if widget.layout.display != display:
        widget.layout.display = display


def _set(widget: Any, name: str, value: Any) -> bool:
    """Assign a trait only when it changes (each assignment is a message to the browser)."""
    if getattr(widget, name) == value:
        return False
    setattr(widget, name, value)
    return True


class JobPanel(PlainTextForm, widgets.VBox):  # type: ignore[misc]
    """Live view of one job: badge, timings, streamed text, metrics, output, error.

    ``stream`` shows streamed text as it arrives (the ``--stream`` option); without it
    the panel shows state and result only. ``redact`` masks the API key in any text the
    job produced, in case a handler echoes it.
    """

    def __init__(
        self,
        endpoint_id: str,
        *,
        stream: bool = False,
        via: str = "/run",
        redact: Callable[[str], str] | None = None,
        throttle: Throttle | None = None,
    ) -> None:
        self.endpoint_id = endpoint_id
        self.via = via
        self.stream = stream
        self.job_id: str | None = None
        self.state = "SUBMITTING"
        self.delay_ms: int | None = None
        self.run_ms: int | None = None
        self.output: Any = None
        self.has_output = False
        self.error: str | None = None
        self.note = ""
        self.metrics: dict[str, Any] = {}
        self.chunks = 0
        self.renders = 0
        """How many refreshes changed a widget (what the throttle bounds)."""
        self._redact = redact or (lambda text: text)
        self._throttle = throttle or Throttle()
        self._pieces: list[str] = []
        self._joined = ""
        self._joined_upto = 0
        self.task: asyncio.Task[Any] | None = None
        """The background task following the job (``--background``), to ``await``."""

        self.badge = widgets.HTML(badge_html(self.state))
        self.title = widgets.HTML()
        self.timing = widgets.HTML()
        self.text_view = widgets.HTML(layout=widgets.Layout(display="none"))
        self.metrics_view = widgets.HTML(layout=widgets.Layout(display="none"))
        self.output_view = widgets.HTML(layout=widgets.Layout(display="none"))
        self.error_view = widgets.HTML(layout=widgets.Layout(display="none"))
        self.note_view = widgets.HTML(layout=widgets.Layout(display="none"))
        self.cancel_button = widgets.Button(
            description="Cancel", icon="stop", button_style="warning", disabled=True
        )
        self.retry_button = widgets.Button(
            description="Retry",
            icon="redo",
            button_style="info",
            disabled=True,
            layout=widgets.Layout(display="none"),
        )
        for part, name in (
            (self.badge, "badge"),
            (self.title, "title"),
            (self.timing, "timing"),
            (self.text_view, "text"),
            (self.metrics_view, "metrics"),
            (self.output_view, "output"),
            (self.error_view, "error"),
            (self.note_view, "note"),
            (self.cancel_button, "cancel"),
            (self.retry_button, "retry"),
        ):
            part.add_class(f"nbext-job-{name}")
        header = widgets.HBox(
            [self.badge, self.title, self.timing],
            layout=widgets.Layout(align_items="center", grid_gap="0.8em"),
        )
        buttons = widgets.HBox([self.cancel_button, self.retry_button])
        super().__init__(
            [
                header,
                self.text_view,
                self.metrics_view,
                self.output_view,
                self.error_view,
                self.note_view,
                buttons,
            ]
        )
        self.add_class("nbext-job-panel")
        self.refresh(force=True)

    # ---- data (cheap; no widget is touched) ------------------------------------------

    @property
    def text(self) -> str:
        """Every streamed piece joined, exactly as the chunks carried it."""
        if self._joined_upto < len(self._pieces):
            self._joined += "".join(self._pieces[self._joined_upto :])
            self._joined_upto = len(self._pieces)
        return self._joined

    @property
    def final(self) -> bool:
        return self.state in {s.value for s in JobStatus if s.is_final} or self.state == "REMOVED"

    def start(self, job_id: str, state: str = JobStatus.IN_QUEUE.value) -> None:
        """The service accepted the job."""
        self.job_id = job_id
        self.state = state
        self.refresh(force=True)

    def restart(self) -> None:
        """The job was retried: same id, fresh run, fresh stream."""
        self.state = JobStatus.IN_QUEUE.value
        self.delay_ms = self.run_ms = None
        self.output, self.has_output, self.error = None, False, None
        self.metrics = {}
        self._pieces, self._joined, self._joined_upto = [], "", 0
        self.chunks = 0
        self.note = ""
        self.refresh(force=True)

    def add_chunk(self, chunk: StreamChunk, *, draw: bool = True) -> bool:
        """Take one streamed chunk; returns whether the widgets were refreshed for it.

        ``draw=False`` only collects it: a caller holding several chunks at once (one
        answer of the service) draws them together with ``refresh``.
        """
        self.chunks += 1
        self._pieces.append(chunk_text(chunk.output, self._pieces[-1] if self._pieces else ""))
        if chunk.metrics:
            self.metrics = dict(chunk.metrics)
        if self.state in ("SUBMITTING", JobStatus.IN_QUEUE.value):
            self.state = JobStatus.IN_PROGRESS.value  # a chunk means a worker runs it
        return self.refresh() if draw else False

    def set_result(self, result: JobResult) -> None:
        """A /status (or /runsync) answer. A change of state shows at once: states change
        a handful of times per job, so only chunks need the throttle."""
        changed = self.state != result.status.value or self.job_id != result.id
        self.job_id = result.id
        self.state = result.status.value
        self.delay_ms = result.delay_time
        self.run_ms = result.execution_time
        if result.has_output:
            self.output, self.has_output = result.output, True
        self.error = result.error
        self.refresh(force=changed or result.status.is_final)

    def set_removed(self, reason: str) -> None:
        """The job is gone from the service (purged, TTL or retention elapsed)."""
        self.state = "REMOVED"
        self.note = reason
        self.refresh(force=True)

    def set_note(self, note: str) -> None:
        self.note = note
        self.refresh(force=True)

    # ---- rendering -------------------------------------------------------------------

    def throttle_wait(self) -> float:
        """Seconds until the throttle lets the next refresh through."""
        return self._throttle.wait_left()

    def refresh(self, force: bool = False) -> bool:
        """Render the data into the widgets, at most once per throttle interval.

        Returns whether a render happened. ``force`` renders now (final states, notes).
        """
        if force:
            self._throttle.mark()
        elif not self._throttle.ready():
            return False
        if self._render():
            self.renders += 1
        return True

    def _render(self) -> bool:
        changed = False
        changed |= _set(self.badge, "value", badge_html(self.state))
        job = html.escape(self.job_id) if self.job_id else "…"
        title = (
            f'<b>{html.escape(self.endpoint_id)}</b> <span style="opacity:0.7">'
            f"{html.escape(self.via)} · job <code>{job}</code></span>"
        )
        changed |= _set(self.title, "value", title)
        timing = f"queue {format_ms(self.delay_ms)} · run {format_ms(self.run_ms)}"
        changed |= _set(self.timing, "value", f'<span class="nbext-timing">{timing}</span>')

        text = self.text
        show_text = self.stream and bool(text)
        if show_text:
            shown = text[-DISPLAY_TEXT_CHARS:]
            lead = (
                f"… {len(text) - len(shown):,} earlier characters (all in panel.text)\n"
                if len(shown) < len(text)
                else ""
            )
            body = html.escape(lead + self._redact(shown))
            changed |= _set(
                self.text_view,
                "value",
                '<pre class="nbext-stream" style="white-space:pre-wrap;margin:0.3em 0;'
                f'max-height:24em;overflow:auto">{body}</pre>',
            )
        changed |= self._show(self.text_view, show_text)

        line = metrics_line(self.metrics) if self.stream else ""
        if line:
            changed |= _set(self.metrics_view, "value", f"<small>{html.escape(line)}</small>")
        changed |= self._show(self.metrics_view, bool(line))

        if self.has_output:
            summary = html.escape(self._redact(compact_json(self.output)))
            full = html.escape(
                self._redact(shorten(to_json(self.output, indent=2), EXPANDED_CHARS))
            )
            changed |= _set(
                self.output_view,
                "value",
                f'<details class="nbext-output-details"><summary>output: <code>{summary}'
                f'</code></summary><pre style="white-space:pre-wrap">{full}</pre></details>',
            )
        changed |= self._show(self.output_view, self.has_output)

        if self.error:
            error = html.escape(self._redact(self.error))
            changed |= _set(
                self.error_view,
                "value",
                f'<pre style="color:#dc2626;white-space:pre-wrap;margin:0.3em 0">{error}</pre>',
            )
        changed |= self._show(self.error_view, bool(self.error))

        if self.note:
            changed |= _set(self.note_view, "value", f"<i>{html.escape(self.note)}</i>")
        changed |= self._show(self.note_view, bool(self.note))

        cancellable = self.job_id is not None and self.state in CANCELLABLE
        retryable = self.job_id is not None and self.state in RETRYABLE
        changed |= _set(self.cancel_button, "disabled", not cancellable)
        changed |= _set(self.retry_button, "disabled", not retryable)
        changed |= self._show(self.retry_button, retryable)
        changed |= self._show(self.cancel_button, not self.final)
        return changed

    @staticmethod
    def _show(widget: widgets.DOMWidget, visible: bool) -> bool:
        before = widget.layout.display
        _hidden(widget, not visible)
        return bool(before != widget.layout.display)

    # ---- text/plain --------------------------------------------------------------------

    def plain_text(self) -> str:
        """The panel as text: what a headless run or a saved notebook shows."""
        job = self.job_id or "(no id yet)"
        lines = [
            f"{self.endpoint_id} {self.via} job {job}: {self.state} · "
            f"queue {format_ms(self.delay_ms)} · run {format_ms(self.run_ms)}"
        ]
        if self.stream and self.text:
            lines.append("text: " + self._redact(shorten(self.text, PLAIN_TEXT_CHARS)))
        if self.stream and self.metrics:
            line = metrics_line(self.metrics)
            if line:
                lines.append("metrics: " + line)
        if self.has_output:
            lines.append("output: " + self._redact(compact_json(self.output)))
        if self.error:
            lines.append("error: " + self._redact(shorten(self.error, PLAIN_TEXT_CHARS)))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"JobPanel({self.endpoint_id!r}, job={self.job_id!r}, state={self.state})"
