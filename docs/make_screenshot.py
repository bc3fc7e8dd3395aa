"""Make ``docs/quickstart.png``: the quickstart guide after a run, in a real browser.

    .venv/bin/python docs/make_screenshot.py

The README shows what a newcomer sees after running ``notebooks/01-quickstart.ipynb`` in
JupyterLab: a finished job panel and a streamed one. This reuses the browser tests'
harness (``tests/e2e``: JupyterLab from this venv on 127.0.0.1 with a scrubbed
environment, Debian's chromium under Playwright), runs the whole guide, scrolls to the
panels, and saves a palette PNG of the notebook area, small enough to commit.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402  (matplotlib's dependency, in the lab extra)
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.e2e.browser import chromium_or_skip, launch_options  # noqa: E402
from tests.e2e.jupyter import JupyterLabServer, copy_notebooks  # noqa: E402
from tests.e2e.lab import LabPage  # noqa: E402

GUIDE = "01-quickstart.ipynb"
OUTPUT = ROOT / "docs" / "quickstart.png"
COLOURS = 128


def main() -> int:
    chromium = chromium_or_skip()
    with tempfile.TemporaryDirectory(prefix="nbext-screenshot-") as tmp_name:
        tmp = Path(tmp_name)
        root = copy_notebooks(ROOT / "notebooks", tmp / "notebooks")
        shot = tmp / "shot.png"
        with (
            JupyterLabServer(root, tmp / "state", log_name="screenshot") as server,
            sync_playwright() as playwright,
        ):
            context = playwright.chromium.launch_persistent_context(
                **launch_options(chromium, tmp / "profile")  # type: ignore[arg-type]
            )
            try:
                lab = LabPage(context.new_page(), server)
                lab.open(GUIDE).run_all(180_000)
                # Collapse the file browser: the guide gets the whole width.
                lab.page.evaluate(
                    "() => window.jupyterapp.commands.execute('application:toggle-left-area')"
                )
                cell = lab.cell_with("%%runpod_job echo").first
                expect(cell.locator(".nbext-state[data-state=COMPLETED]")).to_be_visible()
                cell.evaluate("(node) => node.scrollIntoView({block: 'start'})")
                lab.page.wait_for_timeout(500)  # let the scroll settle before the shot
                lab.page.locator(".jp-NotebookPanel:visible").screenshot(path=str(shot))
                server.shutdown_kernels()
            finally:
                context.close()
        image = Image.open(shot).convert("RGB")
        image.quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT).save(OUTPUT, optimize=True)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
