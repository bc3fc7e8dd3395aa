"""``%runpod map`` when a submission's answer is lost, and when the map is stopped:
the table shows the input that may have been queued, and the panel says what became of
the jobs in flight (issue 24, part 2)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from nbext.client._map import MAP_HOLD
from nbext.models import JobStatus
from nbext.notebook import Connection, Interrupted, awaiting, load_ipython_extension
from tests.faultproxy import Exchange, FaultProxy

from .conftest import KEY, Notebook
from .test_awaiting import map_cancel
from .test_interrupt import press_ctrl_c


def through(nb: Notebook, proxy: FaultProxy) -> None:
    """The notebook's commands go to the emulator through ``proxy`` from now on."""
    environ = {
        "RUNPOD_API_KEY": KEY,
        "RUNPOD_ENDPOINT_BASE_URL": proxy.via(nb.server.serverless_url),
        "RUNPOD_REST_BASE_URL": proxy.via(nb.server.base_url),
    }
    local, nb.conn = nb.conn, Connection(environ=environ, config_file="/nonexistent")
    local.close()
    nb.magics = load_ipython_extension(nb.shell, connection=nb.conn)
    nb.magics.poll_interval = 0.05


def second_runsync() -> Any:
    seen = 0

    def rule(exchange: Exchange) -> str | None:
        nonlocal seen
        if "/runsync" in exchange.path:
            seen += 1
            return "drop" if seen == 2 else None
        return None

    return rule


def test_the_map_table_shows_an_input_that_may_have_been_queued(nb: Notebook) -> None:
    nb.emu.deploy(image="echo", endpoint_id="echo")
    nb.run("inputs = [{'i': i} for i in range(6)]")
    with FaultProxy(nb.server.url, rule=second_runsync()) as proxy:
        through(nb, proxy)
        nb.run("%runpod map echo inputs -o res --concurrency 1")
    assert proxy.counts["drop"] == 1
    df = nb.shell.user_ns["res"]
    assert df["state"].tolist() == ["COMPLETED", "MAYBE_QUEUED", *["COMPLETED"] * 4]
    assert "input #1 may have been queued, not sent again" in df["error"][1]
    assert df["output"].tolist()[2:] == [{"i": i} for i in range(2, 6)]
    assert len(nb.emu.jobs.jobs) == 6  # queued, never sent again
    shown = [d["data"].get("text/html", "") for d in nb.displays]
    assert any("MAYBE_QUEUED" in html and "may have been queued" in html for html in shown)
    final = [d for d in nb.displays if d["update"]][-1]["data"]["text/plain"]
    assert "COMPLETED 5" in final and "MAYBE_QUEUED 1" in final


def past_hold(nb: Notebook) -> list[Any]:
    """Running jobs waited on by id: past the /runsync hold, and waited on again."""
    now = nb.emu.clock.now()
    return [
        job
        for job in nb.emu.jobs.jobs.values()
        if job.status is JobStatus.IN_PROGRESS
        and now - job.submitted_at > MAP_HOLD + 0.05
        and len(job.signal._waiters) > 0
    ]


def gated(release: threading.Event) -> Any:
    """Input 0 returns at once; the others run until ``release`` (10 s at most)."""

    def handler(job: dict[str, Any]) -> Any:
        if job["input"]["i"] != 0:
            release.wait(10)
        return job["input"]

    return handler


@pytest.mark.usefixtures("sigint_handled")
def test_ctrl_c_during_a_map_cancels_its_jobs_and_the_panel_says_so(
    nb: Notebook,
) -> None:
    release = threading.Event()

    def press_ctrl_c_when_both_wait() -> None:
        nb.until(lambda: len(past_hold(nb)) == 2, "two jobs waited on by id")
        press_ctrl_c()

    nb.deploy(gated(release), "slow", workers={"max": 5})
    nb.run("inputs = [{'i': i} for i in range(3)]")
    presser = threading.Thread(target=press_ctrl_c_when_both_wait, daemon=True)
    presser.start()
    try:
        with pytest.raises(Interrupted) as caught:
            nb.run("%runpod map slow inputs --concurrency 2")
    finally:
        release.set()
        presser.join(10)
    cancelled = sorted(j.id for j in nb.emu.jobs.jobs.values() if j.status is JobStatus.CANCELLED)
    assert len(cancelled) == 2
    message = str(caught.value)
    assert "stopped after 1 of 3 jobs (interrupted)" in message
    assert f"cancelled 2 jobs ({', '.join(cancelled)})" in message.replace(
        f"{cancelled[1]}, {cancelled[0]}", f"{cancelled[0]}, {cancelled[1]}"
    )
    assert "interrupted: 1 of 3 finished; cancelled 2 jobs" in nb.last_plain()


@pytest.mark.anyio
async def test_cancel_on_an_awaiting_map_cancels_its_jobs_and_the_panel_says_so(
    nb: Notebook,
) -> None:
    release = threading.Event()
    nb.deploy(gated(release), "slow", workers={"max": 5})
    nb.run("inputs = [{'i': i} for i in range(3)]")
    cell = asyncio.ensure_future(
        awaiting.run_line_magic("runpod", "map slow inputs -o res --concurrency 2")
    )
    try:
        await nb.auntil(lambda: len(past_hold(nb)) == 2, "two jobs waited on by id")
        button = map_cancel()
        assert button is not None
        button.click()
        with pytest.raises(Interrupted, match=r"stopped after 1 of 3 jobs \(cancelled\)"):
            await asyncio.wait_for(cell, 15)
    finally:
        release.set()
    cancelled = [j.id for j in nb.emu.jobs.jobs.values() if j.status is JobStatus.CANCELLED]
    assert len(cancelled) == 2
    note = nb.outputs()[0][-1]["text/plain"]
    assert "cancelled: 1 of 3 finished; cancelled 2 jobs" in note
    assert all(job_id in note for job_id in cancelled)
    await nb.conn.aclose()
