"""Live panels in a JupyterLab whose widget manager is disabled, as VS Code, Colab
(ipywidgets 8 without its custom manager) or a broken install leave it, and the same in
Notebook 7, a shared JupyterHub's front end.

A panel's state is plain HTML updated through its display id, so it must move in the
page while the job, the map or the stream runs, with no widget drawn at all; where a
panel's Cancel would be, the page shows its text fallback, which says how to stop, and
interrupting the kernel (the ■ button's call) cancels the job on the emulator. And the
final outputs stay after save and reopen.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from .lab import LabPage
from .notebook_files import newest_job_cell, write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"
WORDS = " ".join(f"word{n}" for n in range(30))


def cells(pod: str) -> list[str | dict[str, Any]]:
    """The notebook, with a pod of its own: the test process's kernels share one local
    service, where a pod another front end's run created stays, so a name used twice
    would name two pods."""
    return [
        "%load_ext nbext",
        f'%%runpod_job stream-text --stream\n{{"text": "{WORDS}", "delay_ms": 150}}',
        "naps = [{'seconds': 0.4} for _ in range(8)]\n%runpod map sleep naps --concurrency 2",
        "%runpod health echo --watch 0.2",
        "import asyncio\nawait asyncio.sleep(3)\n%runpod health --stop echo",
        # A pod's log, followed (the emulator starts a pod 8 s after its creation).
        "from nbext.notebook import client\n"
        f'client().pods.create(name="{pod}", image="acme/lab:1", gpu={{"id": "NVIDIA A40"}})',
        f"%runpod logs {pod} --follow",
        f"await asyncio.sleep(12)\n%runpod logs --stop {pod}",
    ]


BEYOND_LAB = ["lab-no-widgets", "notebook7"]
"""The front ends besides JupyterLab with widgets that these panels must work in."""

INTERRUPT = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.interrupt()"
"""What the toolbar's ■ (Interrupt the kernel) does, in JupyterLab and Notebook 7 alike
(the interrupt is the kernel's, so one front end checks it: the one with no Cancel)."""


def samples(cell: Locator, part: str, count: int = 400) -> list[str]:
    """The text of ``part`` in ``cell``'s output at each animation frame until the cell
    shows a static panel (at most ``count`` distinct texts): what a person watching the
    cell saw."""
    seen: list[str] = cell.evaluate(
        """async (cell, [part, count]) => {
            const seen = [];
            const deadline = performance.now() + 60000;
            while (performance.now() < deadline && seen.length < count) {
                const node = cell.querySelector(part);
                const text = node ? node.innerText : '';
                if (text && text !== seen[seen.length - 1]) seen.push(text);
                if (cell.querySelector('.nbext-static')) return seen;
                await new Promise((resolve) => requestAnimationFrame(resolve));
            }
            return seen;
        }""",
        [part, count],
    )
    return seen


VISIBLE = ".jp-NotebookPanel:not(.lm-mod-hidden)"


@pytest.mark.parametrize("front_end", BEYOND_LAB, indirect=True)
def test_live_state_shows_without_the_widget_manager_and_stays_after_reopen(
    front_end: LabPage,
) -> None:
    lab = front_end
    bare = lab.server.disabled_extensions == (WIDGET_MANAGER,)
    pod = f"desk-{lab.server.log_path.stem}"
    path = write_notebook(
        lab.server.root_dir / f"bare-{lab.server.log_path.stem}.ipynb", cells(pod)
    )
    lab.open(path.name)
    disabled = lab.page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
        ".disabledExtensions"
    )
    assert (WIDGET_MANAGER in str(disabled)) == bare, disabled
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    # The stream: its text grows in the page before the job ends.
    stream = lab.cell_with("%%runpod_job stream-text")
    expect(lab.output(stream).locator(".nbext-live .nbext-stream")).to_be_visible(timeout=60_000)
    if bare:  # where the Cancel button would be, its text fallback: how to stop without it
        fallback = lab.output(stream).locator('[data-mime-type="text/plain"]')
        expect(fallback).to_have_text("interrupt the kernel (■) to cancel", timeout=30_000)
    else:
        expect(lab.button(stream, "Cancel")).to_be_visible(timeout=30_000)
    texts = samples(stream, ".nbext-stream")
    growing = [t for t in texts if WORDS not in t]
    assert len(growing) >= 3, texts
    assert all(len(a) < len(b) for a, b in itertools.pairwise(growing)), growing
    expect(lab.output(stream).locator(".nbext-static .nbext-stream")).to_contain_text(WORDS)
    print(f"stream: {len(growing)} distinct texts before the end")

    # The map: its counts move while it runs.
    mapped = lab.cell_with("%runpod map sleep")
    counts = samples(mapped, ".nbext-map-counts")
    done = sorted({int(t.split("/")[0]) for t in counts})
    assert len(done) >= 3 and done[0] < 8, counts
    expect(lab.output(mapped).locator(".nbext-static .nbext-map-counts")).to_contain_text(
        "8/8 · COMPLETED 8"
    )
    print(f"map: counts seen {done}")
    # The health watch: its Stop button's place names the command; the command stops it.
    watch = lab.cell_with("%runpod health echo --watch")
    if bare:
        fallback = lab.output(watch).locator('[data-mime-type="text/plain"]')
        hint = "%runpod health echo --stop to stop watching"
        expect(fallback).to_have_text(hint, timeout=30_000)
    else:
        expect(lab.button(watch, "Stop watching")).to_be_visible(timeout=30_000)
    expect(lab.output(watch).locator(".nbext-live svg.nbext-health-chart")).to_be_visible()
    expect(lab.output(watch).locator(".nbext-static svg.nbext-health-chart")).to_be_visible()
    # The log: its lines arrive in the page while followed; the Stop button's place
    # names the command, which the last cell runs.
    logs = lab.cell_with(f"%runpod logs {pod} --follow")
    if bare:
        fallback = lab.output(logs).locator('[data-mime-type="text/plain"]')
        hint = f"%runpod logs --stop {pod} to stop following"
        expect(fallback).to_have_text(hint, timeout=60_000)
    else:
        expect(lab.button(logs, "Stop following")).to_be_visible(timeout=60_000)
    following = lab.output(logs).locator(".nbext-live .nbext-logs-lines")
    expect(following).to_contain_text("pulling image acme/lab:1", timeout=30_000)
    expect(following).to_contain_text("started", timeout=30_000)  # a line that came later
    static_log = lab.output(logs).locator(".nbext-static.nbext-logs-panel")
    expect(static_log).to_contain_text("stopped by %runpod logs --stop", timeout=30_000)
    lab.wait_until_idle()
    assert lab.errors() == []
    page_text = lab.page.locator(VISIBLE).inner_text()
    assert "interrupt the kernel" not in page_text  # the controls' outputs were emptied
    assert "to stop watching" not in page_text and "to stop following" not in page_text
    assert "Error displaying widget" not in page_text and "VBox(" not in page_text
    lab.screenshot(f"no-widgets-after-run-{lab.server.log_path.stem}")

    # Save and reopen: the final outputs stay.
    lab.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    lab.server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run, no widget state
    expect(lab.page.locator(f"{VISIBLE} .nbext-static")).to_have_count(4)
    expect(lab.output(lab.cell_with("%%runpod_job stream-text"))).to_contain_text(WORDS)
    expect(lab.output(lab.cell_with("%runpod map sleep"))).to_contain_text("8/8 · COMPLETED 8")
    expect(lab.output(lab.cell_with(f"%runpod logs {pod} --follow"))).to_contain_text("started")
    lab.screenshot(f"no-widgets-reopened-{lab.server.log_path.stem}")


SLEEP = [
    "%load_ext nbext",
    '%%runpod_job sleep -o out\n{"seconds": 60}',
    "after = True",
    newest_job_cell("sleep"),
]


@pytest.mark.parametrize("front_end", ["lab-no-widgets"], indirect=True)
def test_interrupting_the_kernel_cancels_the_running_job(front_end: LabPage) -> None:
    lab = front_end
    path = write_notebook(lab.server.root_dir / f"sleep-{lab.server.log_path.stem}.ipynb", SLEEP)
    lab.open(path.name)
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = lab.cell_with("%%runpod_job sleep")
    running = lab.output(cell).locator('.nbext-live .nbext-state[data-state="IN_PROGRESS"]')
    expect(running).to_be_visible(timeout=60_000)
    expect(lab.output(cell)).to_contain_text("interrupt the kernel (■) to cancel")
    lab.screenshot(f"interrupt-before-{lab.server.log_path.stem}")

    lab.page.evaluate(INTERRUPT)
    cancelled = '.nbext-static .nbext-state[data-state="CANCELLED"]'
    expect(lab.output(cell).locator(cancelled)).to_be_visible(timeout=15_000)
    lab.wait_until_idle()
    errors = lab.errors()
    assert len(errors) == 1 and "CANCELLED" in errors[0], errors
    # Run All stopped at the interrupted cell; the emulator's job was cancelled
    expect(lab.cell_with("after = True").locator(".jp-InputPrompt")).to_have_text("[ ]:")
    check = lab.cell_with("_service = ")
    lab.start_cell(check)
    lab.wait_for_output(check, "newest sleep job: CANCELLED")
    lab.screenshot(f"interrupt-after-{lab.server.log_path.stem}")
