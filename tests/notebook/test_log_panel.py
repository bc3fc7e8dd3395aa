"""The log panel: bounded, drawn from one view, and its static form for saved notebooks."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from traitlets import TraitError

from nbext.notebook.static_logs import LogLine, LogView, render_logs
from nbext.notebook.widgets import Throttle
from nbext.notebook.widgets.logs import LINE_CHARS, LINE_END_CHARS, MAX_SHOWN, LogPanel

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def line(n: int, worker: str | None = None, source: str = "container") -> LogLine:
    return LogLine(ts=T0.replace(second=n % 60), source=source, line=f"line {n}", worker=worker)


def test_panel_keeps_only_the_last_max_lines() -> None:
    panel = LogPanel("pod", "p1", following=True, max_lines=3)
    panel.add(line(n) for n in range(5))
    assert [x.line for x in panel.lines] == ["line 2", "line 3", "line 4"]
    assert panel.dropped == 2
    assert "… showing the last 3 lines; 2 earlier lines not kept" in panel.plain_text()
    panel.max_lines = 2  # a trait: lowering it drops the oldest at once
    assert [x.line for x in panel.lines] == ["line 3", "line 4"] and panel.dropped == 3
    with pytest.raises(TraitError, match=r"'max_lines' trait .* should not be less than 1"):
        panel.max_lines = 0
    frame = panel.frame()
    assert list(frame.columns) == ["ts", "worker", "source", "line"]
    assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype)
    panel.close()


def test_a_flood_of_long_lines_is_held_to_the_size_bound_and_says_what_it_shows() -> None:
    """1,000 lines of 1 MB of ``<`` (six times longer once escaped): what the panel draws
    and what the saved notebook keeps stay within the bound, and say so."""
    panel = LogPanel("endpoint", "ep")
    flood = "<" * 1_000_000
    panel.add(LogLine(T0, "container", flood, "w-1") for _ in range(1000))
    shown = panel.lines
    assert shown[-1].line == "<" * (LINE_CHARS - LINE_END_CHARS) + (
        f" … [{1_000_000 - LINE_CHARS:,} characters not shown] … " + "<" * LINE_END_CHARS
    )
    assert panel.dropped == 1000 - len(shown) > 0
    rendering = panel.rendering()
    assert len(rendering.html) < MAX_SHOWN + 5000
    assert len(rendering.plain) < MAX_SHOWN
    note = f"… showing the last {len(shown):,} lines; {panel.dropped:,} earlier lines not kept"
    assert note in rendering.plain and note in rendering.html
    panel.add([line(1)])  # a short line after them: the newest is always kept
    assert panel.lines[-1] == line(1)
    panel.close()


def test_a_single_line_longer_than_the_bound_is_shown_by_its_start_and_its_end() -> None:
    panel = LogPanel("pod", "p1")
    panel.add([LogLine(T0, "container", "x" * (10 * MAX_SHOWN) + " [the end]")])
    (shown,) = panel.lines
    assert shown.line.startswith("x" * (LINE_CHARS - LINE_END_CHARS) + " … [1,998,010 characters")
    assert shown.line.endswith("characters not shown] … " + "x" * 190 + " [the end]")
    assert panel.dropped == 0
    panel.close()


def test_static_rendering_tags_workers_mutes_system_lines_and_escapes() -> None:
    view = LogView(
        kind="endpoint",
        target="ep",
        lines=(line(1, "w-1", "system"), LogLine(T0, "container", "<b>&</b>", "w-2")),
        workers=2,
        dropped=4,
    )
    rendering = render_logs(view)
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in rendering.html and "<b>&</b>" not in rendering.html
    assert 'data-state="stopped"' in rendering.html and "<script" not in rendering.html
    assert rendering.plain.splitlines() == [
        "endpoint ep: 2 lines from 2 workers",
        "… showing the last 2 lines; 4 earlier lines not kept",
        "09:00:01 [w-1] (system) line 1",
        "09:00:00 [w-2] <b>&</b>",
    ]


def test_lines_are_drawn_at_most_once_per_interval_and_none_is_left_undrawn() -> None:
    now = [0.0]
    panel = LogPanel("pod", "p1", following=True, throttle=Throttle(0.1, clock=lambda: now[0]))
    panel.add([line(1)])
    assert "line 1" in panel.body.value  # the first line draws at once
    panel.add([line(2)])
    assert "line 2" not in panel.body.value  # within the interval: held
    panel.flush()
    assert "line 2" in panel.body.value
    drawn = panel.body.value
    panel.body.value = "untouched"
    panel.flush()  # nothing held: nothing drawn
    assert panel.body.value == "untouched"
    panel.body.value = drawn
    now[0] += 0.2
    panel.add([line(3)])
    assert "line 3" in panel.body.value
    panel.close()
