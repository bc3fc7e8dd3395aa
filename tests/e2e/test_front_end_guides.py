"""One notebook, every front end (issue 25, requirement 5): the guides read the same in
JupyterLab 4, in Notebook 7, in JupyterLab with the widget manager disabled, after save
and reopen, in nbconvert's HTML of the saved file (made in a network namespace with
loopback only, read with every outside request refused), and in a terminal IPython.

Each reading is held to ``guide_reading.KEY_TEXT``: the same facts under the same cells,
no widget repr or renderer failure, no blank output in a page, no raw HTML in a terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.offline import offline

from .browser import open_offline
from .guide_reading import (
    BLANK_OUTPUTS,
    GUIDES,
    KEY_TEXT,
    MEDIA,
    RAW_HTML,
    UNREADABLE,
    cell_of,
    code_sources,
    missing_text,
)
from .jupyter import ROOT, scrubbed_environment
from .lab import LabPage
from .test_guides import FINAL_STATES
from .test_lab_panels import VISIBLE, save

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN_TIMEOUT_MS = 120_000

SHOWN = """(root) => [...document.querySelectorAll(`${root} .jp-Cell`)].map((cell) => {
    const output = cell.querySelector('.jp-OutputArea');
    return output ? output.innerText : '';
})"""

HAS = """([root, index, selector]) => !!document
    .querySelectorAll(`${root} .jp-Cell`)[index]
    ?.querySelector(`.jp-OutputArea ${selector}`)"""


def sources(guide: str) -> list[str]:
    return code_sources(ROOT / "notebooks" / guide)


def problems_in_page(page: Page, root: str, guide: str) -> list[str]:
    """Everything that keeps the page from reading as the guide should (none expected)."""
    cells = sources(guide)
    shown: list[str] = page.evaluate(SHOWN, root)
    assert len(shown) == len(cells), f"the page shows {len(shown)} cells of {len(cells)}"
    found = missing_text(guide, cells, dict(enumerate(shown)))
    found += [
        f"cell {i} shows {m.group()!r}" for i, t in enumerate(shown) if (m := UNREADABLE.search(t))
    ]
    found += [f"cell {i} shows a blank output" for i in page.evaluate(BLANK_OUTPUTS, root)]
    for piece, selector in MEDIA.get(guide, {}).items():
        if not page.evaluate(HAS, [root, cell_of(cells, piece), selector]):
            found.append(f"{piece!r} shows no {selector}")
    return found


def last_fact(guide: str) -> tuple[int, str]:
    """The last cell with a key fact, and that fact: once it shows, the page has drawn."""
    piece, texts = list(KEY_TEXT[guide].items())[-1]
    return cell_of(sources(guide), piece), texts[-1]


FRONT_ENDS = ["lab", "lab-no-widgets", "notebook7"]
READINGS = [
    (front_end, guide)
    for guide in ("01-quickstart.ipynb", "07-images-and-audio.ipynb", "08-chat-with-an-llm.ipynb")
    for front_end in FRONT_ENDS
]
"""The quickstart, the media guide and the chat guide, each in every front end (a guide
run costs the suite 30 to 60 s: nine runs, the price of saying "every front end")."""


@pytest.mark.parametrize(("front_end", "guide"), READINGS, indirect=["front_end"])
def test_the_guide_reads_the_same_run_reopened_and_exported_offline(
    front_end: LabPage, guide: str, browser: BrowserContext, tmp_path: Path
) -> None:
    name = f"{guide.removesuffix('.ipynb')}-{front_end.server.log_path.stem}"
    front_end.open(guide).run_all(RUN_TIMEOUT_MS)
    assert front_end.errors() == []
    assert problems_in_page(front_end.page, VISIBLE, guide) == []
    states = front_end.page.locator(f"{VISIBLE} .nbext-state[data-state]")
    left = {states.nth(i).get_attribute("data-state") for i in range(states.count())}
    assert left <= FINAL_STATES, f"a panel still waits on a job: {left}"
    front_end.screenshot(f"reads-{name}")

    save(front_end)
    front_end.server.shutdown_kernels()  # nothing of the run is left but the file
    front_end.open(guide)  # a fresh page: no widget state, a new idle kernel
    index, text = last_fact(guide)
    expect(front_end.output(front_end.cell(index))).to_contain_text(text)
    assert problems_in_page(front_end.page, VISIBLE, guide) == []

    # The saved file, as `jupyter nbconvert --to html` makes it with no network route,
    # read in a tab where every request that would leave the file is refused.
    html = tmp_path / guide.replace(".ipynb", ".html")
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html"]
    command += [f"--output-dir={tmp_path}", str(front_end.server.root_dir / guide)]
    offline(command, env=scrubbed_environment(front_end.server.home), timeout=120)
    page, _refused = open_offline(browser, html)
    try:
        assert problems_in_page(page, "body", guide) == []
        page.screenshot(path=str(ROOT / "test-artifacts" / "e2e" / f"exported-{name}.png"))
    finally:
        page.close()


DRIVE = """
import sys, nbformat
shell = get_ipython()
assert type(shell).__name__ == "TerminalInteractiveShell", type(shell)
for index, cell in enumerate(nbformat.read(sys.argv[1], as_version=4).cells):
    if cell.cell_type == "code":
        print(f"\\n=== cell {index} ===", flush=True)
        if not shell.run_cell(cell.source, store_history=True).success:
            sys.exit(f"cell {index} failed")
"""


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guide_reads_the_same_in_a_terminal_ipython(guide: str, tmp_path: Path) -> None:
    """Each code cell run by a real terminal IPython (``ipython script.py``), which shows
    ``text/plain`` only: what it prints must hold the same facts, and no markup."""
    drive = tmp_path / "drive.py"
    drive.write_text(DRIVE)
    home = tmp_path / "home"
    home.mkdir()
    ipython = [sys.executable, "-m", "IPython", "--simple-prompt", "--colors=NoColor"]
    done = subprocess.run(
        [*ipython, str(drive), str(ROOT / "notebooks" / guide)],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
        env={**scrubbed_environment(home), "TERM": os.environ.get("TERM", "dumb")},
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    shown: dict[int, str] = {}
    for chunk in done.stdout.split("\n=== cell ")[1:]:
        head, _, printed = chunk.partition(" ===\n")
        shown[int(head)] = printed
    (ARTIFACTS := ROOT / "test-artifacts" / "e2e").mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"terminal-{guide}.txt").write_text(done.stdout)
    assert missing_text(guide, sources(guide), shown) == []
    assert not UNREADABLE.search(done.stdout), UNREADABLE.search(done.stdout)
    assert not RAW_HTML.search(done.stdout), RAW_HTML.search(done.stdout)
