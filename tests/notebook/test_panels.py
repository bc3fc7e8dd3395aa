"""Panels by what they draw: badge, text, metrics, output, controls, HTML and text/plain."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from nbext.models import Health, JobResult, JobStatus, StreamChunk
from nbext.notebook.theme import STATE_COLOURS
from nbext.notebook.widgets import HealthPanel, JobPanel, MapPanel, Throttle
from nbext.notebook.widgets.job import DISPLAY_TEXT_CHARS


class FakeTime:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def shown_text(panel: JobPanel) -> str:
    match = re.search(r'<pre class="nbext-stream"[^>]*>(.*?)</pre>', panel.rendering().html, re.S)
    assert match is not None
    return html.unescape(match.group(1))


@pytest.mark.parametrize("state", list(JobStatus))
def test_each_state_has_its_own_badge_colour(state: JobStatus) -> None:
    panel = JobPanel("echo")
    panel.set_result(JobResult(id="j1", status=state))
    badge = re.search(r'<span class="nbext-job-badge">(.*?)</span></span>', panel.rendering().html)
    assert badge is not None
    assert f'data-state="{state.value}"' in badge.group(1)
    assert STATE_COLOURS[state.value] in badge.group(1)
    assert len(set(STATE_COLOURS.values())) == len(STATE_COLOURS)


def test_cancel_follows_the_state() -> None:
    panel = JobPanel("echo")
    panel.cancel_available = True  # as a follower whose kernel hears clicks says
    assert not panel.controls_shown()  # no job id yet
    panel.start("j1")
    assert panel.controls_shown()
    panel.set_result(JobResult(id="j1", status=JobStatus.IN_PROGRESS))
    assert panel.controls_shown()
    panel.cancel_available = False  # a blocking cell that cannot hear the click
    assert not panel.controls_shown()
    assert "interrupt the kernel (■) to cancel" in panel.rendering().plain  # said instead
    panel.cancel_available = True
    assert panel.controls_shown()
    panel.set_result(JobResult(id="j1", status=JobStatus.FAILED, error="boom"))
    assert not panel.controls_shown() and "interrupt" not in panel.rendering().html
    panel.restart()
    assert panel.state == "IN_QUEUE" and panel.error is None
    assert panel.controls_shown()


def test_stream_chunks_render_by_kind() -> None:
    panel = JobPanel("m", stream=True, throttle=Throttle(0))
    panel.start("j1")
    panel.add_chunk(StreamChunk(output="plain "))
    panel.add_chunk(StreamChunk(output={"text": "from text, "}))
    panel.add_chunk(StreamChunk(output={"text": ["a", " list"], "output_tokens": 2}))
    panel.add_chunk(StreamChunk(output={"progress": 0.5}))
    panel.add_chunk(StreamChunk(output=[1, 2]))
    panel.add_chunk(StreamChunk(output="more text"))
    expected = 'plain from text, a list\n{"progress": 0.5}\n[1, 2]\nmore text'
    assert panel.text == expected
    assert shown_text(panel) == expected
    assert panel.state == "IN_PROGRESS"  # a chunk means it runs


def test_metrics_line_shows_the_seed_fields_compactly() -> None:
    panel = JobPanel("m", stream=True, throttle=Throttle(0))
    metrics = {
        "input_tokens": 12,
        "output_tokens": 40,
        "avg_gen_throughput": 35.24,
        "avg_prompt_throughput": 120.0,
        "gpu_kv_cache_usage": 0.25,
        "scenario": "stream-text",
        "stream_index": 3,
        "custom": 7,
    }
    panel.add_chunk(StreamChunk(output="x", metrics=metrics))
    metrics = re.search(r'<div class="nbext-job-metrics">(.*?)</div>', panel.rendering().html)
    assert metrics is not None
    line = html.unescape(re.sub("<[^>]+>", "", metrics.group(1)))
    assert line == (
        "tokens in 12 / out 40 · gen 35.2 tok/s · prompt 120.0 tok/s · GPU KV 25% · "
        "stream-text · custom 7"
    )
    assert "\n" not in line


def test_output_is_compact_and_expandable() -> None:
    panel = JobPanel("echo")
    big = {"rows": list(range(200))}
    panel.set_result(JobResult(id="j1", status=JobStatus.COMPLETED, output=big))
    value = panel.rendering().html
    assert "<details" in value and "<summary>output: <code>" in value
    summary = re.search(r"<summary>output: <code>(.*?)</code>", value, re.S)
    assert summary is not None and "more characters" not in summary.group(1)
    assert "characters)" in summary.group(1)  # cut, and says by how much
    assert "199" in value  # the expanded view has it all


def test_null_output_is_still_shown() -> None:
    panel = JobPanel("echo")
    panel.set_result(JobResult.model_validate({"id": "j", "status": "COMPLETED", "output": None}))
    assert "output: null" in panel.rendering().plain


def test_text_plain_form() -> None:
    panel = JobPanel("stream-text", stream=True, throttle=Throttle(0))
    panel.start("job-1")
    panel.add_chunk(StreamChunk(output={"text": ["Hi"]}, metrics={"output_tokens": 1}))
    panel.set_result(
        JobResult(
            id="job-1",
            status=JobStatus.COMPLETED,
            delay_time=12,
            execution_time=1500,
            output=[{"text": ["Hi"]}],
        )
    )
    bundle = panel._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}  # no widget: the panel is output
    assert bundle["text/plain"] == (
        "stream-text /run job job-1: COMPLETED · queue 12 ms · run 1.50 s\n"
        "text: Hi\n"
        "metrics: tokens out 1\n"
        'output: [{"text": ["Hi"]}]'
    )


def test_redaction_masks_a_key_the_job_echoes() -> None:
    key = "rpa_SECRETSECRETSECRET1234"
    panel = JobPanel("echo", stream=True, redact=lambda t: t.replace(key, "rpa_…1234"))
    panel.add_chunk(StreamChunk(output=f"the key is {key}"))
    panel.set_result(JobResult(id="j", status=JobStatus.FAILED, error=f"bad key {key}"))
    panel.refresh(force=True)
    for text in (panel.rendering().html, panel.rendering().plain):
        assert key not in text and "rpa_…1234" in text


def test_css_classes_for_the_browser() -> None:
    panel = JobPanel("echo")
    panel.stream = True
    panel.add_chunk(StreamChunk(output="words"))
    page = panel.rendering().html
    for part in ("nbext-job-panel", "nbext-job-badge", "nbext-job-text", "nbext-hint"):
        assert f"{part}" in page, part
    assert "nbext-job-cancel" in panel.cancel_button._dom_classes
    assert panel.controls is not None and "nbext-controls" in panel.controls.box._dom_classes


def test_ten_thousand_chunks_make_a_bounded_number_of_updates() -> None:
    """At most one update per 0.1 s of (simulated) time, and the exact text at the end."""
    clock = FakeTime()
    panel = JobPanel("m", stream=True, throttle=Throttle(0.1, clock=clock))
    panel.start("j1")
    pieces = [f"w{i} " for i in range(10_000)]
    for piece in pieces:
        clock.now += 0.001  # 1000 chunks a second, for 10 s
        panel.add_chunk(StreamChunk(output=piece))
    panel.set_result(JobResult(id="j1", status=JobStatus.COMPLETED))
    assert 90 <= panel.renders <= 103
    assert panel.text == "".join(pieces)
    assert shown_text(panel) == "".join(pieces)


def test_very_long_text_shows_its_tail_and_keeps_all() -> None:
    panel = JobPanel("m", stream=True, throttle=Throttle(0))
    panel.add_chunk(StreamChunk(output="a" * DISPLAY_TEXT_CHARS))
    panel.add_chunk(StreamChunk(output="b" * 10))
    assert len(panel.text) == DISPLAY_TEXT_CHARS + 10
    shown = shown_text(panel)
    assert shown.startswith("… 10 earlier characters") and shown.endswith("b" * 10)


def test_throttle_lets_one_render_through_per_interval() -> None:
    clock = FakeTime()
    throttle = Throttle(0.1, clock=clock)
    assert throttle.ready()
    assert not throttle.ready()
    clock.now = 0.05
    assert throttle.wait_left() == pytest.approx(0.05)
    clock.now = 0.1
    assert throttle.ready()
    with pytest.raises(ValueError, match="interval must be >= 0"):
        Throttle(-1)


def health(in_queue: int = 0, running: int = 0) -> Health:
    return Health.model_validate(
        {
            "jobs": {
                "completed": 5,
                "failed": 1,
                "inProgress": running,
                "inQueue": in_queue,
                "retried": 0,
            },
            "workers": {"idle": 1, "running": running, "initializing": 2},
        }
    )


def test_health_panel_counts_chart_and_frame() -> None:
    panel = HealthPanel("echo", watching=True)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    panel.add(health(in_queue=3, running=1), at)
    page = panel.rendering().html
    assert "data-count='in queue'>3<" in page
    assert "workers initializing" in page
    assert "<svg" not in page  # one sample: nothing to draw yet
    panel.add(health(in_queue=1, running=2), at)
    assert panel.rendering().html.count("<polyline") == 5  # workers initializing too
    frame = panel.frame()
    assert list(frame.columns) == [
        "at",
        "in_queue",
        "in_progress",
        "completed",
        "failed",
        "retried",
        "idle",
        "running",
        "initializing",
    ]
    assert str(frame["at"].dtype) == "datetime64[us, UTC]" or "datetime64" in str(frame["at"].dtype)
    assert str(frame["in_queue"].dtype) == "Int64"
    assert frame["in_queue"].tolist() == [3, 1] and frame["initializing"].tolist() == [2, 2]
    text = panel._repr_mimebundle_()["text/plain"]
    assert "in_queue=1" in text and "initializing=2" in text and "2 samples" in text
    assert text.endswith("\n%runpod health echo --stop to stop watching")


def test_health_panel_close_stops_watching() -> None:
    panel = HealthPanel("echo", watching=True)
    panel.close()
    assert panel.stopped.is_set() and not panel.running
    panel.close()  # twice is harmless
    assert panel.stopped.is_set() and not panel.running


def test_map_panel_is_one_line_with_rate_and_eta() -> None:
    clock = FakeTime()
    panel = MapPanel("echo", 4, throttle=Throttle(0, clock=clock))
    hint = "interrupt the kernel (■) to stop the map and cancel its jobs in flight"
    assert panel.rendering().plain == (
        f"echo |{' ' * 20}| 0/4 · – jobs/s · 0:00 elapsed · ETA ?\n{hint}"
    )
    for state in ("COMPLETED", "FAILED", "COMPLETED"):
        clock.now += 1.0
        panel.add(state)
    # 3 done in 3 s: 1 job/s, so the last one is due in 1 s
    assert panel.rendering().plain == (
        "echo |███████████████     | 3/4 · COMPLETED 2 · FAILED 1 · 1.0 jobs/s · "
        f"0:03 elapsed · ETA 0:01\n{hint}"
    )
    found = re.search(r'<div class="nbext-map-line".*?</span></div>', panel.rendering().html)
    assert found is not None
    line = found.group(0)
    assert line.count("<div") == 1  # one line: name, bar, counts, rate, times
    assert 'aria-valuenow="3"' in line and 'aria-valuemax="4"' in line
    assert 'data-state="FAILED"' in line and "ETA 0:01" in line
    clock.now = 90.0
    panel.finish()
    assert panel.final
    rendering = panel.rendering()
    assert rendering.plain.endswith("COMPLETED 2 · FAILED 1 · 2.0 jobs/min · done in 1:30")
    assert "nbext-map-panel" in rendering.html and "ETA" not in rendering.html


# ---- static renderings and the theme ---------------------------------------------------


def finished_stream_panel() -> JobPanel:
    panel = JobPanel("stream-text", stream=True, throttle=Throttle(0))
    panel.start("job-1")
    panel.add_chunk(StreamChunk(output="first <words>, "))
    panel.add_chunk(StreamChunk(output="then the rest"))
    panel.retries = 2
    panel.set_result(
        JobResult(
            id="job-1",
            status=JobStatus.FAILED,
            delay_time=12,
            execution_time=1500,
            output={"partial": True},
            error="RuntimeError: out of memory",
        )
    )
    return panel


def test_final_rendering_is_self_contained_html_with_a_text_twin() -> None:
    panel = finished_stream_panel()
    rendering = panel.rendering()
    bundle = rendering._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    page = bundle["text/html"]
    for shown in (
        'data-state="FAILED"',
        "<b>stream-text</b>",
        "<code>job-1</code>",
        "queue 12 ms · run 1.50 s · retried 2×",
        "first &lt;words&gt;, then the rest",  # the whole streamed text, escaped
        "output: <code>{&quot;partial&quot;: true}</code>",
        "RuntimeError: out of memory",
    ):
        assert shown in page, shown
    assert "<script" not in page and "widget" not in page and "http" not in page
    assert bundle["text/plain"] == (
        "stream-text /run job job-1: FAILED · queue 12 ms · run 1.50 s · retried 2×\n"
        "text: first <words>, then the rest\n"
        'output: {"partial": true}\n'
        "error: RuntimeError: out of memory"
    )


def test_the_whole_streamed_text_is_kept_in_the_final_rendering() -> None:
    panel = JobPanel("m", stream=True, throttle=Throttle(0))
    panel.start("j")
    text = "x" * 250_000 + "THE END"
    panel.add_chunk(StreamChunk(output=text))
    assert "earlier characters" in panel.rendering().html  # live: the tail only
    assert text not in panel.rendering().html
    panel.set_result(JobResult(id="j", status=JobStatus.COMPLETED))
    assert text in panel.rendering().html


def test_every_colour_is_a_jupyterlab_theme_variable() -> None:
    """No colour of our own: each is var(--jp-…) (a fallback only for pages without it)."""
    panel = finished_stream_panel()
    health = HealthPanel("echo", watching=True)
    for n in range(3):
        health.add(Health.model_validate(sample_health(n)))
    mapped = MapPanel("echo", 3, throttle=Throttle(0))
    mapped.add("COMPLETED")
    mapped.add("CANCELLED")
    pages = [panel.rendering().html, health.rendering().html, mapped.rendering().html]
    colour = re.compile(r"(?:#[0-9a-fA-F]{3,8}\b|rgba?\(|\b(?:white|black|red|green)\b(?!-))")
    for page in pages:
        stripped = re.sub(r"var\(--jp-[a-z0-9-]+, [^)]+\)", "var()", page)
        assert not colour.search(stripped), stripped[:300]
        assert 'fill="#' not in page and 'stroke="#' not in page
    assert "fill:currentColor" in health.rendering().html  # chart text takes the page's


def sample_health(n: int) -> dict[str, object]:
    return {
        "jobs": {"completed": n, "failed": 0, "inProgress": 1, "inQueue": n, "retried": 0},
        "workers": {"idle": 1, "running": 1},
    }


def test_run_time_ticks_while_the_job_runs_at_most_ten_times_a_second() -> None:
    clock = FakeTime()
    panel = JobPanel("m", stream=True, throttle=Throttle(0.1, clock=clock))
    panel.start("j1")
    panel.set_result(JobResult(id="j1", status=JobStatus.IN_PROGRESS, execution_time=132))
    first = panel.rendering().plain
    assert "run 132 ms…" in first
    renders = panel.renders
    for _ in range(300):  # 3 s of 10 ms steps: the text may change at most 30 times
        clock.now += 0.01
        panel.tick()
    assert re.search(r"run 3\.[01]\d s…", panel.rendering().plain)
    assert 25 <= panel.renders - renders <= 31
    panel.set_result(JobResult(id="j1", status=JobStatus.COMPLETED, execution_time=3000))
    assert "run 3.00 s" in panel.rendering().plain and "…" not in panel.rendering().plain
    assert panel.tick() is False  # an ended job's time no longer moves
