"""``%runpod logs --follow`` in real JupyterLab: lines stream into the panel while the
kernel is free, Stop turns the panel into static lines, and those lines are what the saved
notebook shows when reopened with no kernel and no widget state, readable in the Dark
theme, and in nbconvert's HTML opened with the network refused."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter
from playwright.sync_api import BrowserContext, expect

from .browser import open_offline
from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_media import set_theme
from .test_lab_panels import CONTRAST, VISIBLE, save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CELLS: list[str | dict[str, Any]] = [
    "from nbext import Client\n"
    "from nbext.emulator import Emulator, EmulatorServer\n"
    "from nbext.notebook import Connection, set_current\n"
    "\n"
    "emulator = Emulator()\n"
    "server = EmulatorServer(emulator).start()\n"
    "set_current(Connection(server=server))\n"
    "with Client(emulator.api_key, base_url=server.base_url,"
    " serverless_url=server.serverless_url) as v2:\n"
    '    v2.pods.create(name="desk", image="acme/lab:1", gpu={"id": "NVIDIA A40"})',
    "%load_ext nbext",
    "%runpod logs desk --follow",
    "kernel_free = True",
]


def test_follow_streams_stops_and_the_saved_notebook_keeps_the_lines(
    lab: LabPage, lab_server: JupyterLabServer, browser: BrowserContext
) -> None:
    path = write_notebook(lab_server.root_dir / "logs.ipynb", CELLS)
    lab.open("logs.ipynb").run_all(timeout_ms=120_000)
    assert lab.errors() == []
    cell = lab.cell_with("%runpod logs desk --follow")
    # the cell returned at once (the next one ran) while the panel goes on following
    expect(lab.cell_with("kernel_free = True").locator(".jp-InputPrompt")).to_have_text("[4]:")
    lines = lab.output(cell).locator(".nbext-logs-lines")
    expect(lines).to_contain_text("pulling image acme/lab:1", timeout=30_000)
    # the emulator's pod starts 8 s after its creation: that line comes while we watch
    expect(lines).to_contain_text("started", timeout=30_000)
    lab.screenshot("logs-following")
    lab.click(cell, "Stop following")
    static = lab.output(cell).locator(".nbext-static.nbext-logs-panel")
    expect(static).to_be_visible(timeout=10_000)
    expect(static).to_contain_text("pulling image acme/lab:1")
    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()

    lab.open("logs.ipynb")  # no kernel state, no widget state: only the file
    reopened = shown(lab, ".nbext-static.nbext-logs-panel")
    expect(reopened).to_have_count(1)
    expect(reopened).to_contain_text("pulling image acme/lab:1")
    expect(reopened).to_contain_text("stopped following")
    assert "Error displaying widget" not in shown(lab, ".jp-Notebook").inner_text()
    lab.screenshot("logs-reopened")

    try:
        set_theme(lab, "JupyterLab Dark")
        expect(shown(lab, ".nbext-static.nbext-logs-panel")).to_contain_text("pulling image")
        lab.page.wait_for_timeout(500)  # the theme's stylesheet applies
        texts = lab.page.evaluate(CONTRAST, f"{VISIBLE} .nbext-logs-panel")["texts"]
        assert texts, "no text measured in the log panel"
        low = [t for t in texts if t["ratio"] < 4.5]
        assert not low, low  # every line and label readable on the dark background
        lab.screenshot("logs-dark")
    finally:
        set_theme(lab, "JupyterLab Light")

    saved = nbformat.read(path, as_version=4)
    saved.metadata.pop("widgets", None)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(saved)
    page_file = path.with_suffix(".html")
    page_file.write_text(body)
    page, refused = open_offline(browser, page_file)
    try:
        exported = page.locator(".nbext-static.nbext-logs-panel")
        expect(exported).to_have_count(1)
        expect(exported).to_contain_text("pulling image acme/lab:1")
        expect(exported).to_contain_text("stopped following")
    finally:
        page.close()
    # refused: only the export template's own scripts (require.js, MathJax)
    assert all(url.split("?")[0].endswith(".js") for url in refused), refused
