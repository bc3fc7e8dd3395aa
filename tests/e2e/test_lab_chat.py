"""``%%runpod_chat`` in real JupyterLab: the answer grows in the page while its job runs,
is drawn as Markdown, and stays after save and reopen, in the Dark theme, and in
nbconvert's HTML opened with no network. The panel is HTML updated through its display
id, so none of this needs the widget manager; the Cancel button under a streaming answer
(a widget, in its own output) is emptied when the answer ends.
"""

from __future__ import annotations

import nbformat
import pytest
from nbconvert import HTMLExporter
from playwright.sync_api import BrowserContext, expect

from .browser import open_offline
from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import newest_job_cell, write_notebook
from .test_lab_media import set_theme
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHAT = [
    "%load_ext nbext",
    "%%runpod_chat llm --system 'Answer briefly.'\nTell me about a cold start",
]

WATCH = """() => {
    window.__chat = [];
    const tick = () => {
        const panel = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .nbext-chat');
        if (panel) {
            const answer = panel.querySelector('.nbext-chat-answer');
            window.__chat.push([panel.dataset.state, answer ? answer.innerText.length : 0]);
            if (panel.dataset.state === 'COMPLETED') return;
        }
        setTimeout(tick, 20);
    };
    tick();
}"""

LUMINANCE = """(element) => {
    const [r, g, b] = getComputedStyle(element).color.match(/\\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def check_markdown(root: str, page: object) -> None:
    """The demo's answer drawn as Markdown: emphasis, a list and a code block."""
    for selector in ("em", "ul li", "pre code"):
        expect(page.locator(f"{root} .nbext-chat-answer {selector}").first).to_be_visible()  # type: ignore[attr-defined]


def test_the_answer_streams_then_stays_after_reopen_dark_and_exported(
    lab: LabPage, lab_server: JupyterLabServer, browser: BrowserContext
) -> None:
    path = write_notebook(lab_server.root_dir / "chat.ipynb", CHAT)
    lab.open(path.name)
    lab.page.evaluate(WATCH)
    lab.run_all(timeout_ms=120_000)
    assert lab.errors() == []
    samples = lab.page.evaluate("() => window.__chat")
    growing = {length for state, length in samples if state == "IN_PROGRESS" and length}
    assert len(growing) >= 3, samples[-20:]  # the text grew in the page before the end
    assert samples[-1][0] == "COMPLETED"
    notebook = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    check_markdown(notebook, lab.page)
    expect(shown(lab, ".nbext-chat-stats")).to_contain_text("tokens/s")
    lab.screenshot("chat-live")

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run
    expect(shown(lab, '.nbext-chat[data-state="COMPLETED"]')).to_have_count(1)
    check_markdown(notebook, lab.page)

    try:
        set_theme(lab, "JupyterLab Dark")
        paragraph = shown(lab, ".nbext-chat-answer p").first
        assert paragraph.evaluate(LUMINANCE) > 0.5  # light text on the dark page
        lab.screenshot("chat-dark")
    finally:
        set_theme(lab, "JupyterLab Light")

    saved = nbformat.read(path, as_version=4)
    kinds = {kind for c in saved.cells for o in c.get("outputs", []) for kind in o.get("data", {})}
    assert {"text/html", "text/markdown", "text/plain"} <= kinds, kinds
    assert "application/vnd.jupyter.widget-view+json" not in kinds
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(saved)
    page_file = path.with_suffix(".html")
    page_file.write_text(body)
    page, refused = open_offline(browser, page_file)
    try:
        check_markdown("body", page)
    finally:
        page.close()
    assert all(url.split("?")[0].endswith(".js") for url in refused), refused


CANCEL = [
    "%load_ext nbext",
    "%%runpod_chat llm\nTell me a long story",
    "after = True",
    newest_job_cell("llm"),
]


def test_cancel_while_the_answer_streams(lab: LabPage, lab_server: JupyterLabServer) -> None:
    """ipykernel 7.4+ hears the Cancel button while the chat cell awaits: the job is
    cancelled on the service, the cell ends Interrupted, and no widget view is saved."""
    path = write_notebook(lab_server.root_dir / "chat-cancel.ipynb", CANCEL)
    lab.open(path.name)
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = lab.cell_with("%%runpod_chat llm")
    streaming = lab.output(cell).locator('.nbext-chat[data-state="IN_PROGRESS"] p').first
    expect(streaming).to_be_visible(timeout=60_000)
    expect(lab.output(cell)).to_contain_text("Cancel (below)")
    lab.click(cell, "Cancel")
    expect(lab.output(cell).locator('.nbext-chat[data-state="CANCELLED"]')).to_be_visible()
    lab.wait_until_idle()
    errors = lab.errors()
    assert len(errors) == 1 and "was cancelled" in errors[0], errors
    expect(lab.output(cell)).to_contain_text("stopped by the Cancel button")
    expect(lab.button(cell, "Cancel")).to_have_count(0)
    expect(lab.cell_with("after = True").locator(".jp-InputPrompt")).to_have_text("[ ]:")
    check = lab.cell_with("_service = ")
    lab.start_cell(check)
    lab.wait_for_output(check, "newest llm job: CANCELLED")
    save(lab)
    saved = nbformat.read(path, as_version=4)
    kinds = {kind for c in saved.cells for o in c.get("outputs", []) for kind in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" not in kinds, kinds
