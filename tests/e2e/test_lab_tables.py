"""``%runpod map`` and ``%runpod jobs`` tables in real JupyterLab: a ``$`` in an output is
text. JupyterLab typesets ``$...$`` in trusted HTML outputs with MathJax, so a table of
prices would turn "$5 and $6" into italic math and lose both signs, unless the table
opts out; this reads what the page shows, after MathJax has had its turn.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_panels import shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PRICES = "costs $5 and $6"
TABLES = [
    "%load_ext nbext",
    f"inputs = [{{'note': {PRICES!r}}}, {{'note': 'from $x$ to $y$'}}]\n%runpod map echo inputs",
    "%runpod jobs",
    # a control: the same text as plain HTML is typeset, so the check above can fail
    f"from IPython.display import HTML\nHTML('<p class=\"control\">{PRICES}</p>')",
]

TYPESET = "mjx-container, .MathJax, .MathJax_Preview"


def test_dollar_signs_in_map_and_jobs_tables_are_not_typeset(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    write_notebook(lab_server.root_dir / "tables.ipynb", TABLES)
    lab.open("tables.ipynb").run_all(timeout_ms=180_000)
    assert lab.errors() == []
    control = shown(lab, "p.control")
    expect(control.locator(TYPESET).first).to_be_attached(timeout=30_000)  # MathJax ran
    table = lab.output(lab.cell_with("%runpod map echo inputs")).locator("table.nbext-listing")
    expect(table).to_have_count(1)
    expect(table).to_contain_text(PRICES)  # in the input's column and the output's
    expect(table).to_contain_text("from $x$ to $y$")
    expect(table.locator(TYPESET)).to_have_count(0)
    # the jobs listing has no output column; it is drawn by the same table, opted out too
    jobs = lab.output(lab.cell_with("%runpod jobs")).locator("table.nbext-listing")
    expect(jobs).to_have_class(re.compile(r"\bmathjax_ignore\b"))
    expect(jobs.locator(TYPESET)).to_have_count(0)
