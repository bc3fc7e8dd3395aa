"""``%%runpod_http`` in real JupyterLab: an event stream's first half is in the page before
its worker sends the second, and every request's panel stays after save and reopen, in the
Dark theme, with no widget saved. The worker is a FastAPI server (``tests/lb_servers.py``)
deployed from the notebook with ``%runpod deploy --load-balancer``; the test lets the
stream go on by creating the file the server waits for, once the page shows the first
event.
"""

from __future__ import annotations

import nbformat
import pytest
from playwright.sync_api import expect

from tests.lb_servers import FASTAPI_SERVER, write

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_chat import LUMINANCE
from .test_lab_media import set_theme
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_a_stream_is_drawn_live_and_every_panel_stays_after_reopen(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    root = lab_server.root_dir
    write(root, "lb_app.py", FASTAPI_SERVER)
    gate = root / "gate"
    cells = [
        "%load_ext nbext",
        f"%runpod deploy lb_app.py --load-balancer --name api --env GATE_FILE={gate}",
        "%runpod_http api GET /count",
        "%runpod_http api GET /items",
        "%runpod_http api GET /picture",
        '%%runpod_http api POST /echo\n{"text": "hello"}',
    ]
    path = write_notebook(root / "http.ipynb", cells)
    lab.open(path.name)
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    stream = lab.output(lab.cell_with("%runpod_http api GET /count"))
    live = stream.locator('.nbext-live.nbext-job-panel[data-state="IN_PROGRESS"]')
    expect(live).to_contain_text("data: one", timeout=120_000)
    expect(live).not_to_contain_text("data: two")
    lab.screenshot("http-live")
    gate.touch()
    expect(stream.locator('.nbext-static[data-state="COMPLETED"]')).to_contain_text("data: two")
    lab.wait_until_idle(timeout_ms=120_000)
    assert lab.errors() == []
    expect(shown(lab, ".nbext-job-panel .nbext-listing")).to_have_count(1)
    expect(shown(lab, ".nbext-job-panel img")).to_have_count(1)
    expect(shown(lab, '.nbext-static.nbext-job-panel[data-state="COMPLETED"]')).to_have_count(4)

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run
    panels = shown(lab, '.nbext-static.nbext-job-panel[data-state="COMPLETED"]')
    expect(panels).to_have_count(4)
    expect(panels.first).to_contain_text("200 OK")
    expect(shown(lab, ".nbext-job-panel img")).to_have_count(1)
    try:
        set_theme(lab, "JupyterLab Dark")
        text = shown(lab, ".nbext-job-text pre").first
        assert text.evaluate(LUMINANCE) > 0.5  # light text on the dark page
        lab.screenshot("http-dark")
    finally:
        set_theme(lab, "JupyterLab Light")
    saved = nbformat.read(path, as_version=4)
    kinds = {kind for c in saved.cells for o in c.get("outputs", []) for kind in o.get("data", {})}
    assert {"text/html", "text/plain"} <= kinds
    assert "application/vnd.jupyter.widget-view+json" not in kinds, kinds
