"""The guides in a real browser: what a person sees when they run them in JupyterLab.

Issue 6 names three things to check by eye, and these tests check them in Chromium:

- the quickstart's job panel reaches COMPLETED (test_front_end_guides.py, which reads the
  quickstart in every front end);
- in the streaming guide, streamed text appears in the panel before the job ends
  (watched in the page by a MutationObserver, which records the badge's state at the
  instant text first shows: "COMPLETED" there would mean the text came only at the end);
- in background mode, the panel's Cancel button turns its badge to CANCELLED.

Each runs only once its notebook exists in ``notebooks/``. The panel's DOM is the job
panel's stable classes (``nbext/notebook/widgets``): ``.nbext-job-panel`` around one job,
``.nbext-state[data-state]`` for the badge, ``.nbext-stream`` for streamed text, and the
buttons ``Cancel``/``Retry``. What the guides must contain for these tests: a cell
streaming text with ``--stream`` (the streaming guide), and a ``--background`` cell whose
job runs long enough (several seconds) for a person to press Cancel.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .jupyter import ROOT
from .lab import LabPage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

STREAMING = "02-streaming.ipynb"
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT", "REMOVED"}
RUN_TIMEOUT_MS = 180_000


def needs(name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not (ROOT / "notebooks" / name).exists(),
        reason=f"notebooks/{name} does not exist yet (issue 6)",
    )


def badge(panel: Locator) -> Locator:
    return panel.locator(".nbext-job-badge .nbext-state")


def state_of(panel: Locator) -> str:
    return badge(panel).get_attribute("data-state") or ""


def panels(lab: LabPage) -> Locator:
    return lab.page.locator(".jp-NotebookPanel:visible .nbext-job-panel")


WATCH_FIRST_TEXT = """
() => {
    window.__nbextFirstText = [];
    const seen = new WeakSet();
    const look = () => {
        for (const panel of document.querySelectorAll('.nbext-job-panel')) {
            if (seen.has(panel)) continue;
            const text = panel.querySelector('.nbext-stream');
            if (!text || !text.textContent.trim()) continue;
            seen.add(panel);
            const badge = panel.querySelector('.nbext-state');
            window.__nbextFirstText.push({
                state: badge ? badge.dataset.state : null,
                text: text.textContent.slice(0, 80),
            });
        }
    };
    new MutationObserver(look).observe(document.body, {
        subtree: true, childList: true, characterData: true,
    });
}
"""


@needs(STREAMING)
def test_streamed_text_appears_before_the_job_ends(lab: LabPage) -> None:
    lab.open(STREAMING)
    lab.page.evaluate(WATCH_FIRST_TEXT)
    lab.run_all(RUN_TIMEOUT_MS)
    assert lab.errors() == []
    seen: list[dict[str, str]] = lab.page.evaluate("() => window.__nbextFirstText")
    assert seen, "no job panel showed streamed text"
    live = [entry for entry in seen if entry["state"] not in FINAL_STATES]
    assert live, f"streamed text appeared only once jobs had ended: {seen}"
    lab.screenshot("streaming")


@needs(STREAMING)
def test_cancel_button_cancels_a_background_job(lab: LabPage) -> None:
    lab.open(STREAMING)
    cell = lab.cell_with("--background").first
    lab.run_through(cell, RUN_TIMEOUT_MS)
    panel = lab.output(cell).locator(".nbext-job-panel")
    expect(panel).to_be_visible()
    assert state_of(panel) in {"SUBMITTING", "IN_QUEUE", "IN_PROGRESS"}, (
        "the background job ended before it could be cancelled; the guide's background "
        f"job must run for several seconds (state {state_of(panel)})"
    )
    lab.screenshot("background-running")
    lab.click(cell, "Cancel")
    expect(badge(panel)).to_have_attribute("data-state", "CANCELLED", timeout=15_000)
    lab.screenshot("background-cancelled")
    assert lab.errors() == []
