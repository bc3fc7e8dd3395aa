"""``%runpod batch`` and ``%runpod batches`` in a real IPython shell, on the real emulator."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import ipywidgets
import pandas as pd
import pytest

from nbext.client import usd_text
from nbext.models.batches import BatchStatus
from nbext.notebook.magics.batch import BACKGROUND

from .conftest import Notebook
from .test_job_magic import usage_error

COLUMNS = ["id", "state", "delay_ms", "run_ms", "output", "error", "started_at", "completed_at"]


@pytest.fixture(autouse=True)
def kernel_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # where a notebook's kernel runs, and keeps the inputs
    return tmp_path


def only_batch(nb: Notebook) -> str:
    [batch_id] = nb.emu.batches.batches
    return batch_id


def test_a_batch_ends_with_a_frame_in_input_order_and_a_static_panel(
    nb: Notebook, kernel_folder: Path
) -> None:
    nb.run("prompts = [{'prompt': f'p{i}', 'temperature': i / 10} for i in range(25)]")
    nb.run("%runpod batch echo prompts -o res")
    df: pd.DataFrame = nb.shell.user_ns["res"]
    assert list(df.columns) == ["prompt", "temperature", *COLUMNS]
    assert df["output"].tolist() == nb.shell.user_ns["prompts"]
    assert set(df["state"]) == {"COMPLETED"} and df["completed_at"].notna().all()
    batch_id = only_batch(nb)
    final = [d for d in nb.displays if d["update"]][-1]["data"]
    text = final["text/plain"]
    assert text.startswith(f"echo · {batch_id} |{'█' * 20}| 25/25 · COMPLETED 25 · spent $")
    assert f"read it again: %runpod batch attach echo {batch_id}" in text
    assert "nbext-static" in final["text/html"] and batch_id in final["text/html"]
    assert (kernel_folder / "nbext-batches" / f"{batch_id}.json").stat().st_mode & 0o777 == 0o600
    assert nb.conn.budget.spent_usd > 0 and len(nb.conn.budget.costs) == 25


def test_attach_reads_the_same_rows_and_batches_lists_newest_first(nb: Notebook) -> None:
    nb.run("xs = [{'n': i} for i in range(6)]")
    nb.run("%runpod batch echo xs -o first -q")
    batch_id = only_batch(nb)
    nb.run(f"%runpod batch attach echo {batch_id} -o again")
    pd.testing.assert_frame_equal(nb.shell.user_ns["again"], nb.shell.user_ns["first"])
    nb.run("ys = [{'m': 1}]")
    nb.run("%runpod batch echo ys -q")
    nb.run("%runpod batches echo -o listed")
    listed: pd.DataFrame = nb.shell.user_ns["listed"]
    assert listed["id"].tolist()[1] == batch_id and len(listed) == 2  # newest first
    assert listed["request_total"].tolist() == [1, 6]
    assert str(listed["created_at"].dtype).startswith("datetime64")


def test_attach_without_kept_inputs_still_gives_a_row_per_request(
    nb: Notebook, kernel_folder: Path
) -> None:
    nb.run("xs = [{'n': i} for i in range(3)]")
    nb.run("%runpod batch echo xs -q")
    batch_id = only_batch(nb)
    (kernel_folder / "nbext-batches" / f"{batch_id}.json").unlink()  # another machine
    nb.run(f"%runpod batch attach echo {batch_id} -o again")
    again: pd.DataFrame = nb.shell.user_ns["again"]
    assert list(again.columns) == COLUMNS and again["output"].tolist() == [
        {"n": i} for i in range(3)
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("%runpod batch echo bad", "input #1 is a str; every input must be a dict"),
        ("%runpod batch echo nums", "input #0 is an int; every input must be a dict"),
        (
            '%runpod batch echo [{"n":1}]',
            "INPUTS must name a variable holding a list of dicts or a DataFrame; "
            "no '[{n:1}]' in the notebook's namespace",
        ),
        ("%runpod batch echo missing", "no 'missing' in the notebook's namespace"),
        ("%runpod batch echo one", "inputs must be a list of dicts or a DataFrame, got one dict"),
        (
            "%runpod batch attach echo batch_nope",
            "batch 'batch_nope' not found on the endpoint; `%runpod batches echo` lists them",
        ),
        ("%runpod batch cancel echo batch_nope", "`%runpod batches echo` lists them"),
        ("%runpod batch ecko ok", "endpoint 'ecko' not found; did you mean 'echo'?"),
        ("%runpod batch attach ecko batch_x", "endpoint 'ecko' not found; did you mean 'echo'?"),
        ("%runpod batches ecko", "endpoint 'ecko' not found; did you mean 'echo'?"),
        ("%runpod batch", "`%runpod help batch` says how to use it"),
        ("%runpod batch echo ok --background", "%runpod batch without it follows the batch"),
        ("%runpod batch attach echo", "usage: %runpod batch ENDPOINT INPUTS | attach"),
        ("%runpod batch echo bad -o 1x", "not a valid Python variable name"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_started(
    nb: Notebook, line: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("bad, nums, one, ok = [{'n': 1}, 'text'], [1], {'n': 1}, [{'n': 1}]")
    assert says in usage_error(nb, line, capsys)
    assert nb.emu.batches.batches == {}


@pytest.mark.anyio
async def test_in_the_background_the_cancel_button_cancels_the_batch(nb: Notebook) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")  # no worker: requests wait
    nb.run("xs = [{'n': i} for i in range(5)]")
    nb.run("%runpod batch held xs --background -o out")
    [task] = BACKGROUND
    batch_id = only_batch(nb)
    await nb.auntil(lambda: len(nb.outputs()) == 2, "the panel and its controls")
    with warnings.catch_warnings(category=DeprecationWarning, action="ignore"):
        everything = list(ipywidgets.Widget.widgets.values())  # the kernel's widgets
    [button] = [
        w
        for w in everything
        if isinstance(w, ipywidgets.Button) and "nbext-map-cancel" in w._dom_classes
    ]
    content, controls = nb.outputs()
    hint = f"%runpod batch cancel held {batch_id} cancels it"
    assert hint in controls[-1]["text/plain"] and hint in content[-1]["text/plain"]
    button.click()
    await asyncio.wait_for(task, 10)
    assert nb.emu.batches.batches[batch_id].status is BatchStatus.CANCELLED
    out: pd.DataFrame = nb.shell.user_ns["out"]
    assert out["n"].tolist() == list(range(5)) and set(out["state"]) == {"CANCELLED"}
    assert nb.outputs()[1][-1] == {"text/plain": ""}  # the button's output is emptied
    assert "CANCELLED: every request ended" in nb.outputs()[0][-1]["text/plain"]
    await nb.conn.aclose()


def test_the_cancel_command_cancels_from_any_cell(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    nb.run("xs = [{'n': i} for i in range(3)]")
    nb.run("import nbext.notebook as n; b = n.client().endpoint('held').batch(xs)")
    batch_id = only_batch(nb)
    nb.run(f"%runpod batch cancel held {batch_id}")
    assert f"batch {batch_id} CANCELLED" in capsys.readouterr().out
    assert nb.emu.batches.batches[batch_id].status is BatchStatus.CANCELLED


def test_a_batch_of_many_pages_is_priced_in_full_and_counted_in_status(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started from Python and ended before it is attached to: the panel's first poll
    finds every request ended, three pages of them."""
    nb.run("xs = [{'n': i} for i in range(2500)]")
    nb.run("import nbext.notebook as n; b = n.client().endpoint('echo').batch(xs); b.wait()")
    nb.run(f"%runpod batch attach echo {only_batch(nb)}")
    final = [d for d in nb.displays if d["update"]][-1]["data"]["text/plain"]
    costs = nb.conn.budget.costs
    assert len(costs) == 2500
    total = sum(c.usd for c in costs.values())
    assert f"spent {usd_text(total)} on 2,500 jobs (estimate)" in final
    nb.run("%runpod status")
    out = capsys.readouterr().out
    assert "2,500 requests in 1 batch" in out and f"spent by them: {usd_text(total)}" in out


def test_quiet_shows_no_table_and_says_in_one_line_how_it_ended(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("xs = [{'n': i} for i in range(3)]")
    nb.run("%runpod batch echo xs -q -o res")
    assert nb.displays == [] and len(nb.shell.user_ns["res"]) == 3
    [line] = capsys.readouterr().out.splitlines()
    total = usd_text(sum(c.usd for c in nb.conn.budget.costs.values()))
    assert line.startswith(f"batch {only_batch(nb)} ")
    assert line.endswith(f": 3 of 3 completed, 0 failed; spent {total} on 3 jobs (estimate)")
