"""The front ends themselves, before any guide is read in them: each is what it claims.

A test that says "the guide reads the same with the widget manager disabled" proves
nothing if the manager was in fact on, and one that says "in Notebook 7" nothing if the
page was JupyterLab. So each front end is checked in the page on a bare widget: Notebook 7
draws ``ipywidgets.Button`` as a button (as JupyterLab does, test_lab_widgets.py);
JupyterLab without ``@jupyter-widgets/jupyterlab-manager`` shows its ``text/plain`` and no
button, as a front end whose widget renderer is missing or broken does.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .lab import LabPage
from .notebook_files import write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BUTTON = "import ipywidgets\nipywidgets.Button(description='Press me')"

APPS = {"lab-no-widgets": "JupyterLab", "notebook7": "Jupyter Notebook"}


@pytest.mark.parametrize("front_end", list(APPS), indirect=True)
def test_each_front_end_is_what_it_claims(
    front_end: LabPage, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.params["front_end"]
    path = write_notebook(front_end.server.root_dir / f"bare-widget-{name}.ipynb", [BUTTON])
    front_end.open(path.name).run_all()
    assert front_end.page.evaluate("() => window.jupyterapp.name") == APPS[name]
    cell = front_end.cell_with("ipywidgets.Button")
    if name == "lab-no-widgets":
        front_end.wait_for_output(cell, "Button(description='Press me'")
        expect(front_end.button(cell, "Press me")).to_have_count(0)
    else:
        expect(front_end.button(cell, "Press me")).to_be_visible()
        assert "Button(description" not in front_end.output(cell).inner_text()
    front_end.screenshot(f"front-end-{name}")
