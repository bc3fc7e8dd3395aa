"""The log panel: bounded, drawn from one view, and its static form for saved notebooks."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest

from nbext.notebook.log_rendering import LogLine, LogView, render_logs
from nbext.notebook.widgets import Throttle
from nbext.notebook.widgets.logs import (
    LINE_CHARS,
    LINE_END_CHARS,
    LIVE_SHOWN,
    MAX_SHOWN,
    LogPanel,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def line(n: int, worker: str | None = None, source: str = "container") -> LogLine:
    return LogLine(ts=T0.replace(second=n % 60), source=source, line=f"line {n}", worker=worker)


def test_panel_keeps_only_the_last_max_lines() -> None:
    panel = LogPanel("pod", "p1", following=True, max_lines=3)
    panel.add(line(n) for n in range(5))
    assert [x.line for x in panel.lines] == ["line 2", "line 3", "line 4"]
    assert panel.dropped == 2
    assert "… showing the last 3 lines; 2 earlier lines not kept" in panel.rendering().plain
    panel.max_lines = 2  # lowering it drops the oldest at once
    assert [x.line for x in panel.lines] == ["line 3", "line 4"] and panel.dropped == 3
    with pytest.raises(ValueError, match=r"max_lines must be at least 1, got 0"):
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
    assert "line 1" in drawn(panel)  # the first line draws at once
    panel.add([line(2)])
    assert "line 2" not in drawn(panel)  # within the interval: held
    panel.flush()
    assert "line 2" in drawn(panel)
    renders = panel.renders
    panel.flush()  # nothing held: nothing drawn
    assert panel.renders == renders
    now[0] += 0.2
    panel.add([line(3)])
    assert "line 3" in drawn(panel)
    panel.close()


def drawn(panel: LogPanel) -> str:
    """The HTML the panel's output shows now."""
    assert panel.drawn is not None
    return panel.drawn.html


def test_a_followed_log_shows_only_its_newest_lines_live_and_all_it_kept_once_stopped() -> None:
    """Each live redraw is a message to the page: it holds at most ``LIVE_SHOWN`` of lines,
    says how many earlier ones wait, and how to stop following without the button."""
    panel = LogPanel("pod", "p1", following=True, throttle=Throttle(0))
    panel.add(LogLine(T0, "container", f"{n:04d} " + "x" * 1000) for n in range(100))
    live = drawn(panel)
    assert len(live) < LIVE_SHOWN + 5000
    assert "0099 " in live and "0000 " not in live
    assert "earlier shown when following stops" in live
    assert "%runpod logs --stop p1 to stop following" in panel.rendering().plain
    panel.stop()
    final = drawn(panel)
    assert "0000 " in final and "0099 " in final and "--stop" not in final
