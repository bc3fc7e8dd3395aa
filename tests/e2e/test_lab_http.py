"""``%%runpod_http`` in real JupyterLab: a request's panel says what HTTP says (the status
as its badge, the method and path, the worker that answered, time and cost), never a
job's words; an event stream is drawn event by event while it goes on, and every
request's panel stays after save and reopen, in the Dark theme, and in nbconvert's HTML
opened with no network, with no widget saved.

The worker is a FastAPI server (``tests/lb_servers.py``) deployed from the notebook with
``%runpod deploy --load-balancer``; its event stream holds its second event until the
test creates the file the server waits for, once the page shows the first.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbconvert import HTMLExporter
from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.lb_servers import FASTAPI_SERVER, write

from .browser import open_offline
from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_chat import LUMINANCE
from .test_lab_media import set_theme
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

JOB_WORDS = re.compile(r"\bjob\b|queue|COMPLETED|IN_PROGRESS|data:", re.IGNORECASE)
"""What a request's panel never says: a job's words, or an event stream's raw lines."""
STREAM = "%runpod_http api GET /count"
FINAL = '.nbext-static.nbext-request-panel[data-state="ended"]'


def check_panels(panels: Locator, page: Page) -> None:
    """The four requests' final panels, as a reader sees them wherever they are drawn."""
    expect(panels).to_have_count(4)
    for panel in panels.all():
        expect(panel.locator('.nbext-state[data-state="200 OK"]')).to_have_text("200 OK")
        expect(panel).to_contain_text(re.compile(r"· worker worker-\S+"))
        expect(panel).not_to_contain_text(JOB_WORDS)
    stream = panels.first
    expect(stream).to_contain_text("api GET /count")
    expect(stream.locator(".nbext-request-text pre")).to_have_text('one\n{"n": 2}')
    expect(stream.locator(".nbext-request-cost")).to_contain_text("$")
    expect(panels.nth(1).locator(".nbext-listing")).to_have_count(1)
    expect(panels.nth(2).locator("img")).to_have_count(1)
    expect(panels.nth(3)).to_contain_text("hello")
    expect(page.locator(".nbext-live")).to_have_count(0)


def test_a_request_is_drawn_live_event_by_event_and_stays_after_reopen_dark_and_exported(
    lab: LabPage, lab_server: JupyterLabServer, browser: BrowserContext
) -> None:
    root = lab_server.root_dir
    write(root, "lb_app.py", FASTAPI_SERVER)
    gate = root / "gate"
    cells = [
        "%load_ext nbext",
        f"%runpod deploy lb_app.py --load-balancer --name api --env GATE_FILE={gate}",
        STREAM,
        "%runpod_http api GET /items",
        "%runpod_http api GET /picture",
        '%%runpod_http api POST /echo\n{"text": "hello"}',
    ]
    path = write_notebook(root / "http.ipynb", cells)
    lab.open(path.name)
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    output = lab.output(lab.cell_with(STREAM))
    live = output.locator('.nbext-live.nbext-request-panel[data-state="answering"]')
    expect(live.locator(".nbext-request-text pre")).to_have_text("one", timeout=120_000)
    expect(live.locator('.nbext-state[data-state="200 OK"]')).to_be_visible()
    expect(live).to_contain_text(re.compile(r"api GET /count · worker worker-\S+"))
    expect(live).to_contain_text("interrupt the kernel")
    expect(live).not_to_contain_text(JOB_WORDS)
    lab.screenshot("http-live")
    gate.touch()
    expect(output.locator(FINAL)).to_be_visible(timeout=60_000)
    lab.wait_until_idle(timeout_ms=120_000)
    assert lab.errors() == []
    notebook = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    check_panels(shown(lab, FINAL), lab.page.locator(notebook))

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run
    check_panels(shown(lab, FINAL), lab.page.locator(notebook))
    try:
        set_theme(lab, "JupyterLab Dark")
        text = shown(lab, ".nbext-request-text pre").first
        assert text.evaluate(LUMINANCE) > 0.5  # light text on the dark page
        lab.screenshot("http-dark")
    finally:
        set_theme(lab, "JupyterLab Light")

    saved = nbformat.read(path, as_version=4)
    kinds = {kind for c in saved.cells for o in c.get("outputs", []) for kind in o.get("data", {})}
    assert {"text/html", "text/plain"} <= kinds
    assert "application/vnd.jupyter.widget-view+json" not in kinds, kinds
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(saved)
    page_file = path.with_suffix(".html")
    page_file.write_text(body)
    page, refused = open_offline(browser, page_file)
    try:
        check_panels(page.locator(FINAL), page)
    finally:
        page.close()
    assert all(url.split("?")[0].endswith(".js") for url in refused), refused
