"""The request panel: one request to a load-balancing endpoint, its wait and its answer.

Passive like every panel (``LivePanel``): whoever sends the request
(``magics/http.py``) feeds it (``waited``, ``answered``, ``add_text``, ``set_answer``,
``end``) and it draws ``render_http``'s HTML and text, live at most ten times a second
and as the same static output at the end. Two threads feed it (the cell's, reading the
answer, and the one that looks at the endpoint and keeps the count going, which also
draws text the throttle held back), so its changes are made under a lock. It has no
buttons: the kernel's interrupt stops a request in every front end, and the panel says
so while it is live.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from nbext.client import Diagnosis

from ..phases import workers_text
from ..rendering import HttpView, Rendering, render_http
from .job import DISPLAY_TEXT_CHARS
from .live import LivePanel

STOP_HINT = "interrupt the kernel (■) to stop waiting for the answer"
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CANCELLED"})


class HttpPanel(LivePanel):
    """Live view of one request; ``redact`` masks the key in what the worker sent."""

    def __init__(self, endpoint_id: str, request: str, redact: Any) -> None:
        super().__init__()
        self.redact = redact
        self.started = time.monotonic()
        self.view = HttpView(endpoint_id, request, "IN_QUEUE", live=True, hint=STOP_HINT)
        self._cold_since: float | None = None
        self._lock = threading.RLock()

    @property
    def final(self) -> bool:
        return self.view.state in FINAL_STATES

    def rendering(self) -> Rendering:
        view = self.view
        if view.live:
            view = dataclasses.replace(view, elapsed_s=time.monotonic() - self.started)
        return render_http(view)

    def refresh(self, force: bool = False) -> bool:
        with self._lock:
            return super().refresh(force)

    def _update(self, **changes: Any) -> None:
        with self._lock:
            self.view = dataclasses.replace(self.view, **changes)

    def waited(self, found: Diagnosis) -> None:
        """A look at the endpoint while the request waits for a worker (one that comes
        after the answer's head is too late to say anything)."""
        with self._lock:
            if self.view.state == "IN_QUEUE":
                self._waited(found)

    def _waited(self, found: Diagnosis) -> None:
        workers = found.health.workers if found.health is not None else None
        cold = workers is not None and workers.initializing > 0 and workers.ready == 0
        now = time.monotonic()
        if cold and self._cold_since is None:
            self._cold_since = now
        cold_s = now - self._cold_since if self._cold_since is not None else None
        line = "waiting for a worker" + (
            f" · {workers_text(workers, cold_s if cold else None)}" if workers else ""
        )
        self._update(waiting=line, cause=found.cause if workers else None, cold_start_s=cold_s)
        self.refresh(force=True)

    def answered(self, status: str, worker: str | None) -> None:
        """The answer's head arrived: its status and the worker that sent it."""
        cold = self._cold_since
        self._update(
            state="IN_PROGRESS",
            status=status,
            worker=worker,
            waiting="",
            cause=None,
            cold_start_s=time.monotonic() - cold if cold is not None else None,
        )
        self.refresh(force=True)

    def add_text(self, text: str) -> None:
        with self._lock:
            text = (self.view.text or "") + self.redact(text)
            self._update(text=text, text_tail=DISPLAY_TEXT_CHARS)
            self.refresh()

    def set_answer(self, answer: Any) -> None:
        self._update(has_answer=True, answer=answer)

    def end(self, state: str, *, error: str | None = None, note: str = "") -> None:
        """The request ended: its final state, drawn as the static output."""
        error = self.redact(error) if error else None
        self._update(elapsed_s=time.monotonic() - self.started, live=False, hint="")
        self._update(state=state, error=error, note=note, text_tail=None, waiting="")
        self.refresh(force=True)
