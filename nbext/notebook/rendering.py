"""Every panel drawn as plain HTML and text, live and final: what a saved notebook keeps
(why: docs/architecture.md#notebook-modules; media:
docs/architecture.md#media-in-an-output).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbext import media
from nbext.client import JobCost

from .cost import cost_html, cost_text
from .display.table import Table
from .display.text import EXPANDED_CHARS, compact_json, format_ms, metrics_line, shorten, to_json
from .kernel import MEDIA
from .phases import phase_html, phase_plain
from .theme import ERROR, MUTED, badge_html, state_colour

if TYPE_CHECKING:
    from nbext.client import Phase

PLAIN_TEXT_CHARS = 2_000
"""How much streamed text (or error) the ``text/plain`` form of a job carries."""
STREAM_STYLE = "white-space:pre-wrap;margin:0.3em 0;max-height:24em;overflow:auto"
TABLE_ROWS = 100
"""Rows of an output's records shown as a table (the JSON preview has them all)."""


@dataclass(frozen=True)
class Rendering:
    """HTML and its ``text/plain`` twin; displayed as both, so every frontend has one."""

    html: str
    plain: str
    markdown: str | None = None
    """The content's Markdown source, where it has one (a chat's answer)."""
    provenance: Mapping[str, Any] | None = None
    """Where the content came from (``registry.provenance``): the output's ``nbext`` metadata."""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = {"text/html": self.html, "text/plain": self.plain}
        if self.markdown is not None:
            bundle["text/markdown"] = self.markdown
        return bundle if self.provenance is None else (bundle, {"nbext": self.provenance})

    def __repr__(self) -> str:
        return self.plain


# ---- job --------------------------------------------------------------------------


@dataclass(frozen=True)
class JobView:
    """One job as a panel shows it. Texts are already redacted."""

    endpoint_id: str
    via: str
    job_id: str | None
    state: str
    delay_ms: float | None = None
    run_ms: float | None = None
    running: bool = False
    """The run time is a live count (the job runs), not the service's final figure."""
    text: str | None = None
    """The whole streamed text (None: the panel does not show streamed text)."""
    metrics: Mapping[str, Any] = field(default_factory=dict)
    has_output: bool = False
    output: Any = None
    error: str | None = None
    note: str = ""
    retries: int = 0
    live: bool = False
    """The job is followed and its panel updates (not yet its final output)."""
    hint: str = ""
    """How to stop the job, said while it is live ('' once it ended)."""
    text_tail: int | None = None
    """Show only the text's last characters (a live panel: each redraw is a message)."""
    cost: JobCost | None = None
    phase: Phase | None = None


def timing_text(view: JobView) -> str:
    run = format_ms(view.run_ms) + ("…" if view.running and view.run_ms is not None else "")
    text = f"queue {format_ms(view.delay_ms)} · run {run}"
    if view.retries:
        text += f" · retried {view.retries}×"
    return text


def stream_html(text: str, limit: int | None = None) -> str:
    """Streamed text in a scrolling block; ``limit`` keeps only its tail (live panels)."""
    shown = text if limit is None else text[-limit:]
    lead = (
        f"… {len(text) - len(shown):,} earlier characters (all shown when the job ends)\n"
        if len(shown) < len(text)
        else ""
    )
    return f'<pre class="nbext-stream" style="{STREAM_STYLE}">{html.escape(lead + shown)}</pre>'


def output_html(output: Any, *, full_size_files: bool = True) -> str:
    """The output's media as a gallery, or its records as a table, above a JSON preview;
    ``full_size_files=False`` writes no full-size file (a streamed preview)."""
    found, readable = media_of(output)
    folder = MEDIA.full_size_dir if full_size_files else ""
    gallery = _gallery_of(output, found, folder).html if found else ""
    if isinstance(output, list) and output and all(isinstance(r, dict) for r in output):
        import pandas as pd

        gallery += Table(pd.DataFrame(output[:TABLE_ROWS]))._repr_html_()  # records
    summary = html.escape(compact_json(readable))
    full = html.escape(shorten(to_json(readable, indent=2), EXPANDED_CHARS))
    return (
        f"{gallery}"
        f'<details class="nbext-output-details"><summary>output: <code>{summary}'
        f'</code></summary><pre style="white-space:pre-wrap">{full}</pre></details>'
    )


_last_media: tuple[Any, media.MediaList, Any] | None = None
_last_gallery: tuple[Any, tuple[media.Limits, str], media.Rendered] | None = None


def media_of(output: Any) -> tuple[media.MediaList, Any]:
    """The media found in ``output``, and the output with each blob as a short tag.

    A live panel redraws the same output ten times a second, so the last answer is kept
    (with its output, so a reused id cannot fool the identity check).
    """
    global _last_media
    if _last_media is not None and _last_media[0] is output:
        return _last_media[1], _last_media[2]
    found = media.find(output)
    readable = media.preview(output) if found else output
    _last_media = (output, found, readable)
    return found, readable


def _gallery_of(output: Any, found: media.MediaList, folder: str) -> media.Rendered:
    """The gallery of ``output``'s media, kept like ``media_of``'s answer, so thumbnails
    and full-size files are made once, not at each redraw."""
    global _last_gallery
    settings = (MEDIA.limits, folder)
    if _last_gallery is not None and _last_gallery[0] is output and _last_gallery[1] == settings:
        return _last_gallery[2]
    failed: list[str] = []
    errors: list[str] = []

    def control(item: media.Media, limits: media.Limits) -> str:
        """An item's "show full size" kept small: a link to its file in ``folder``, or,
        without one, the text saying how to get it from Python."""
        if folder and item.data is not None:
            try:
                return media.link_control(item, media.write_beside(item, folder))
            except OSError as exc:
                failed.append(item.label)
                errors.append(exc.strerror or str(exc))
        return media.static_control(item, limits)

    rendered = media.gallery_html(found, MEDIA.limits, control)
    if failed:  # one line for the whole output, on stderr: the panel above it is intact
        print(
            f"nbext: could not write the full size of {', '.join(failed)} to "
            f"{folder}/ ({errors[-1]}); the notebook keeps the thumbnail "
            "(RunpodMagics.media_full_size_dir names another folder)",
            file=sys.stderr,
        )
    _last_gallery = (output, settings, rendered)
    return rendered


def note_html(note: str) -> str:
    return f'<i class="nbext-note">{html.escape(note)}</i>'


def hint_html(hint: str) -> str:
    """How to stop a live panel, under it (``nbext-hint``: the browser tests read it)."""
    style = f"color:{MUTED};font-size:0.85em"
    return f'<div class="nbext-hint" style="{style}">{html.escape(hint)}</div>'


def render_job(view: JobView, *, full_size_files: bool = True) -> Rendering:
    """A job's panel, live and final alike; its parts carry stable classes
    (``nbext-job-badge``...), so one selector finds a part before and after it turns static."""
    job = html.escape(view.job_id) if view.job_id else "…"
    parts = [
        '<div style="display:flex;align-items:center;gap:0.8em;flex-wrap:wrap">'
        f'<span class="nbext-job-badge">{badge_html(view.state)}</span>'
        f'<span class="nbext-job-title"><b>{html.escape(view.endpoint_id)}</b> '
        f"<span>{html.escape(view.via)} · job <code>{job}</code></span></span>"
        f'<span class="nbext-job-timing">{html.escape(timing_text(view))}</span>'
        + (f'<span class="nbext-job-cost">{cost_html(view.cost)}</span>' if view.cost else "")
        + "</div>"
    ]
    if view.phase is not None and (drawn_phase := phase_html(view.phase)):
        parts.append(drawn_phase)
    if view.text:
        parts.append(f'<div class="nbext-job-text">{stream_html(view.text, view.text_tail)}</div>')
    if view.text is not None and (metrics := metrics_line(view.metrics)):
        parts.append(f'<div class="nbext-job-metrics"><small>{html.escape(metrics)}</small></div>')
    if view.has_output:
        drawn = output_html(view.output, full_size_files=full_size_files)
        parts.append(f'<div class="nbext-job-output">{drawn}</div>')
    if view.error:
        style = f"color:{ERROR};white-space:pre-wrap;margin:0.3em 0"
        parts.append(
            f'<div class="nbext-job-error"><pre class="nbext-error" style="{style}">'
            f"{html.escape(view.error)}</pre></div>"
        )
    if view.note:
        parts.append(f'<div class="nbext-job-note">{note_html(view.note)}</div>')
    if view.hint:
        parts.append(hint_html(view.hint))
    return Rendering(
        panel_frame("nbext-job-panel", view.state, "".join(parts), live=view.live),
        job_plain(view),
    )


def job_plain(view: JobView) -> str:
    job = view.job_id or "(no id yet)"
    cost = f" · {cost_text(view.cost)}" if view.cost else ""
    lines = [f"{view.endpoint_id} {view.via} job {job}: {view.state} · {timing_text(view)}{cost}"]
    if view.phase is not None and (phase := phase_plain(view.phase)):
        lines.append(phase)
    if view.text:
        cut = tail if view.text_tail is not None else shorten
        lines.append("text: " + cut(view.text, PLAIN_TEXT_CHARS))
    if view.text is not None and (line := metrics_line(view.metrics)):
        lines.append("metrics: " + line)
    if view.has_output:
        lines.append("output: " + compact_json(media_of(view.output)[1]))
    if view.error:
        lines.append("error: " + shorten(view.error, PLAIN_TEXT_CHARS))
    if view.note:
        lines.append(view.note)
    if view.hint:
        lines.append(view.hint)
    return "\n".join(lines)


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, saying how many came before."""
    if len(text) <= limit:
        return text
    return f"(+{len(text) - limit:,} earlier characters) …{text[-limit:]}"


def panel_frame(kind: str, state: str, body: str, *, live: bool) -> str:
    """The panel's box: ``nbext-live`` while it updates, ``nbext-static`` once final."""
    mode = "live" if live else "static"
    return (
        f'<div class="nbext-{mode} {kind}" data-state="{html.escape(state)}" '
        f'style="padding:0.3em 0;line-height:1.5">{body}</div>'
    )


# ---- map --------------------------------------------------------------------------


@dataclass(frozen=True)
class MapView:
    """A map's jobs: counts by state, how long so far, and how it ended."""

    endpoint_id: str
    total: int
    counts: Mapping[str, int]
    """Finished jobs by final state, in the order to show them."""
    elapsed: float
    finished: bool = False
    note: str = ""
    hint: str = ""
    spent: str = ""
    """What its finished jobs cost so far (``cost.total_text``; '' while none is known)."""

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def rate(self) -> float | None:
        """Jobs finished per second (None before the first)."""
        return self.done / self.elapsed if self.done and self.elapsed > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds until the rest is done at the rate so far (None: not known yet)."""
        rate = self.rate
        if rate is None or self.finished:
            return None
        return (self.total - self.done) / rate


def format_seconds(seconds: float | None) -> str:
    """``0:07``, ``12:03``, ``1:02:03`` (as progress bars write durations); ``?`` unknown."""
    if seconds is None:
        return "?"
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def map_counts_text(view: MapView) -> str:
    """``7/10 · COMPLETED 6 · FAILED 1 · spent $0.021 on 7 jobs (estimate) · 3.2 jobs/s ·
    0:02 elapsed · ETA 0:01``."""
    parts = [f"{view.done}/{view.total}"]
    parts += [f"{state} {n}" for state, n in view.counts.items()]
    if view.spent:
        parts.append(view.spent)
    parts.append(rate_text(view.rate))
    if view.finished:
        parts.append(f"done in {format_seconds(view.elapsed)}")
    else:
        parts.append(f"{format_seconds(view.elapsed)} elapsed · ETA {format_seconds(view.eta)}")
    return " · ".join(parts)


def rate_text(rate: float | None) -> str:
    """Jobs per second, or per minute when under one every ten seconds."""
    if rate is None:
        return "– jobs/s"
    return f"{rate:.1f} jobs/s" if rate >= 0.1 else f"{rate * 60:.1f} jobs/min"


TEXT_BAR = 20
"""Characters of the ``text/plain`` progress bar."""


def map_text_bar(view: MapView) -> str:
    """``|██████▌     |``: the bar in text, to an eighth of a character."""
    eighths = round(TEXT_BAR * 8 * view.done / max(view.total, 1))
    full, part = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return f"|{bar.ljust(TEXT_BAR)}|"


def map_bar_html(view: MapView) -> str:
    """The bar: one segment per final state, in its colour (chosen to stand out from the
    page in every theme: the unfilled part is the page itself), in an outline."""
    segments = "".join(
        f'<span data-state="{html.escape(state)}" style="display:inline-block;height:100%;'
        f'width:{100 * n / max(view.total, 1):.3f}%;background:{state_colour(state)}"></span>'
        for state, n in view.counts.items()
        if n
    )
    return (
        f'<span class="nbext-map-bar" role="progressbar" aria-valuemin="0" '
        f'aria-valuemax="{view.total}" aria-valuenow="{view.done}" style="display:inline-flex;'
        f"width:14em;height:0.8em;border:1px solid {MUTED};"
        f'border-radius:2px;overflow:hidden;vertical-align:middle">{segments}</span>'
    )


def map_line_html(view: MapView) -> str:
    return (
        f'<div class="nbext-map-line" style="display:flex;align-items:center;gap:0.6em;'
        f'flex-wrap:wrap"><b>{html.escape(view.endpoint_id)}</b>{map_bar_html(view)}'
        f'<span class="nbext-map-counts">{html.escape(map_counts_text(view))}</span></div>'
    )


def render_map(view: MapView) -> Rendering:
    body = map_line_html(view)
    if view.note:
        body += f"<div>{note_html(view.note)}</div>"
    if view.hint:
        body += hint_html(view.hint)
    state = "done" if view.finished else "running"
    return Rendering(
        panel_frame("nbext-map-panel", state, body, live=not view.finished), map_plain(view)
    )


def map_plain(view: MapView) -> str:
    text = f"{view.endpoint_id} {map_text_bar(view)} {map_counts_text(view)}"
    if view.note:
        text += f" ({view.note})"
    if view.hint:
        text += f"\n{view.hint}"
    return text
