"""A batch's panel in real JupyterLab: live with its Cancel, then static, and the same
after save and reopen (it names the batch and how to attach), readable in the dark theme.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_panels import CONTRAST, VISIBLE, save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CELLS = [
    "%load_ext nbext",
    "naps = [{'seconds': 2, 'n': n} for n in range(12)]\n%runpod batch sleep naps -o res",
    "res['state'].value_counts().to_dict()",
]


def test_a_batch_panel_cancels_ends_static_and_reads_the_same_after_reopen(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    write_notebook(lab_server.root_dir / "batch.ipynb", CELLS)
    lab.open("batch.ipynb")
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = lab.cell_with("%runpod batch sleep")
    live = lab.output(cell).locator(".nbext-live.nbext-map-panel")
    expect(live).to_contain_text("attach from any kernel: %runpod batch attach sleep batch_")
    found = re.search(r"batch_\w+", live.inner_text())
    assert found is not None
    batch_id = found.group(0)
    lab.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Dark'})"
    )
    lab.page.wait_for_function("() => document.body.dataset.jpThemeName === 'JupyterLab Dark'")
    lab.page.wait_for_timeout(500)  # the theme's stylesheet applies
    texts = lab.page.evaluate(CONTRAST, f"{VISIBLE} .nbext-map-panel")["texts"]
    assert texts and min(t["ratio"] for t in texts) >= 4.5, texts
    lab.button(cell, "Cancel").click()  # queued requests dropped, running ones finish
    static = lab.output(cell).locator(".nbext-static.nbext-map-panel")
    expect(static).to_contain_text("CANCELLED: every request ended", timeout=60_000)
    lab.wait_until_idle()
    assert lab.errors() == []
    expect(lab.output(lab.cell_with("value_counts"))).to_contain_text("'CANCELLED'")
    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()

    lab.open("batch.ipynb")  # no kernel, no widget state: the saved output only
    reopened = shown(lab, ".nbext-static.nbext-map-panel")
    expect(reopened).to_contain_text(f"read it again: %runpod batch attach sleep {batch_id}")
    expect(reopened).to_contain_text("12/12")
    lab.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Light'})"
    )
    lab.screenshot("batch-reopened")
