"""A cold start in real JupyterLab: while the job waits, its panel says the worker is
initializing and for how long; at the end, and after save and reopen, what the cold
start took and what the job cost (an estimate from the catalog's price). The kernel's
own emulator runs the ``cold-start`` teaching scenario on the real clock (a browser
watches real time), so the test lasts the scenario's 6 s.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

COLD = [
    "%load_ext nbext",
    "%runpod emulator scenario echo cold-start seconds=6",
    '%%runpod_job echo\n{"text": "after a cold start"}',
]

WATCH = """() => {
    window.__phases = [];
    const tick = () => {
        const panel = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .nbext-job-panel');
        if (panel) {
            const line = panel.querySelector('.nbext-phase-line');
            window.__phases.push([panel.dataset.state, line ? line.innerText : '']);
            if (panel.dataset.state === 'COMPLETED') return;
        }
        setTimeout(tick, 50);
    };
    tick();
}"""


def test_the_phase_line_counts_the_cold_start_and_the_saved_output_keeps_it(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    path = write_notebook(lab_server.root_dir / "cold.ipynb", COLD)
    lab.open(path.name)
    lab.page.evaluate(WATCH)
    lab.run_all(timeout_ms=120_000)
    assert lab.errors() == []
    samples = lab.page.evaluate("() => window.__phases")
    waiting = [line for state, line in samples if state == "IN_QUEUE" and line]
    starting = re.compile(r"in queue · workers 0 ready, 1 initializing \((\d+(\.\d)?) s\)")
    counted = {m.group(1) for line in waiting if (m := starting.fullmatch(line))}
    assert len(counted) >= 2, samples[-20:]  # seen in the page, counting up
    final = shown(lab, '.nbext-job-panel[data-state="COMPLETED"] .nbext-phase-line')
    expect(final).to_contain_text(re.compile(r"cold start \d(\.\d)? s, ran "))
    kept = final.inner_text()
    cost = shown(lab, '.nbext-job-panel[data-state="COMPLETED"] .nbext-cost')
    expect(cost).to_contain_text(re.compile(r"cost \$\d+\.\d+ \(estimate\)"))
    kept_cost = cost.inner_text()
    lab.screenshot("phase-cold-start")

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run
    reopened = shown(lab, '.nbext-job-panel[data-state="COMPLETED"] .nbext-phase-line')
    expect(reopened).to_have_text(kept)
    cost = shown(lab, '.nbext-job-panel[data-state="COMPLETED"] .nbext-cost')
    expect(cost).to_have_text(kept_cost)
