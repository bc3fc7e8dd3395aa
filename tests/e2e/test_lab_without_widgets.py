"""Live panels in a JupyterLab whose widget manager is disabled, as VS Code, Colab
(ipywidgets 8 without its custom manager) or a broken install leave it.

A panel's state is plain HTML updated through its display id, so it must move in the
page while the job, the batch or the stream runs, with no widget drawn at all; where a
panel's Cancel would be, the page shows its text fallback, which says how to stop. And
the final outputs stay after save and reopen.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"
WORDS = " ".join(f"word{n}" for n in range(30))
CELLS: list[str | dict[str, Any]] = [
    "%load_ext nbext",
    f'%%runpod_job stream-text --stream\n{{"text": "{WORDS}", "delay_ms": 150}}',
    "naps = [{'seconds': 0.4} for _ in range(8)]\n%runpod map sleep naps --concurrency 2",
]


@pytest.fixture(scope="module")
def bare_server(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLabServer]:
    base = tmp_path_factory.mktemp("jupyterlab-no-widgets")
    root = base / "notebooks"
    root.mkdir()
    with JupyterLabServer(
        root,
        base / "state",
        log_name="jupyterlab-no-widgets",
        disabled_extensions=(WIDGET_MANAGER,),
    ) as server:
        yield server


@pytest.fixture
def bare_lab(browser: BrowserContext, bare_server: JupyterLabServer) -> Iterator[LabPage]:
    page = LabPage(browser.new_page(), bare_server)
    try:
        yield page
    finally:
        page.page.close()
        bare_server.shutdown_kernels()


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


def test_live_state_shows_without_the_widget_manager_and_stays_after_reopen(
    bare_lab: LabPage, bare_server: JupyterLabServer
) -> None:
    lab = bare_lab
    write_notebook(bare_server.root_dir / "bare.ipynb", CELLS)
    lab.open("bare.ipynb")
    disabled = lab.page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
        ".disabledExtensions"
    )
    assert WIDGET_MANAGER in str(disabled), disabled
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    # The stream: its text grows in the page before the job ends.
    stream = lab.cell_with("%%runpod_job stream-text")
    expect(lab.output(stream).locator(".nbext-live .nbext-stream")).to_be_visible(timeout=60_000)
    # Where the Cancel button would be, its text fallback: how to stop without it.
    fallback = lab.output(stream).locator('[data-mime-type="text/plain"]')
    expect(fallback).to_have_text("interrupt the kernel (■) to cancel")
    texts = samples(stream, ".nbext-stream")
    growing = [t for t in texts if WORDS not in t]
    assert len(growing) >= 3, texts
    assert all(len(a) < len(b) for a, b in itertools.pairwise(growing)), growing
    expect(lab.output(stream).locator(".nbext-static .nbext-stream")).to_contain_text(WORDS)
    print(f"stream: {len(growing)} distinct texts before the end")

    # The batch: its counts move while it runs.
    batch = lab.cell_with("%runpod map sleep")
    counts = samples(batch, ".nbext-batch-counts")
    done = sorted({int(t.split("/")[0]) for t in counts})
    assert len(done) >= 3 and done[0] < 8, counts
    expect(lab.output(batch).locator(".nbext-static .nbext-batch-counts")).to_contain_text(
        "8/8 · COMPLETED 8"
    )
    print(f"batch: counts seen {done}")
    lab.wait_until_idle()
    assert lab.errors() == []
    page_text = lab.page.locator(VISIBLE).inner_text()
    assert "interrupt the kernel" not in page_text  # the controls' outputs were emptied
    assert "Error displaying widget" not in page_text and "VBox(" not in page_text
    lab.screenshot("no-widgets-after-run")

    # Save, close, reopen: the final outputs stay.
    lab.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    bare_server.shutdown_kernels()
    lab.open("bare.ipynb")
    expect(lab.page.locator(f"{VISIBLE} .nbext-static")).to_have_count(2)
    expect(lab.output(lab.cell_with("%%runpod_job stream-text"))).to_contain_text(WORDS)
    expect(lab.output(lab.cell_with("%runpod map sleep"))).to_contain_text("8/8 · COMPLETED 8")
    lab.screenshot("no-widgets-reopened")
