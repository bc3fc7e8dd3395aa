"""The harness itself: JupyterLab 4 in Chromium renders ipywidgets and they respond.

Before any nbext notebook is checked in a browser, this proves every link of the chain
on a notebook the test writes: the server starts from this venv, the page loads, the
kernel runs all cells, a widget renders in a cell's output, a click in the browser
reaches the kernel's callback, and the change comes back to the page.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WIDGETS = """\
import ipywidgets as widgets

clicks = {"n": 0}
label = widgets.Label(value="not clicked yet")
button = widgets.Button(description="Press me")


def on_click(_button):
    clicks["n"] += 1
    label.value = f"clicked {clicks['n']} time(s) in the kernel"


button.on_click(on_click)
widgets.VBox([button, label])
"""

LATER = 'label.value = "changed by a later cell"'

ENVIRONMENT = """\
import os, sys
print("prefix:", sys.prefix)
print("runpod variables:", sorted(k for k in os.environ if k.startswith("RUNPOD_")))
"""


@pytest.fixture
def widget_notebook(lab_server: JupyterLabServer) -> str:
    write_notebook(lab_server.root_dir / "harness-widgets.ipynb", [ENVIRONMENT, WIDGETS, LATER])
    return "harness-widgets.ipynb"


def test_widgets_render_and_respond_to_clicks(lab: LabPage, widget_notebook: str) -> None:
    lab.open(widget_notebook)
    cell = lab.cell_with("widgets.Button")
    lab.run_through(cell)
    # The cell after it has not run: its prompt is empty and the label is untouched.
    expect(lab.cell_with("changed by a later cell").locator(".jp-InputPrompt")).to_have_text("[ ]:")
    assert lab.text_of(cell, ".widget-label") == "not clicked yet"
    lab.screenshot("harness-widgets-before-click")

    lab.click(cell, "Press me")
    expect(lab.output(cell).locator(".widget-label")).to_have_text(
        "clicked 1 time(s) in the kernel"
    )
    lab.click(cell, "Press me")
    expect(lab.output(cell).locator(".widget-label")).to_have_text(
        "clicked 2 time(s) in the kernel"
    )
    lab.screenshot("harness-widgets-after-clicks")


def test_kernel_runs_in_this_venv_without_service_credentials(
    lab: LabPage, widget_notebook: str
) -> None:
    import sys

    lab.open(widget_notebook).run_all()
    output = lab.wait_for_output(lab.cell_with("runpod variables"), "runpod variables:")
    text = output.inner_text()
    assert f"prefix: {sys.prefix}" in text
    assert "runpod variables: []" in text
    # Run all ran every cell, the last one included.
    label = lab.output(lab.cell_with("widgets.Button")).locator(".widget-label")
    expect(label).to_have_text("changed by a later cell")
    assert lab.errors() == []
