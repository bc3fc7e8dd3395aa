"""The health panel: an endpoint's job and worker counts, and while watched their history
as an inline SVG chart (nothing to install in the browser).
"""

from __future__ import annotations

import dataclasses
import html
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nbext.models import Health

from ..display.frames import to_frame
from ..display.specs import HEALTH
from ..rendering import Rendering, hint_html, panel_frame
from ..theme import BORDER, ERROR, MUTED, SERIES_COLOURS
from .live import StoppablePanel

if TYPE_CHECKING:
    import pandas as pd

HISTORY = 120
"""Samples kept for the chart (two minutes at one a second)."""
SERIES: tuple[tuple[str, str, str], ...] = tuple(
    (key, label, SERIES_COLOURS[key])
    for key, label in (
        ("in_queue", "in queue"),
        ("in_progress", "in progress"),
        ("running", "workers running"),
        ("idle", "workers idle"),
        ("initializing", "starting"),
    )
)
JOB_COUNTS = {"completed", "failed", "retried", "in_queue", "in_progress"}


@dataclass(frozen=True)
class Sample:
    """One health answer, flattened for the chart and the table."""

    at: datetime
    completed: int
    failed: int
    retried: int
    in_queue: int
    in_progress: int
    idle: int
    running: int
    initializing: int
    """Workers started and not serving yet: worker processes loading (0 in-process)."""
    extra_workers: Mapping[str, Any]

    @classmethod
    def of(cls, health: Health, at: datetime | None = None) -> Sample:
        workers = health.workers
        # unhealthy, throttled...: shown when there are any (worker processes fail pings);
        # ``ready`` repeats idle + running, so it is left out.
        usual = {"idle", "running", "ready", "initializing"}
        extra = {k: v for k, v in workers.model_dump(exclude=usual).items() if v}
        return cls(
            at=at or datetime.now(UTC),
            **health.jobs.model_dump(include=JOB_COUNTS),
            **workers.model_dump(include={"idle", "running", "initializing"}),
            extra_workers={**extra, **(workers.model_extra or {})},
        )


def chart_svg(samples: list[Sample], width: int = 420, height: int = 110) -> str:
    """A line per series over the samples; the y axis starts at 0 and fits the peak.
    Colours go in ``style`` attributes, so the theme's CSS variables apply."""
    if len(samples) < 2:
        return ""
    peak = max(1, *(getattr(s, key) for s in samples for key, _, _ in SERIES))
    left, right, top, bottom = 28, 8, 8, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / (len(samples) - 1)
    parts = [
        f'<svg class="nbext-health-chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" '
        'style="font:10px sans-serif;fill:currentColor">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'style="stroke:{MUTED}"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{peak}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    for n, (key, label, colour) in enumerate(SERIES):
        points = " ".join(
            f"{left + i * step:.1f},{top + plot_h - getattr(s, key) / peak * plot_h:.1f}"
            for i, s in enumerate(samples)
        )
        parts.append(
            f'<polyline data-series="{key}" style="fill:none;stroke:{colour};'
            f'stroke-width:1.8" points="{points}"/>'
        )
        x = left + n * (plot_w / len(SERIES))
        parts.append(
            f'<rect x="{x:.1f}" y="{height - 10}" width="8" height="8" style="fill:{colour}"/>'
            f'<text x="{x + 11:.1f}" y="{height - 2}">{html.escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


class HealthPanel(StoppablePanel):
    """Counts of one endpoint's jobs and workers; a chart of them while watching."""

    def __init__(self, endpoint_id: str, *, watching: bool = False) -> None:
        self.endpoint_id = endpoint_id
        self.samples: deque[Sample] = deque(maxlen=HISTORY)
        self.error: str | None = None
        hint = f"%runpod health {endpoint_id} --stop to stop watching"
        super().__init__(
            running=watching, button="Stop watching", css="nbext-health-stop", hint=hint
        )

    @property
    def latest(self) -> Sample | None:
        return self.samples[-1] if self.samples else None

    def add(self, health: Health, at: datetime | None = None) -> Sample:
        sample = Sample.of(health, at)
        self.samples.append(sample)
        self.error = None
        self.draw()  # a sample comes at most every MIN_WATCH seconds
        return sample

    def frame(self) -> pd.DataFrame:
        """The samples so far as a DataFrame (one row per sample, oldest first)."""
        return to_frame([dataclasses.asdict(s) for s in self.samples], HEALTH)

    def set_error(self, error: str) -> None:
        self.error = error
        self.draw()

    def cells(self) -> list[tuple[str, int]]:
        """The latest counts, ``(label, value)`` in the order to show them."""
        sample = self.latest
        if sample is None:
            return []
        return [
            ("in queue", sample.in_queue),
            ("in progress", sample.in_progress),
            ("completed", sample.completed),
            ("failed", sample.failed),
            ("retried", sample.retried),
            ("workers idle", sample.idle),
            ("workers running", sample.running),
            *((("workers initializing", sample.initializing),) if sample.initializing else ()),
            *((f"workers {k}", v) for k, v in sorted(sample.extra_workers.items())),
        ]

    def counts_html(self) -> str:
        cells = self.cells()
        if not cells:
            body = "<i>no answer yet</i>"
        else:
            cell = f"padding:0.1em 0.6em;border-bottom:1px solid {BORDER}"
            head = "".join(f"<th style='{cell}'>{html.escape(k)}</th>" for k, _ in cells)
            row = "".join(
                f"<td style='text-align:center' data-count='{html.escape(k)}'>{v}</td>"
                for k, v in cells
            )
            body = f"<table><tr>{head}</tr><tr>{row}</tr></table>"
        if self.error:
            body += (
                f'<div class="nbext-error" style="color:{ERROR}">{html.escape(self.error)}</div>'
            )
        return body

    def rendering(self) -> Rendering:
        sample = self.latest
        at = sample.at.strftime("%H:%M:%S UTC") if sample is not None else "…"
        mode = "watching" if self.running else ("watched" if len(self.samples) > 1 else "snapshot")
        body = (
            f'<div class="nbext-health-title"><b>{html.escape(self.endpoint_id)}</b> health '
            f"<span>{mode} · {html.escape(at)}</span></div>"
            f'<div class="nbext-health-counts">{self.counts_html()}</div>'
        )
        if chart := chart_svg(list(self.samples)):
            body += f"<div>{chart}</div>"
        if self.running and self.hint:
            body += hint_html(self.hint)
        state = "watching" if self.running else "stopped"
        frame = panel_frame("nbext-health-panel", state, body, live=self.running)
        return Rendering(frame, self.plain_text())

    def plain_text(self) -> str:
        """The counts as one line of text (and, while watching, how to stop)."""
        sample = self.latest
        if sample is None:
            text = f"{self.endpoint_id} health: no answer yet"
        else:
            starting = {"initializing": sample.initializing} if sample.initializing else {}
            extra = "".join(
                f" {k}={v}" for k, v in sorted({**starting, **sample.extra_workers}.items())
            )
            text = (
                f"{self.endpoint_id} health at {sample.at:%H:%M:%S} UTC: jobs in_queue="
                f"{sample.in_queue} in_progress={sample.in_progress} "
                f"completed={sample.completed} failed={sample.failed} "
                f"retried={sample.retried}; workers idle={sample.idle} "
                f"running={sample.running}{extra}"
            )
            if len(self.samples) > 1:
                text += f" ({len(self.samples)} samples watched)"
        if self.running:
            text += f"\n{self.hint}"
        return text

    def __repr__(self) -> str:
        return f"HealthPanel({self.endpoint_id!r}, samples={len(self.samples)})"
