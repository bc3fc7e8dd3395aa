"""``%runpod deploy --load-balancer`` in real JupyterLab: while a worker's health path
answers 204 the cell shows a live panel counting the wait and saying what ``/ping``
answered; a worker that then serves ends it "serving", one whose ``/ping`` answers 503
fails the deploy within seconds with an error naming the status, and both final panels
stay, static, after save and reopen with no kernel.

The worker is a stdlib HTTP server whose health path answers 204 until the test creates
the file the server looks for, then ``$HEALTH_STATUS``: the test decides when a start
ends, once the page has shown the wait.
"""

from __future__ import annotations

import re
import textwrap
import time

import pytest
from playwright.sync_api import Locator, expect

from tests.lb_servers import write

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_chat import LUMINANCE
from .test_lab_media import set_theme
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LOADING_SERVER = textwrap.dedent(
    """
    import os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from pathlib import Path

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            loaded = Path(os.environ["READY_FILE"]).exists()
            self.send_response(int(os.environ["HEALTH_STATUS"]) if loaded else 204)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    print("loading weights from /models", flush=True)
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)
SERVES = "--name serves"
REFUSES = "--name refuses"
FINAL = '.nbext-static.nbext-startup-panel[data-state="ended"]'
REFUSED = re.compile(
    r"could not start: its health path GET /ping answered 503, not 200 \(ready\) or 204 "
    r"\(starting\)"
)
LAST_LINE = "loading weights from /models"
"""What the server printed last: the error ends with it."""


def watch_the_wait(lab: LabPage, cell: Locator, endpoint: str) -> Locator:
    """The cell's live panel, once it has counted past its first seconds."""
    live = lab.output(cell).locator('.nbext-live.nbext-startup-panel[data-state="waiting"]')
    title = f"deploying loading.py as endpoint '{endpoint}': waited"
    expect(live).to_contain_text(re.compile(title + r" \d+ s of 120 s"), timeout=120_000)
    first = int(re.findall(r"waited (\d+) s", live.inner_text())[0])
    later = "|".join(str(n) for n in range(first + 2, 120))  # two counts on at least
    expect(live).to_contain_text(re.compile(f"{title} ({later}) s of 120 s"), timeout=30_000)
    expect(live).to_contain_text("GET /ping answered 204: initializing")
    expect(live).to_contain_text("interrupt the kernel (■) to stop waiting")
    return live


def check_panels(lab: LabPage) -> None:
    """Both deploys' final panels and the failure, as a reader sees them."""
    panels = shown(lab, FINAL)
    expect(panels).to_have_count(2)
    expect(panels.first).to_contain_text(
        re.compile(r"endpoint 'serves': waited \d+ s of 120 s.*serving after \d+\.\d s", re.S)
    )
    expect(panels.first).not_to_contain_text("interrupt")
    expect(panels.nth(1)).to_contain_text("endpoint 'refuses'")
    expect(panels.nth(1)).to_contain_text(REFUSED)
    for panel, outcome in zip(
        panels.all(), (r"serving after", r"loading\.py could not"), strict=True
    ):
        lines = panel.inner_text().splitlines()  # as drawn: the outcome on a line of its own
        assert lines[1] == "GET /ping answered 204: initializing", lines
        assert re.match(outcome, lines[2]), lines
    expect(lab.output(lab.cell_with(SERVES))).to_contain_text(
        "deployed loading.py as load-balancing endpoint 'serves'"
    )
    error = lab.output(lab.cell_with(REFUSES)).locator(".jp-RenderedText", has_text="deploy:")
    expect(error).to_contain_text(REFUSED)
    expect(error).to_contain_text(LAST_LINE)
    expect(shown(lab, ".nbext-live")).to_have_count(0)


def test_a_slow_start_is_counted_live_and_a_503_fails_within_seconds_and_both_stay(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    root = lab_server.root_dir
    write(root, "loading.py", LOADING_SERVER)
    loaded, broken = root / "loaded", root / "broken"
    cells = [
        "%load_ext nbext",
        f"%runpod deploy loading.py --load-balancer {SERVES} "
        f"--env READY_FILE={loaded} --env HEALTH_STATUS=200",
        f"%runpod deploy loading.py --load-balancer {REFUSES} "
        f"--env READY_FILE={broken} --env HEALTH_STATUS=503",
    ]
    path = write_notebook(root / "startup.ipynb", cells)
    lab.open(path.name)
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    serves = lab.cell_with(SERVES)
    live = watch_the_wait(lab, serves, "serves")
    lab.screenshot("startup-live")
    loaded.touch()
    expect(lab.output(serves).locator(FINAL)).to_contain_text("serving after", timeout=30_000)
    expect(live).to_have_count(0)

    refuses = lab.cell_with(REFUSES)
    watch_the_wait(lab, refuses, "refuses")
    broken.touch()
    started = time.monotonic()
    expect(lab.output(refuses).locator(FINAL)).to_contain_text(REFUSED, timeout=15_000)
    refused_after = time.monotonic() - started
    lab.wait_until_idle(timeout_ms=30_000)
    check_panels(lab)
    lab.screenshot("startup-ended")

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run
    check_panels(lab)
    try:
        set_theme(lab, "JupyterLab Dark")
        assert shown(lab, FINAL).first.evaluate(LUMINANCE) > 0.5  # light text, dark page
        lab.screenshot("startup-dark")
    finally:
        set_theme(lab, "JupyterLab Light")
    assert refused_after < 10, f"a 503 failed the deploy after {refused_after:.1f} s"
