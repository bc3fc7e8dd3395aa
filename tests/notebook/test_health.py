"""``%runpod health``: a snapshot, and ``--watch`` in the background until the panel closes."""

from __future__ import annotations

import asyncio

import pytest

from nbext.notebook.widgets import HealthPanel

from .conftest import Notebook
from .test_job_magic import usage_error

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_snapshot(nb: Notebook) -> None:
    nb.run('%%runpod_job echo\n{"a": 1}')
    nb.run('%%runpod_job fail --no-raise\n{"a": 1}')
    nb.run("%runpod health echo -o h")
    panel = nb.shell.user_ns["h"]
    assert isinstance(panel, HealthPanel)
    assert panel.latest is not None
    assert panel.latest.completed == 1 and panel.latest.failed == 0
    assert panel.latest.idle + panel.latest.running >= 1
    assert not panel.running
    # A snapshot is final at once: one output of plain HTML and text, no controls.
    (snapshot,) = nb.outputs()[-1:]
    assert set(snapshot[-1]) == {"text/html", "text/plain"}
    assert "echo health" in nb.last_plain() and "completed=1" in nb.last_plain()
    assert "--stop" not in nb.last_plain()
    assert not any(WIDGET in d["data"] for d in nb.displays)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod health nowhere", "endpoint 'nowhere' not found"),
        ("%runpod health echo --watch 0.01", "--watch must be at least 0.1 seconds"),
        ("%runpod health echo --watch 1", "--watch updates the panel from the kernel's event loop"),
        ("%runpod health", "health needs an endpoint id (or --stop)"),
        ("%runpod health echo --stop --watch 1", "--stop takes only the ENDPOINT"),
    ],
)
def test_mistakes(
    nb: Notebook, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    assert expected in usage_error(nb, line, capsys)


@pytest.mark.anyio
async def test_watch_charts_history_and_stops_when_closed(nb: Notebook) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    nb.run("%runpod health held --watch 0.1 -o h")
    panel: HealthPanel = nb.shell.user_ns["h"]
    assert panel.running and panel.task is not None
    controls = nb.outputs()[-1]
    assert WIDGET in controls[-1]  # the Stop button
    assert controls[-1]["text/plain"] == "%runpod health held --stop to stop watching"
    nb.conn.client.endpoint("held").run({})  # the queue grows while we watch
    await nb.auntil(
        lambda: len(panel.samples) >= 3 and panel.samples[-1].in_queue == 1,
        "samples showing the queued job",
    )
    assert "<polyline" in nb.outputs()[-2][-1]["text/html"]  # the chart, as HTML
    assert panel.frame()["in_queue"].iloc[-1] == 1
    panel.close()
    await asyncio.wait_for(panel.task, 5)
    assert not panel.running
    count = len(panel.samples)
    await asyncio.sleep(0)
    assert len(panel.samples) == count
    assert "samples watched" in nb.last_plain() and "--stop" not in nb.last_plain()
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_stop_button_stops_watching(nb: Notebook) -> None:
    nb.run("%runpod health echo --watch 0.1 -o h")
    panel: HealthPanel = nb.shell.user_ns["h"]
    await nb.auntil(lambda: len(panel.samples) >= 2, "a second sample")
    panel.stop_button.click()
    await asyncio.wait_for(panel.task, 5)  # type: ignore[arg-type]
    assert nb.outputs()[-1][-1] == {"text/plain": ""}  # the button's output is emptied
    assert panel.stop_button.comm is None
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_stop_option_stops_a_watch_where_no_button_can_be_drawn(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the widget manager is missing, the watch is stopped by the command its
    text names; the panel turns static with the samples it had."""
    nb.run("%runpod health echo --watch 0.1 -o h")
    panel: HealthPanel = nb.shell.user_ns["h"]
    await nb.auntil(lambda: len(panel.samples) >= 2, "a second sample")
    content = nb.outputs()[-2]
    assert "%runpod health echo --stop to stop watching" in content[-1]["text/html"]
    nb.run("%runpod health --stop echo")
    await asyncio.wait_for(panel.task, 5)  # type: ignore[arg-type]
    assert "stopped 1 health watch of echo" in capsys.readouterr().out
    assert not panel.running
    final = nb.outputs()[-2][-1]
    assert 'data-state="stopped"' in final["text/html"] and "--stop" not in final["text/plain"]
    nb.run("%runpod health --stop")
    assert "stopped 0 health watches" in capsys.readouterr().out
    await nb.conn.aclose()
