"""The request panel: one request to a load-balancing endpoint, as HTTP says it
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import httpx

from nbext.client import JobCost

from ..cost import cost_html, cost_text
from ..display.text import compact_json, shorten
from ..phases import seconds_text
from ..rendering import (
    PLAIN_TEXT_CHARS,
    Rendering,
    hint_html,
    media_of,
    note_html,
    output_html,
    panel_frame,
    stream_html,
)
from ..theme import ERROR, STATE_COLOURS, badge_html
from .live import LivePanel
from .throttle import Throttle

STOP_HINT = "interrupt the kernel (■) to stop waiting for the answer"
WORKER_HEADER = "X-Runpod-Worker-Id"
"""The header that names the worker that answered."""


class RequestPanel(LivePanel):
    """Live view of one request, fed and drawn (``refresh``) by whoever sends it."""

    def __init__(
        self,
        endpoint_id: str,
        request: str,
        *,
        redact: Callable[[str], str] | None = None,
        throttle: Throttle | None = None,
    ) -> None:
        super().__init__(throttle=throttle)
        self.endpoint_id = endpoint_id
        self.request = request
        """``POST /generate``: what was asked."""
        self.status: int | None = None
        self.worker: str | None = None
        self.waiting = ""
        """What the request waits for (the workers by state), until an answer comes."""
        self.cause: str | None = None
        self.events: list[str] | None = None
        """An event stream's events' data, as they came (None: the answer is no stream)."""
        self.text = ""
        self.output: Any = None
        self.has_output = False
        self.error = ""
        self.note = ""
        self.cost: JobCost | None = None
        self.seconds: float | None = None
        """How long the request took, once it ended."""
        self._started = self._throttle.now()
        self._redact = redact or (lambda text: text)

    @property
    def final(self) -> bool:
        return self.seconds is not None

    def answered(self, response: httpx.Response) -> None:
        """The answer's status line and headers came: who answered, and how."""
        self.status, self.worker = response.status_code, response.headers.get(WORKER_HEADER)
        self.waiting, self.cause = "", None
        self.refresh(force=True)

    def event(self, data: str) -> None:
        if self.events is None:
            self.events = []
        self.events.append(data)
        self.refresh()

    def end(self, seconds: float, *, status: int | None = None, error: str = "") -> None:
        """The request ended: after ``seconds``, with ``status`` when the answer was an
        error raised before its body was seen here, ``error`` when it is said here."""
        self.seconds = seconds
        self.status = status if status is not None else self.status
        self.error = error
        self.refresh(force=True)

    def tick(self) -> bool:
        """Redraw if the throttle allows (the time counts up while the request goes on)."""
        return False if self.final else self.refresh()

    def badge(self) -> str:
        if self.status is None:
            state = "NO ANSWER" if self.final else "WAITING"
            return badge_html(state, STATE_COLOURS["FAILED" if self.final else "IN_QUEUE"])
        phrase = httpx.codes.get_reason_phrase(self.status)
        state = "FAILED" if self.status >= 400 else "COMPLETED"
        return badge_html(f"{self.status} {phrase}".strip(), STATE_COLOURS[state])

    def rendering(self) -> Rendering:
        seconds = self.seconds if self.final else self._throttle.now() - self._started
        took = seconds_text(seconds or 0.0) + ("" if self.final else "…")
        worker = f" · worker <code>{html.escape(self.worker)}</code>" if self.worker else ""
        cost = (
            f'<span class="nbext-request-cost">{cost_html(self.cost)}</span>' if self.cost else ""
        )
        said = self.status or ("no answer" if self.final else "waiting")
        parts = [
            '<div style="display:flex;align-items:center;gap:0.8em;flex-wrap:wrap">'
            f'<span class="nbext-request-badge">{self.badge()}</span>'
            f'<span class="nbext-request-title"><b>{html.escape(self.endpoint_id)}</b> '
            f"{html.escape(self.request)}{worker}</span>"
            f'<span class="nbext-request-timing">{took}</span>'
            f"{cost}</div>"
        ]
        plain = [
            f"{self.endpoint_id} {self.request}: {said}"
            + (f" · worker {self.worker}" if self.worker else "")
            + f" · {took}"
            + (f" · {cost_text(self.cost)}" if self.cost else "")
        ]
        for line in (self.waiting, f"why: {self.cause}" if self.cause else ""):
            if line:
                parts.append(f'<div class="nbext-request-waiting">{html.escape(line)}</div>')
                plain.append(line)
        text = self._redact("\n".join(self.events) if self.events is not None else self.text)
        if text:
            parts.append(f'<div class="nbext-request-text">{stream_html(text)}</div>')
            plain.append(shorten(text, PLAIN_TEXT_CHARS))
        if self.has_output:
            drawn = output_html(self.output, full_size_files=self.final)
            parts.append(f'<div class="nbext-request-output">{self._redact(drawn)}</div>')
            plain.append("answer: " + self._redact(compact_json(media_of(self.output)[1])))
        if self.error:
            error = self._redact(self.error)
            style = f"color:{ERROR};white-space:pre-wrap;margin:0.3em 0"
            parts.append(f'<pre class="nbext-error" style="{style}">{html.escape(error)}</pre>')
            plain.append("error: " + error)
        if self.note:
            parts.append(note_html(self.note))
            plain.append(self.note)
        if not self.final:
            parts.append(hint_html(STOP_HINT))
            plain.append(STOP_HINT)
        state = "ended" if self.final else "waiting" if self.status is None else "answering"
        body = panel_frame("nbext-request-panel", state, "".join(parts), live=not self.final)
        return Rendering(body, "\n".join(plain))
