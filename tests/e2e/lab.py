"""Page helpers: what a person does in JupyterLab, as calls a test can read.

A ``LabPage`` opens a notebook by its address, runs all cells, waits for the kernel to
finish, finds a cell by its source text, reads what its output shows and clicks buttons
in it, and takes screenshots into ``test-artifacts/``. It talks to JupyterLab through the
page: the DOM for everything a person sees, and ``window.jupyterapp`` (exposed by the
server fixture) only to run the same commands the menus run, and to ask the kernel's
status, which the DOM shows only as an icon.

DOM names relied on (JupyterLab 4): ``.jp-Notebook .jp-Cell`` for cells,
``.jp-InputArea-editor`` for a cell's source, ``.jp-InputPrompt`` for ``[n]:``/``[*]:``,
``.jp-OutputArea`` for what a cell shows; ipywidgets draw into ``.jupyter-widgets``.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from .jupyter import ARTIFACTS, JupyterLabServer

DEFAULT_TIMEOUT_MS = 60_000


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "screenshot"


class LabPage:
    """One browser tab on a JupyterLab server."""

    def __init__(self, page: Page, server: JupyterLabServer) -> None:
        self.page = page
        self.server = server
        self.console: list[str] = []
        page.set_default_timeout(DEFAULT_TIMEOUT_MS)
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))

    # ---- notebooks --------------------------------------------------------------------

    def open(self, path: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> LabPage:
        """Open ``path`` (relative to the server's root) and wait for an idle kernel."""
        self.page.goto(self.server.lab_url(path))
        self.page.wait_for_function(
            """(path) => {
                const app = window.jupyterapp;
                const panel = app && app.shell && app.shell.currentWidget;
                if (!panel || !panel.context || panel.context.path !== path) return false;
                const kernel = panel.sessionContext.session?.kernel;
                return !!kernel && kernel.status === 'idle';
            }""",
            arg=path,
            timeout=timeout_ms,
        )
        expect(self.cells().first).to_be_visible()
        return self

    def run_all(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> LabPage:
        """Run > Run All Cells, then wait until every cell has run."""
        return self._run(["notebook:run-all-cells"], timeout_ms)

    def _run(self, commands: list[str], timeout_ms: int) -> LabPage:
        """Run notebook commands in turn and wait for the cells they ran.

        A run command's promise settles once its cells' executions are answered (an
        error makes the kernel abort the rest, which settles it too), so the wait needs
        no guess about when the cells were queued.
        """
        self.page.evaluate(
            """(commands) => {
                window.__nbextRun = null;
                (async () => {
                    for (const name of commands) {
                        await window.jupyterapp.commands.execute(name);
                    }
                })().then(
                    () => { window.__nbextRun = 'done'; },
                    (error) => { window.__nbextRun = `failed: ${error}`; },
                );
            }""",
            commands,
        )
        handle = self.page.wait_for_function("() => window.__nbextRun", timeout=timeout_ms)
        outcome = handle.json_value()
        assert outcome == "done", f"running {commands} {outcome}"
        return self.wait_until_idle(timeout_ms)

    def kernel_status(self) -> str:
        status: str = self.page.evaluate(
            """() => window.jupyterapp.shell.currentWidget
                  ?.sessionContext.session?.kernel?.status ?? 'none'"""
        )
        return status

    def wait_until_idle(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> LabPage:
        """Wait until no cell is queued or running (``[*]``) and the kernel is idle."""
        self.page.wait_for_function(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const kernel = panel?.sessionContext.session?.kernel;
                if (!kernel || kernel.status !== 'idle') return false;
                const prompts = panel.node.querySelectorAll('.jp-InputPrompt');
                return [...prompts].every((p) => !p.textContent.includes('*'));
            }""",
            timeout=timeout_ms,
        )
        return self

    # ---- cells and outputs ------------------------------------------------------------

    def cells(self) -> Locator:
        return self.page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")

    def cell(self, index: int) -> Locator:
        return self.cells().nth(index)

    def cell_with(self, source: str) -> Locator:
        """The one cell whose source contains ``source`` (fails if none or several)."""
        editor = self.page.locator(".jp-InputArea-editor", has_text=source)
        return self.cells().filter(has=editor)

    def output(self, cell: Locator) -> Locator:
        return cell.locator(".jp-OutputArea")

    def wait_for_output(
        self, cell: Locator, text: str | re.Pattern[str], timeout_ms: int = DEFAULT_TIMEOUT_MS
    ) -> Locator:
        """Wait until the cell's output shows ``text`` (a substring or a pattern)."""
        output = self.output(cell)
        expect(output).to_contain_text(text, timeout=timeout_ms)
        return output

    def wait_for(
        self, cell: Locator, selector: str, timeout_ms: int = DEFAULT_TIMEOUT_MS
    ) -> Locator:
        """Wait until an element matching ``selector`` is visible in the cell's output."""
        found = self.output(cell).locator(selector).first
        expect(found).to_be_visible(timeout=timeout_ms)
        return found

    def text_of(self, cell: Locator, selector: str) -> str:
        """The visible text of the first element matching ``selector`` in the output."""
        return self.wait_for(cell, selector).inner_text().strip()

    def button(self, cell: Locator, name: str) -> Locator:
        return self.output(cell).get_by_role("button", name=name)

    def click(self, cell: Locator, name: str) -> None:
        """Click the button called ``name`` inside the cell's output."""
        button = self.button(cell, name)
        expect(button).to_be_enabled()
        button.click()

    # ---- evidence ---------------------------------------------------------------------

    def screenshot(self, name: str) -> Path:
        """Save what the tab shows to ``test-artifacts/e2e/<name>.png``."""
        path = ARTIFACTS / "e2e" / f"{_safe_name(name)}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))
        return path

    def save_console(self, name: str) -> Path:
        """Save the page's console messages next to the screenshots (for failures)."""
        path = ARTIFACTS / "e2e" / f"{_safe_name(name)}.console.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.console).replace(self.server.token, "<token>"))
        return path

    # ---- running part of a notebook ---------------------------------------------------

    def index_of(self, cell: Locator) -> int:
        """The position of ``cell`` in the notebook (0-based)."""
        index: int = cell.evaluate(
            "(node) => [...node.parentElement.children]"
            ".filter((c) => c.classList.contains('jp-Cell')).indexOf(node)"
        )
        return index

    def run_through(self, cell: Locator, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> LabPage:
        """Run every cell from the top down to ``cell`` included, then wait for them.

        What a person does to stop at a cell whose widgets they want to use before the
        rest of the notebook runs (for instance, to click Cancel on a running job).
        """
        self.select(cell)
        return self._run(["notebook:run-all-above", "notebook:run-cell"], timeout_ms)

    def select(self, cell: Locator) -> None:
        """Make ``cell`` the active one, as a click on it does."""
        self.page.evaluate(
            "(i) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }",
            self.index_of(cell),
        )

    def start_cell(self, cell: Locator) -> None:
        """Run ``cell`` alone (Run > Run Selected Cell), without waiting for it: for a cell
        run after Run All stopped, whose output the test then waits for."""
        self.select(cell)
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")

    def errors(self) -> list[str]:
        """``ename: evalue`` of every error output in the notebook (none is expected)."""
        found: list[str] = self.page.evaluate(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const errors = [];
                for (const cell of panel.model.cells) {
                    if (cell.type !== 'code') continue;
                    for (const output of cell.outputs.toJSON()) {
                        if (output.output_type === 'error') {
                            errors.push(`${output.ename}: ${output.evalue}`);
                        }
                    }
                }
                return errors;
            }"""
        )
        return found
