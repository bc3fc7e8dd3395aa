"""The job panel: one job's state, timings, streamed text, output, error, and Cancel.

A passive ``LivePanel`` fed by its follower (``follow.py``); a new line in the panel is a
``JobView`` field and a fragment in ``render_job``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from nbext import media
from nbext.client import JobCost, Phase
from nbext.models import JobResult, JobStatus, StreamChunk

from ..display.text import chunk_text
from ..rendering import JobView, Rendering, render_job
from .controls import Controls
from .live import INTERRUPT_HINT, LivePanel
from .throttle import Throttle

DISPLAY_TEXT_CHARS = 20_000
"""The streamed text shown live is at most this long (its tail): each redraw is a
message to the page; ``panel.text`` has all, and the final output shows all."""
CANCELLABLE = frozenset({JobStatus.IN_QUEUE.value, JobStatus.IN_PROGRESS.value})
FINAL_STATES = frozenset({s.value for s in JobStatus if s.is_final} | {"REMOVED"})


class JobPanel(LivePanel):
    """Live view of one job. ``stream`` shows streamed text (``--stream``); ``redact``
    masks the API key in any text the job produced; ``throttle`` bounds the redraws, and
    its clock times the run."""

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
        self.retries = 0
        self._clear_run()
        self.cancel_available = False
        """Whether Cancel can act now, as its follower says (else the button is hidden)."""
        self._redact = redact or (lambda text: text)
        self._running_since: float | None = None
        self._running_base_ms = 0.0
        self.task: asyncio.Task[Any] | None = None
        """The background task following the job (``--background``), to ``await``."""
        # The theme's plain button: a coloured style puts white text on a light colour.
        self.cancel_button = widgets.Button(description="Cancel", icon="stop")
        self.cancel_button.add_class("nbext-job-cancel")
        super().__init__(
            throttle=throttle, controls=Controls(self.cancel_button, hint=INTERRUPT_HINT)
        )

    def _clear_run(self) -> None:
        """What one run of the job shows, before it shows anything (a retry starts again)."""
        self.delay_ms: int | None = None
        self.run_ms: int | None = None
        self.output: Any = None
        self.has_output = False
        self.streamed_media: Any = None
        """The newest stream chunk that held media (a step's preview): drawn in place
        until the job's own output arrives."""
        self.error: str | None = None
        self.note = ""
        self.metrics: dict[str, Any] = {}
        self.cost: JobCost | None = None
        """What the job cost, once it ended (set by its follower)."""
        self.chunks = 0
        self.phase: Phase | None = None
        """What the job waits for or where it runs, kept to the end for its timings."""
        self._pieces: list[str] = []
        self._joined = ""
        self._joined_upto = 0

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
        return self.state in FINAL_STATES

    def start(self, job_id: str, state: str = JobStatus.IN_QUEUE.value) -> None:
        """The service accepted the job."""
        self.job_id = job_id
        self._set_state(state)
        self.refresh(force=True)

    def restart(self) -> None:
        """The job was retried: same id, fresh run, fresh stream."""
        self._set_state(JobStatus.IN_QUEUE.value)
        self._clear_run()
        self.refresh(force=True)

    def add_chunk(self, chunk: StreamChunk, *, draw: bool = True) -> bool:
        """Take one streamed chunk; whether it was drawn (``draw=False`` only collects)."""
        self.chunks += 1
        shown = chunk.output
        if media.find(chunk.output):
            # A preview replaces the one before (one picture, updated in place); the text
            # keeps a short tag per chunk, never its base64.
            self.streamed_media, shown = chunk.output, media.preview(chunk.output)
        self._pieces.append(chunk_text(shown, self._pieces[-1] if self._pieces else ""))
        if chunk.metrics:
            self.metrics = dict(chunk.metrics)
        if self.state in ("SUBMITTING", JobStatus.IN_QUEUE.value):
            self._set_state(JobStatus.IN_PROGRESS.value)  # a chunk means a worker runs it
        return self.refresh() if draw else False

    def set_result(self, result: JobResult) -> None:
        """A /status (or /runsync) answer. A change of state shows at once: states change
        a handful of times per job, so only chunks need the throttle."""
        changed = self.state != result.status.value or self.job_id != result.id
        self.job_id = result.id
        self._set_state(result.status.value)
        self.delay_ms = result.delay_time
        self.run_ms = result.execution_time
        if self._running_since is not None and result.execution_time is not None:
            self._running_since = self._throttle.now()
            self._running_base_ms = float(result.execution_time)
        if result.has_output:
            self.output, self.has_output = result.output, True
        self.error = result.error
        if result.status.is_final and self.phase is not None and self.phase.timings is None:
            self.phase = self.phase.ended(result)  # its end read by a wait or a stream
        self.refresh(force=changed or result.status.is_final)

    def set_removed(self, reason: str) -> None:
        """The job is gone from the service (purged, TTL or retention elapsed)."""
        self._set_state("REMOVED")
        self.note = reason
        self.refresh(force=True)

    def set_note(self, note: str) -> None:
        self.note = note
        self.refresh(force=True)

    def _set_state(self, state: str) -> None:
        if state == JobStatus.IN_PROGRESS.value and self.state != state:
            self._running_since, self._running_base_ms = self._throttle.now(), 0.0
        elif state != JobStatus.IN_PROGRESS.value:
            self._running_since = None
        self.state = state

    def _run_ms(self) -> tuple[float | None, bool]:
        """The run time to show (the service's last figure plus the time since), and
        whether it is a live count."""
        if self._running_since is None:
            return self.run_ms, False
        counted = (self._throttle.now() - self._running_since) * 1000
        return self._running_base_ms + counted, True

    # ---- views -----------------------------------------------------------------------

    def view(self) -> JobView:
        run_ms, running = self._run_ms()
        redact = self._redact
        return JobView(
            endpoint_id=self.endpoint_id,
            via=self.via,
            job_id=self.job_id,
            state=self.state,
            delay_ms=self.delay_ms,
            run_ms=run_ms,
            running=running,
            text=redact(self.text) if self.stream else None,
            metrics=dict(self.metrics),
            has_output=self.has_output or self.streamed_media is not None,
            output=self.output if self.has_output else self.streamed_media,
            error=redact(self.error) if self.error else None,
            note=self.note,
            retries=self.retries,
            live=not self.final,
            hint="" if self.final else self._hint_now(),
            text_tail=None if self.final else DISPLAY_TEXT_CHARS,
            cost=self.cost if self.final else None,
            phase=self.phase,
        )

    def _hint_now(self) -> str:
        """The follower's hint; once this panel's controls are gone (it ended, and the
        job was retried from elsewhere), the command, which works whoever follows it."""
        if self.cell_output is not None and self.cell_output.ended:
            return f"%runpod cancel {self.job_id} to cancel"
        return self.hint

    def rendering(self) -> Rendering:
        # The output is redacted as drawn: the view keeps the value itself for -o NAME.
        view = self.view()
        rendering = render_job(view, full_size_files=self.has_output)
        return Rendering(self._redact(rendering.html), self._redact(rendering.plain))

    def controls_shown(self) -> bool:
        return self.cancel_available and self.job_id is not None and self.state in CANCELLABLE

    def tick(self) -> bool:
        """Redraw if the throttle allows (the run time counts up while the job runs)."""
        if self._running_since is None:
            return False
        return self.refresh()

    def __repr__(self) -> str:
        return f"JobPanel({self.endpoint_id!r}, job={self.job_id!r}, state={self.state})"
