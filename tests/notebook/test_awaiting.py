"""``%%runpod_job`` in a cell that awaits: the kernel handles the panel's Cancel while the
job runs (ipykernel 7.4+ dispatches widget messages while a cell awaits).

The transformer is checked on IPython's own transformation of the cell; the awaited
magic runs here on the test's loop, as ipykernel would run the cell, and the panel's
button is clicked as the browser's message would click it.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import ipywidgets
import pytest
from ipywidgets.widgets.widget import _instances

from nbext.models import JobStatus
from nbext.notebook import awaiting
from nbext.notebook.interrupts import Interrupted
from nbext.notebook.outcome import JobNotCompleted

from .conftest import Notebook, flaky_handler

pytestmark = pytest.mark.anyio


def transformed(nb: Notebook, cell: str) -> str:
    lines = nb.shell.input_transformer_manager.transform_cell(cell).splitlines(keepends=True)
    return "".join(awaiting.await_job_cells(lines))


def test_only_job_cells_are_made_to_await(nb: Notebook) -> None:
    code = transformed(nb, '%%runpod_job sleep --stream\n{"seconds": 1}')
    assert code.startswith(awaiting.AWAITED_CALL)
    assert "'runpod_job', 'sleep --stream', '{\"seconds\": 1}" in code
    assert nb.shell.should_run_async(code, transformed_cell=code)
    for other in ("%runpod jobs", "x = 1", "%%time\n1 + 1"):
        assert transformed(nb, other) == nb.shell.input_transformer_manager.transform_cell(other)


def test_nothing_is_made_to_await_with_autoawait_off(nb: Notebook) -> None:
    nb.shell.autoawait = False
    try:
        code = transformed(nb, '%%runpod_job echo\n{"a": 1}')
    finally:
        nb.shell.autoawait = True
    assert code.startswith("get_ipython().run_cell_magic('runpod_job'")


def test_a_plain_shell_keeps_blocking_cells(nb: Notebook) -> None:
    assert awaiting.supported(nb.shell) is False  # no kernel: nothing could hear a click
    assert awaiting.await_job_cells not in nb.shell.input_transformers_post


async def test_cancel_clicked_while_the_cell_awaits_ends_it_cancelled(nb: Notebook) -> None:
    cell = asyncio.ensure_future(
        awaiting.run_cell_magic("runpod_job", "sleep -o out", '{"seconds": 60}')
    )
    await nb.auntil(lambda: len(nb.conn.registry) == 1, "the job to be submitted")
    panel = nb.panel()
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the job to run")
    assert panel.controls_shown()
    content, controls = nb.outputs()
    assert "interrupt the kernel (■) to cancel" in content[-1]["text/plain"]
    assert controls[-1]["text/plain"] == "interrupt the kernel (■) to cancel"
    clicked = time.monotonic()
    panel.cancel_button.click()
    with pytest.raises(JobNotCompleted, match="ended CANCELLED"):
        await asyncio.wait_for(cell, 10)
    assert time.monotonic() - clicked < 1.0
    assert nb.job(nb.record().id).status is JobStatus.CANCELLED
    assert panel.state == "CANCELLED" and panel.note == "cancelled from the panel"
    assert 'data-state="CANCELLED"' in nb.displays[-1]["data"]["text/html"]
    assert nb.shell.user_ns["out"] is None
    await nb.conn.aclose()


async def test_an_awaiting_cell_streams_and_completes(nb: Notebook) -> None:
    await awaiting.run_cell_magic(
        "runpod_job", "stream-text --stream -o out", '{"text": "one two three"}'
    )
    panel = nb.panel()
    assert panel.state == "COMPLETED" and "three" in panel.text
    assert "one two three" in nb.displays[-1]["data"]["text/html"]
    await nb.conn.aclose()


async def test_an_awaiting_cell_reads_its_line_as_a_blocking_one(nb: Notebook) -> None:
    """Quotes are the shell's, in an awaiting kernel as in any other (``parse_line``)."""
    await awaiting.run_cell_magic("runpod_job", "'echo' -o 'out'", '{"a": 1}')
    nb.run("inputs = [{'n': 1}]")
    await awaiting.run_line_magic("runpod", "map \"echo\" inputs -o 'mapped' -q")
    assert nb.shell.user_ns["out"] == {"a": 1}
    assert nb.shell.user_ns["mapped"]["state"].tolist() == ["COMPLETED"]
    await nb.conn.aclose()


async def test_interrupting_an_awaiting_cell_cancels_the_job(nb: Notebook) -> None:
    cell = asyncio.ensure_future(awaiting.run_cell_magic("runpod_job", "sleep", '{"seconds": 60}'))
    await nb.auntil(lambda: len(nb.conn.registry) == 1, "the job to be submitted")
    await nb.auntil(lambda: nb.panel().state == "IN_PROGRESS", "the job to run")
    cell.cancel()  # what ipykernel does to an awaiting cell on Ctrl-C
    with pytest.raises(Interrupted, match="was cancelled"):
        await asyncio.wait_for(cell, 10)
    assert nb.job(nb.record().id).status is JobStatus.CANCELLED
    await nb.conn.aclose()


def test_map_lines_outside_blocks_are_made_to_await(nb: Notebook) -> None:
    code = transformed(nb, "inputs = [{'n': 1}]\n%runpod map echo inputs -o res")
    first, second = code.splitlines()
    assert first == "inputs = [{'n': 1}]"
    assert second.startswith(awaiting.AWAITED_LINE) and "'map echo inputs -o res'" in second
    assert nb.shell.should_run_async(code, transformed_cell=code)
    in_block = "for _ in range(2):\n    %runpod map echo inputs"
    assert transformed(nb, in_block) == nb.shell.input_transformer_manager.transform_cell(in_block)
    assert awaiting.AWAITED_LINE not in transformed(nb, "%runpod jobs")
    assert transformed(nb, "%runpod retry last").startswith(awaiting.AWAITED_LINE)


def map_cancel() -> ipywidgets.Button | None:
    """The Cancel button of the newest map panel (what the browser would click)."""
    buttons = [
        w
        for w in list(_instances.values())
        if isinstance(w, ipywidgets.Button) and "nbext-map-cancel" in w._dom_classes
    ]
    return buttons[-1] if buttons else None


async def test_an_awaiting_map_completes_and_stores_its_frame(nb: Notebook) -> None:
    nb.run("inputs = [{'n': n} for n in range(6)]")
    await awaiting.run_line_magic("runpod", "map echo inputs -o res --concurrency 3")
    assert nb.shell.user_ns["res"]["output"].tolist() == [{"n": n} for n in range(6)]
    final = nb.outputs()[0][-1]
    assert "6/6 · COMPLETED 6" in final["text/plain"]
    await nb.conn.aclose()


async def test_cancel_clicked_while_a_map_awaits_stops_the_map(nb: Notebook) -> None:
    nb.run("naps = [{'seconds': 60} for _ in range(4)]")
    cell = asyncio.ensure_future(
        awaiting.run_line_magic("runpod", "map sleep naps -o res --concurrency 2")
    )
    await nb.auntil(lambda: map_cancel() is not None, "the map panel")
    button = map_cancel()
    assert button is not None
    await nb.auntil(
        lambda: sum(j.status is JobStatus.IN_PROGRESS for j in nb.emu.jobs.jobs.values()) == 2,
        "two jobs to run",
    )
    content, controls = nb.outputs()
    assert "application/vnd.jupyter.widget-view+json" in controls[-1]  # Cancel shows
    assert controls[-1]["text/plain"].startswith("interrupt the kernel (■) to stop the map")
    updates = len(content)  # no result comes, yet elapsed and ETA are redrawn
    await nb.auntil(lambda: len(nb.outputs()[0]) >= updates + 2, "the line to be redrawn")
    clicked = time.monotonic()
    button.click()
    with pytest.raises(Interrupted, match=r"stopped after 0 of 4 jobs \(cancelled\)"):
        await asyncio.wait_for(cell, 10)
    assert time.monotonic() - clicked < 1.0
    content, controls = nb.outputs()
    assert 'data-state="done"' in content[-1]["text/html"]
    assert "cancelled: 0 of 4 finished" in content[-1]["text/plain"]
    assert controls[-1] == {"text/plain": ""}
    assert "res" not in nb.shell.user_ns
    assert len(nb.emu.jobs.jobs) == 2  # nothing more was submitted
    await nb.conn.aclose()


async def test_ctrl_c_of_an_awaiting_cell_cancels_the_job(nb: Notebook) -> None:
    """ipykernel delivers Ctrl-C to an awaiting cell as its cancellation: that is not the
    panel's Cancel cutting the follower's polling short, and ends the cell Interrupted."""
    cell = asyncio.ensure_future(
        awaiting.run_cell_magic("runpod_job", "sleep -o out", '{"seconds": 60}')
    )
    await nb.auntil(lambda: len(nb.conn.registry) == 1, "the job to be submitted")
    panel = nb.panel()
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the job to run")
    cell.cancel()
    with pytest.raises(Interrupted, match="was cancelled"):
        await asyncio.wait_for(cell, 10)
    assert nb.job(nb.record().id).status is JobStatus.CANCELLED
    assert panel.state == "CANCELLED" and panel.note.startswith("cancelled by Ctrl-C")
    await nb.conn.aclose()


async def test_a_long_sync_job_gets_a_cancel_once_its_id_is_known(nb: Notebook) -> None:
    cell = asyncio.ensure_future(
        awaiting.run_cell_magic("runpod_job", "sleep --sync -o out", '{"seconds": 60}')
    )
    await nb.auntil(lambda: len(nb.conn.registry) == 1, "the /runsync hold to pass", 15)
    panel = nb.panel()
    assert panel.via == "/runsync" and panel.job_id == nb.record().id
    await nb.auntil(panel.controls_shown, "Cancel to show")
    clicked = time.monotonic()
    panel.cancel_button.click()
    with pytest.raises(JobNotCompleted, match="ended CANCELLED"):
        await asyncio.wait_for(cell, 10)
    assert time.monotonic() - clicked < 1.0
    assert nb.job(nb.record().id).status is JobStatus.CANCELLED
    await nb.conn.aclose()


async def test_a_quick_sync_job_is_one_call(nb: Notebook) -> None:
    await awaiting.run_cell_magic("runpod_job", "echo --sync -o out", '{"a": 1}')
    assert nb.shell.user_ns["out"] == {"a": 1}
    assert nb.record().state == "COMPLETED" and nb.panel().via == "/runsync"
    await nb.conn.aclose()


async def test_an_awaiting_retry_follows_the_job_again(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise -o out\n{}")
    await awaiting.run_line_magic("runpod", "retry last")
    assert nb.record().state == "COMPLETED" and nb.shell.user_ns["out"] == {"attempt": 2}
    assert nb.panel().via == "retry" and nb.panel().retries == 1
    await nb.conn.aclose()


async def test_a_subcommand_awaits_when_it_is_registered_with_an_awaited_twin(
    nb: Notebook,
) -> None:
    """One list: the table of subcommands says which await; nothing else names them."""
    from nbext.notebook.ipython import argument, magic_arguments
    from nbext.notebook.magics.commands import SUBCOMMANDS, subcommand

    ran: list[tuple[str, str]] = []

    async def awaited(magics: object, args: argparse.Namespace) -> None:
        ran.append(("awaited", args.word))

    @subcommand("probe", "a subcommand of this test", awaited=awaited)
    @magic_arguments("runpod probe")
    @argument("word")
    def probe(magics: object, args: argparse.Namespace) -> None:
        ran.append(("blocking", args.word))

    try:
        assert transformed(nb, "%runpod probe {1 + 1}").startswith(awaiting.AWAITED_LINE)
        await awaiting.run_line_magic("runpod", "probe {1 + 1}")
        nb.run("%runpod probe three")
        assert ran == [("awaited", "2"), ("blocking", "three")]
        awaits = {name for name, command in SUBCOMMANDS.items() if command.awaited}
        assert awaits == {"map", "retry", "batch", "probe"}
    finally:
        del SUBCOMMANDS["probe"]
    assert not transformed(nb, "%runpod probe x").startswith(awaiting.AWAITED_LINE)
