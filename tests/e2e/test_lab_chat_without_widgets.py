"""A chat answer where its Cancel button cannot be drawn: JupyterLab with
``@jupyter-widgets/jupyterlab-manager`` disabled (issue 25, requirement 1).

In a cell that awaits, the answer has a Cancel button under it; here the page shows the
button's text fallback instead, which says to interrupt the kernel, and interrupting it
(the ■ button's call) cancels the job on the emulator. Nothing shows a widget's repr. The
job panels' side is test_lab_without_widgets.py; the answer growing in the page,
test_lab_chat.py (the chat draws no widget for its answer in any front end).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .guide_reading import UNREADABLE
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_chat import CANCEL
from .test_lab_panels import VISIBLE
from .test_lab_without_widgets import INTERRUPT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def shown_text(front_end: LabPage) -> str:
    text: str = front_end.page.locator(f"{VISIBLE} .jp-Notebook").inner_text()
    return text


@pytest.mark.parametrize("front_end", ["lab-no-widgets"], indirect=True)
def test_interrupting_the_kernel_cancels_a_streaming_answer(front_end: LabPage) -> None:
    name = front_end.server.log_path.stem
    path = write_notebook(front_end.server.root_dir / f"live-chat-cancel-{name}.ipynb", CANCEL)
    front_end.open(path.name)
    front_end.page.evaluate(
        "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
    )
    cell = front_end.cell_with("%%runpod_chat llm")
    output = front_end.output(cell)
    streaming = output.locator('.nbext-chat[data-state="IN_PROGRESS"] p').first
    expect(streaming).to_be_visible(timeout=60_000)
    fallback = output.locator('[data-mime-type="text/plain"]')  # where Cancel would be
    expect(fallback).to_have_text("interrupt the kernel (■) to stop the answer and cancel its job")
    match = UNREADABLE.search(output.inner_text())
    assert match is None, f"the live panel shows {match.group()!r}"
    front_end.screenshot(f"live-chat-before-interrupt-{name}")

    front_end.page.evaluate(INTERRUPT)
    expect(output.locator('.nbext-chat[data-state="CANCELLED"]')).to_be_visible()
    front_end.wait_until_idle()
    errors = front_end.errors()
    assert len(errors) == 1 and "was cancelled" in errors[0], errors
    check = front_end.cell_with("_service = ")
    front_end.page.evaluate(
        "(i) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }",
        front_end.index_of(check),
    )
    front_end.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
    front_end.wait_for_output(check, "llm jobs: ['CANCELLED', 'COMPLETED']")  # and /v1/models
    assert not UNREADABLE.search(shown_text(front_end))
    front_end.screenshot(f"live-chat-interrupted-{name}")
