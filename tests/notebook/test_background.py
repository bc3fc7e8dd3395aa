"""``--background``: the cell returns at once, a task on the running loop keeps the panel
current, and its buttons act on the job while other cells run.

Each test is async, so a loop runs while the magic does, as in a kernel.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from nbext.models import JobStatus

from .conftest import Notebook, flaky_handler

pytestmark = pytest.mark.anyio


async def advance(nb: Notebook, seconds: float) -> None:
    """Move the emulator's fake clock (its loop is another thread's)."""
    await anyio.to_thread.run_sync(nb.emu.advance, seconds)


@pytest.mark.parametrize("fake_clock", [True])
async def test_background_returns_at_once_and_the_panel_follows(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --background -o out\n{"seconds": 30}')
    panel = nb.panel()
    assert panel.task is not None and not panel.task.done()
    assert nb.shell.user_ns["out"] is None
    nb.run("other = 40 + 2")  # the notebook is free meanwhile
    assert nb.shell.user_ns["other"] == 42
    job_id = nb.record().id
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the panel to show IN_PROGRESS")
    # An idle kernel ignores an interrupt: the panel names the command that cancels,
    # and so does the text shown where the Cancel button cannot be drawn.
    hint = f"%runpod cancel {job_id} to cancel"
    content, controls = nb.outputs()
    assert hint in content[-1]["text/plain"] and hint in content[-1]["text/html"]
    assert controls[-1]["text/plain"] == hint
    assert "application/vnd.jupyter.widget-view+json" in controls[-1]
    await advance(nb, 30)
    result = await asyncio.wait_for(panel.task, 10)
    assert result is not None and result.status is JobStatus.COMPLETED
    assert panel.state == "COMPLETED"
    assert nb.shell.user_ns["out"] == {"slept": 30}
    assert nb.job(job_id).status is JobStatus.COMPLETED
    assert "COMPLETED" in nb.last_plain() and nb.displays[-1]["update"]
    await nb.conn.aclose()


@pytest.mark.parametrize("fake_clock", [True])
async def test_cancel_button_in_background_mode(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --background\n{"seconds": 100}')
    panel = nb.panel()
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the job to run")
    assert panel.controls_shown()
    panel.cancel_button.click()
    assert panel.task is not None
    await asyncio.wait_for(panel.task, 10)
    assert panel.state == "CANCELLED"
    assert nb.job(nb.record().id).status is JobStatus.CANCELLED
    assert nb.outputs()[1][-1] == {"text/plain": ""}  # the button's output is emptied
    assert panel.cancel_button.comm is None
    await nb.conn.aclose()


async def test_background_stream_shows_text_before_the_job_ends(nb: Notebook) -> None:
    import threading

    gate = threading.Event()

    def talker(job: dict[str, Any]) -> Any:
        yield "first words"
        gate.wait(10)
        yield ", then the rest"

    nb.deploy(talker, "talker")
    nb.run("%%runpod_job talker --background --stream -o out\n{}")
    panel = nb.panel()
    await nb.auntil(lambda: "first words" in nb.last_plain(), "the first chunk on screen")
    assert panel.state == "IN_PROGRESS"
    gate.set()
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    assert panel.text == "first words, then the rest"
    assert "first words, then the rest" in nb.outputs()[0][-1]["text/html"]
    assert nb.shell.user_ns["out"] == ["first words", ", then the rest"]
    await nb.conn.aclose()


async def test_a_background_panel_follows_a_retry_from_another_cell(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --background -o out\n{}")
    panel = nb.panel()
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    assert panel.state == "FAILED"
    nb.run("%runpod retry last")  # blocking, from another cell
    assert panel.state == "COMPLETED" and panel.retries == 1
    assert "nbext-job-error" not in panel.rendering().html
    assert nb.shell.user_ns["out"] == {"attempt": 2}
    health = nb.conn.client.endpoint("flaky").health()
    assert health.jobs.retried == 1
    await nb.conn.aclose()


async def test_a_background_retry_is_live_in_its_own_output_then_static(nb: Notebook) -> None:
    """``%runpod retry --background``: the new panel is plain output that moves while the
    job runs, names the command that cancels it, and ends static."""
    import threading

    gate, calls = threading.Event(), []

    def fails_then_waits(job: dict[str, Any]) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first try fails")
        gate.wait(10)
        return {"attempt": len(calls)}

    nb.deploy(fails_then_waits, "flaky")
    nb.run("%%runpod_job flaky --no-raise\n{}")
    record = nb.record()
    nb.displays.clear()
    nb.run(f"%runpod retry {record.id} --background")
    panel = nb.panel()
    assert panel.via == "retry" and panel.task is not None
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the retried job to run")
    await nb.auntil(lambda: "to cancel" in nb.last_plain(), "the live hint")
    hint = f"%runpod cancel {record.id} to cancel"
    (first,) = [o for o in nb.outputs() if " /run job " in o[0]["text/plain"]]
    (content,) = [o for o in nb.outputs() if " retry job " in o[0]["text/plain"]]
    assert all(set(bundle) == {"text/html", "text/plain"} for bundle in content)
    assert 'class="nbext-live nbext-job-panel"' in content[-1]["text/html"]
    # The first cell's panel follows the retry too, live again, naming the same command.
    assert 'class="nbext-live nbext-job-panel"' in first[-1]["text/html"]
    assert hint in first[-1]["text/plain"]
    gate.set()
    await asyncio.wait_for(panel.task, 10)
    (final,) = [o[-1] for o in nb.outputs() if " retry job " in o[0]["text/plain"]]
    assert 'class="nbext-static nbext-job-panel" data-state="COMPLETED"' in final["text/html"]
    assert "retried 1×" in final["text/plain"] and "to cancel" not in final["text/plain"]
    await nb.conn.aclose()


async def test_a_cancel_that_loses_the_race_shows_the_new_state(nb: Notebook) -> None:
    nb.run('%%runpod_job echo --background\n{"x": 1}')
    panel = nb.panel()
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    follower = nb.record().follower
    assert follower is not None
    await follower.cancel_async()  # the job had already completed: the service says 409
    assert panel.state == "COMPLETED"
    assert panel.note == "" and panel.error is None
    await nb.conn.aclose()


async def test_background_job_removed_by_purge_says_so(nb: Notebook) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")  # no worker: jobs stay queued
    nb.run("%%runpod_job held --background\n{}")
    panel = nb.panel()
    nb.run("%runpod purge held")
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    assert panel.state == "REMOVED"
    assert "no longer knows" in nb.outputs()[0][-1]["text/html"]
    await nb.conn.aclose()


@pytest.mark.parametrize("fake_clock", [True])
async def test_wait_background_waits_for_every_background_job(nb: Notebook) -> None:
    from nbext.notebook import wait_background

    assert await wait_background() == []
    nb.run('%%runpod_job sleep --background -o a\n{"seconds": 5}')
    nb.run('%%runpod_job echo --background -o b\n{"x": 1}')
    await nb.auntil(lambda: nb.panel(0).state == "IN_PROGRESS", "the sleep job to run")
    await advance(nb, 5)
    results = await wait_background(timeout=10)
    assert {r.status for r in results if r is not None} == {JobStatus.COMPLETED}
    assert nb.shell.user_ns["a"] == {"slept": 5} and nb.shell.user_ns["b"] == {"x": 1}
    await nb.conn.aclose()
