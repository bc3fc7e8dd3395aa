"""What a notebook keeps: Run All stops at a failed job, and an executed notebook exported
to HTML shows every panel's final state with no kernel, no widget state and no network.

Real kernels run real notebooks (nbclient, the library behind ``jupyter execute``,
nbval and papermill); the exported page is opened in Chromium with every request that
would leave the file refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from playwright.sync_api import BrowserContext, expect

from .browser import open_offline
from .jupyter import scrubbed_environment
from .notebook_files import PANELS, STATIC_PANELS, write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LOAD = "%load_ext nbext"
AFTER = "reached = True"


def execute(path: Path, home: Path) -> nbformat.NotebookNode:
    """Run ``path`` top to bottom as Run All does; the notebook with its outputs."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": path.parent}}
    )
    try:
        client.execute(env=scrubbed_environment(home))
    finally:
        nbformat.write(notebook, path)
    return notebook


def html_of(cell: nbformat.NotebookNode) -> str:
    return "".join(
        output.get("data", {}).get("text/html", "")
        for output in cell.outputs
        if output.output_type in ("display_data", "execute_result")
    )


def test_a_failed_job_stops_run_all_at_its_cell(tmp_path: Path) -> None:
    path = write_notebook(
        tmp_path / "fails.ipynb", [LOAD, '%%runpod_job fail -o out\n{"message": "boom"}', AFTER]
    )
    with pytest.raises(CellExecutionError) as caught:
        execute(path, tmp_path / "home")
    assert "JobNotCompleted" in str(caught.value)
    notebook = nbformat.read(path, as_version=4)
    failed, after = notebook.cells[1], notebook.cells[2]
    assert after.execution_count is None and after.outputs == []  # Run All stopped here
    # the panel shows the final state first, then the error: one line, no traceback
    assert 'data-state="FAILED"' in html_of(failed) and "RuntimeError: boom" in html_of(failed)
    (error,) = [o for o in failed.outputs if o.output_type == "error"]
    assert error.ename == "JobNotCompleted"
    assert re.fullmatch(r"job \S+ on 'fail' ended FAILED: RuntimeError: boom \(.*\)", error.evalue)
    assert len(error.traceback) == 1 and "Traceback" not in error.traceback[0]
    assert "application/vnd.jupyter.widget-view+json" not in str(failed.outputs)


def test_no_raise_lets_run_all_go_on(tmp_path: Path) -> None:
    path = write_notebook(
        tmp_path / "goes-on.ipynb",
        [LOAD, '%%runpod_job fail --no-raise\n{"message": "boom"}', AFTER],
    )
    notebook = execute(path, tmp_path / "home")
    assert notebook.cells[2].execution_count is not None
    assert not [o for c in notebook.cells for o in c.outputs if o.output_type == "error"]
    assert 'data-state="FAILED"' in html_of(notebook.cells[1])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[nbformat.NotebookNode, Path]:
    base = tmp_path_factory.mktemp("exported")
    path = write_notebook(base / "panels.ipynb", PANELS)
    notebook = execute(path, base / "home")
    # nbclient saves the state of every widget it ever saw, closed ones included; the
    # outputs need none of it, so the export is made without any.
    notebook.metadata.pop("widgets", None)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page = base / "panels.html"
    page.write_text(body)
    return notebook, page


def test_every_panel_ends_as_html_with_a_text_twin(
    exported: tuple[nbformat.NotebookNode, Path],
) -> None:
    notebook, _ = exported
    kinds = {
        1: ("nbext-job-panel", "COMPLETED", "hello from the echo job"),
        2: ("nbext-job-panel", "COMPLETED", "every streamed word stays"),
        3: ("nbext-job-panel", "FAILED", "a failure on purpose"),
        4: ("nbext-map-panel", "done", "5/5 · COMPLETED 5"),
        5: ("nbext-health-panel", "stopped", "in queue"),
        6: ("nbext-health-panel", "stopped", "<svg"),
    }
    for index, (kind, state, text) in kinds.items():
        cell = notebook.cells[index]
        page = html_of(cell)
        assert kind in page and f'data-state="{state}"' in page and text in page, index
        for output in cell.outputs:
            data = output.get("data", {})
            assert "application/vnd.jupyter.widget-view+json" not in data, index
            if "text/html" in data:
                assert data.get("text/plain"), index


def test_the_exported_page_shows_final_states_with_no_network(
    exported: tuple[nbformat.NotebookNode, Path], browser: BrowserContext
) -> None:
    _, page_file = exported
    page, _ = open_offline(browser, page_file)
    try:
        panels = page.locator(".nbext-static")
        expect(panels).to_have_count(STATIC_PANELS)
        for state in ("COMPLETED", "FAILED"):
            badge = page.locator(f'.nbext-job-panel .nbext-state[data-state="{state}"]')
            expect(badge.first).to_be_visible()
        expect(panels.locator(".nbext-stream")).to_have_text("every streamed word stays")
        expect(panels.locator(".nbext-error")).to_contain_text("a failure on purpose")
        expect(page.locator(".nbext-map-panel .nbext-map-counts")).to_contain_text("5/5")
        expect(page.locator(".nbext-health-chart")).to_be_visible()
        assert "Error displaying widget" not in page.content()
    finally:
        page.close()
