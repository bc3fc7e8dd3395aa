"""Media outputs in real JupyterLab: the gallery's pictures decode and the sound has its
player, live, after save and reopen, in the Dark theme, and in nbconvert's HTML opened
with no network; a large picture's "show full size" link reaches its file beside the
notebook with no kernel, and a reopened notebook shows no widget error anywhere.

One notebook, one kernel start: e2e tests are the slow part of the suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import nbformat
import pytest
from nbconvert import HTMLExporter
from PIL import Image
from playwright.sync_api import BrowserContext, Locator, Page, expect

from .browser import open_offline
from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import write_notebook
from .test_lab_panels import save, shown

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NOISE = """\
import base64, io, random
import nbext
from PIL import Image

def noise(job):
    pixels = random.Random(5).randbytes(700 * 700 * 3)
    out = io.BytesIO()
    Image.frombytes("RGB", (700, 700), pixels).save(out, "PNG")
    return {"images": [base64.b64encode(out.getvalue()).decode("ascii")]}

nbext.deploy(noise)"""

MEDIA = [
    "%load_ext nbext",
    '%%runpod_job image-gen -o art\n{"prompt": "a lake at dawn", "seed": 1, "step_ms": 0}',
    '%%runpod_job text-to-speech\n{"text": "hello from the emulator"}',
    NOISE,
    "%%runpod_job noise\n{}",
    "prompts = [{'prompt': p, 'seed': 1, 'width': 256, 'height': 256, 'step_ms': 0}"
    " for p in ('a lake', 'a forest')]\n%runpod map image-gen prompts",
]

PICTURES = """(root) => {
    const images = [...document.querySelectorAll(root + ' .jp-OutputArea img')];
    if (!images.length || !images.every((i) => i.complete)) return null;
    return images.map((i) => ({
        alt: i.alt, width: i.naturalWidth, inline: i.src.startsWith('data:image/'),
        row: i.closest('td')?.getBoundingClientRect().height ?? 0,
        where: i.closest('.nbext-media-inline') ? 'table' : 'gallery',
    }));
}"""


def pictures(page: Page, root: str) -> list[dict[str, Any]]:
    """Every picture in the outputs under ``root``, once all have loaded or failed."""
    found: list[dict[str, Any]] = page.wait_for_function(PICTURES, arg=root).json_value()
    return found


def check_media(page: Page, root: str) -> None:
    """The gallery's pictures decode (naturalWidth > 0) and the sound has its player."""
    found = pictures(page, root)
    assert all(p["width"] > 0 and p["inline"] for p in found), found
    gallery = [(p["alt"].split(" ")[0], p["width"]) for p in found if p["where"] == "gallery"]
    assert gallery == [("images[0]:", 512), ("images[0]:", 512)], found  # art; noise thumbnail
    table = [p for p in found if p["where"] == "table"]
    assert len(table) == 2 and all(p["row"] < 80 for p in table), found  # one line a row
    audio = page.locator(f"{root} .jp-OutputArea audio[controls]")
    expect(audio).to_have_count(1)
    assert audio.evaluate("(a) => a.src.startsWith('data:audio/wav;base64,')")


FETCH_PICTURE = """async (a) => {
    const response = await fetch(a.href);
    const bitmap = await createImageBitmap(await response.blob());
    return {status: response.status, type: response.headers.get('content-type'),
            width: bitmap.width, height: bitmap.height};
}"""


def check_full_size_link(lab: LabPage, cell: Locator) -> str:
    """The noise picture's "show full size" link is served by JupyterLab from the file
    beside the notebook (its contents API, ``/files/``): status 200, a 700 px picture.
    Returns the file's name."""
    link = lab.output(cell).locator("a.nbext-full-size")
    expect(link).to_have_count(1)
    expect(link).to_have_text("show full size")
    expect(link).to_have_attribute("target", "_blank")
    # JupyterLab resolves a relative link in an output to the file's download URL
    link.evaluate(
        "(a) => new Promise((done) => { const check = () => "
        "a.href.includes('/files/nbext-media/') ? done() : setTimeout(check, 50); check(); })"
    )
    served = link.evaluate(FETCH_PICTURE)
    assert served == {"status": 200, "type": "image/png", "width": 700, "height": 700}, served
    return Path(unquote(urlparse(link.evaluate("(a) => a.href")).path)).name


def test_media_render_live_after_reopen_in_the_dark_theme_and_exported(
    lab: LabPage, lab_server: JupyterLabServer, browser: BrowserContext
) -> None:
    path = write_notebook(lab_server.root_dir / "media.ipynb", MEDIA)
    lab.open(path.name).run_all(timeout_ms=180_000)
    assert lab.errors() == []
    notebook = ".jp-NotebookPanel:not(.lm-mod-hidden)"

    # live: the large picture is a thumbnail, its full file written beside the notebook
    cell = lab.cell_with("%%runpod_job noise")
    expect(lab.output(cell).locator('img[alt$="(thumbnail)"]')).to_have_count(1)
    written = lab_server.root_dir / "nbext-media" / check_full_size_link(lab, cell)
    with Image.open(written) as full:
        assert (full.format, full.size) == ("PNG", (700, 700))
    check_media(lab.page, notebook)
    lab.output(cell).scroll_into_view_if_needed()
    lab.screenshot("media-live")

    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()
    lab.open(path.name)  # a fresh page: no kernel of the run, no widget state
    check_media(lab.page, notebook)
    cell = lab.cell_with("%%runpod_job noise")
    assert check_full_size_link(lab, cell) == written.name
    assert "Error displaying widget" not in shown(lab, ".jp-Notebook").inner_text()
    saved = nbformat.read(path, as_version=4)
    kinds = {kind for c in saved.cells for o in c.get("outputs", []) for kind in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" not in kinds, kinds

    try:
        set_theme(lab, "JupyterLab Dark")
        check_media(lab.page, notebook)
        caption = shown(lab, ".nbext-media-item figcaption").first
        assert caption.evaluate("(c) => getComputedStyle(c).color") != "rgb(0, 0, 0)"
        link = shown(lab, "a.nbext-full-size")
        assert link.evaluate("(a) => getComputedStyle(a).color") != "rgb(0, 0, 0)"
        lab.screenshot("media-dark")
    finally:
        set_theme(lab, "JupyterLab Light")

    saved.metadata.pop("widgets", None)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(saved)
    page_file = path.with_suffix(".html")
    page_file.write_text(body)
    page, refused = open_offline(browser, page_file)
    try:
        check_media(page, "body")
        href = page.locator("a.nbext-full-size").evaluate("(a) => a.href")
    finally:
        page.close()
    # refused: only the export template's own scripts (require.js, MathJax); no media
    assert all(url.split("?")[0].endswith(".js") for url in refused), refused
    # offline, beside the folder, the link is the file on disk
    assert href.startswith("file://")
    assert Path(unquote(urlparse(href).path)).read_bytes() == written.read_bytes()


def set_theme(lab: LabPage, theme: str) -> None:
    lab.page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    lab.page.wait_for_function("(theme) => document.body.dataset.jpThemeName === theme", arg=theme)
    expect(lab.page.locator("#jupyterlab-splash")).to_have_count(0)  # screenshots see the page
