"""``%runpod health``: a snapshot, and ``--watch`` in the background until the panel closes."""

from __future__ import annotations

import asyncio

import pytest

from nbext.notebook.widgets import HealthPanel

from .conftest import Notebook
from .test_job_magic import usage_error


def test_snapshot(nb: Notebook) -> None:
    nb.run('%%runpod_job echo\n{"a": 1}')
    nb.run('%%runpod_job fail --no-raise\n{"a": 1}')
    nb.run("%runpod health echo -o h")
    panel = nb.shell.user_ns["h"]
    assert isinstance(panel, HealthPanel)
    assert panel.latest is not None
    assert panel.latest.completed == 1 and panel.latest.failed == 0
    assert panel.latest.idle + panel.latest.running >= 1
    assert not panel.watching and panel.stop_button.layout.display == "none"
    assert "echo health" in nb.last_plain() and "completed=1" in nb.last_plain()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod health nowhere", "endpoint 'nowhere' not found"),
        ("%runpod health echo --watch 0.01", "--watch must be at least 0.1 seconds"),
        ("%runpod health echo --watch 1", "--watch updates the panel from the kernel's event loop"),
        ("%runpod health", "the following arguments are required: endpoint"),
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
    assert panel.watching and panel.task is not None
    assert panel.stop_button.layout.display is None
    nb.conn.client.endpoint("held").run({})  # the queue grows while we watch
    await nb.auntil(
        lambda: len(panel.samples) >= 3 and panel.samples[-1].in_queue == 1,
        "samples showing the queued job",
    )
    assert "<polyline" in panel.chart.value and panel.chart.layout.display is None
    assert panel.frame()["in_queue"].iloc[-1] == 1
    panel.close()
    await asyncio.wait_for(panel.task, 5)
    assert not panel.watching
    count = len(panel.samples)
    await asyncio.sleep(0)
    assert len(panel.samples) == count
    assert "samples watched" in nb.last_plain()
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_stop_button_stops_watching(nb: Notebook) -> None:
    nb.run("%runpod health echo --watch 0.1 -o h")
    panel: HealthPanel = nb.shell.user_ns["h"]
    await nb.auntil(lambda: len(panel.samples) >= 2, "a second sample")
    panel.stop_button.click()
    await asyncio.wait_for(panel.task, 5)  # type: ignore[arg-type]
    assert panel.stop_button.layout.display == "none"
    await nb.conn.aclose()
