"""The batch panel: a progress bar and counts by state while many jobs run."""

from __future__ import annotations

import html
from collections import Counter

import ipywidgets as widgets

from nbext.models import JobStatus

from ..display.text import format_ms
from .plain import PlainTextForm
from .style import badge_html
from .throttle import Throttle


class BatchPanel(PlainTextForm, widgets.VBox):  # type: ignore[misc]
    """``done`` of ``total`` jobs, counts by final state, then a closing note."""

    def __init__(self, endpoint_id: str, total: int, *, throttle: Throttle | None = None) -> None:
        self.endpoint_id = endpoint_id
        self.total = total
        self.counts: Counter[str] = Counter()
        self.note = ""
        self.renders = 0
        self._throttle = throttle or Throttle()
        self.title = widgets.HTML()
        self.progress = widgets.IntProgress(value=0, min=0, max=max(total, 1))
        self.summary = widgets.HTML()
        self.note_view = widgets.HTML(layout=widgets.Layout(display="none"))
        for part, name in (
            (self.title, "title"),
            (self.progress, "progress"),
            (self.summary, "counts"),
            (self.note_view, "note"),
        ):
            part.add_class(f"nbext-batch-{name}")
        super().__init__([self.title, self.progress, self.summary, self.note_view])
        self.add_class("nbext-batch-panel")
        self.refresh(force=True)

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def add(self, state: str) -> None:
        self.counts[state] += 1
        self.refresh()

    def finish(self, seconds: float, note: str = "") -> None:
        self.note = note or f"done in {format_ms(seconds * 1000)}"
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> bool:
        if force:
            self._throttle.mark()
        elif not self._throttle.ready():
            return False
        self.renders += 1
        self.title.value = (
            f"<b>{html.escape(self.endpoint_id)}</b> batch: {self.done} of {self.total} done"
        )
        self.progress.value = self.done
        self.progress.bar_style = (
            "success"
            if self.done == self.total and not self._failures()
            else ("warning" if self._failures() else "")
        )
        badges = [f"{badge_html(state)} {count}" for state, count in self._ordered_counts().items()]
        pending = self.total - self.done
        if pending:
            badges.append(f"pending {pending}")
        self.summary.value = " &nbsp; ".join(badges)
        if self.note:
            self.note_view.value = f"<i>{html.escape(self.note)}</i>"
        self.note_view.layout.display = None if self.note else "none"
        return True

    def _failures(self) -> int:
        return sum(n for state, n in self.counts.items() if state != JobStatus.COMPLETED.value)

    def _ordered_counts(self) -> dict[str, int]:
        order = [s.value for s in JobStatus]
        return {
            state: self.counts[state]
            for state in sorted(self.counts, key=lambda s: order.index(s) if s in order else 99)
        }

    def plain_text(self) -> str:
        counts = " · ".join(f"{s} {n}" for s, n in self._ordered_counts().items())
        text = f"{self.endpoint_id} batch: {self.done}/{self.total} done"
        if counts:
            text += f" · {counts}"
        if self.note:
            text += f" ({self.note})"
        return text

    def __repr__(self) -> str:
        return f"BatchPanel({self.endpoint_id!r}, {self.done}/{self.total})"
