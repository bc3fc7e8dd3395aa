"""Fixtures for browser tests: one JupyterLab and one Chromium for the package, a tab each.

- ``lab_server``: JupyterLab from this venv on a free 127.0.0.1 port, serving a temp copy
  of ``notebooks/`` (tests may write their own notebooks into ``lab_server.root_dir``),
  with no RUNPOD_* variable and a throwaway HOME (see ``jupyter.py``).
- ``browser``: Debian's chromium under Playwright with a fresh user data directory,
  or a skip (a failure when ``NBEXT_REQUIRE_BROWSER=1``; see ``browser.py``).
- ``lab``: a new tab as a ``LabPage``; after the test its kernels are shut down, and a
  failing test leaves a screenshot and the page's console in ``test-artifacts/e2e/``.
- ``front_end``: the same, on one of ``FRONT_ENDS`` chosen by the test's parameter
  (``@pytest.mark.parametrize("front_end", [...], indirect=True)``): JupyterLab 4,
  JupyterLab with the widget manager (``@jupyter-widgets/jupyterlab-manager``) disabled,
  or Notebook 7. Each has its own server, started the first time a test asks for it.

Server and browser are package-scoped: starting JupyterLab costs seconds, and Playwright's
sync API is stopped before any other package's tests run on this thread.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest
from playwright.sync_api import BrowserContext, sync_playwright

from .browser import chromium_or_skip, launch_options
from .jupyter import ROOT, JupyterLabServer, copy_notebooks
from .lab import LabPage

FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember whether the test body failed, so ``lab`` can keep evidence."""
    report = yield
    if report.when == "call" and report.failed:
        item.stash[FAILED] = True
    return report


@pytest.fixture(scope="package")
def chromium() -> str:
    return chromium_or_skip()


WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"

FRONT_ENDS = {
    "lab": "lab_server",
    "lab-no-widgets": "lab_server_no_widgets",
    "notebook7": "notebook7_server",
}
"""Every front end the guides must read the same in, and the fixture of its server."""


@pytest.fixture(scope="package")
def lab_server(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLabServer]:
    yield from _serve(tmp_path_factory, "jupyterlab")


@pytest.fixture(scope="package")
def lab_server_no_widgets(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLabServer]:
    yield from _serve(tmp_path_factory, "lab-no-widgets", disabled_extensions=(WIDGET_MANAGER,))


@pytest.fixture(scope="package")
def notebook7_server(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLabServer]:
    yield from _serve(tmp_path_factory, "notebook7", app="notebook")


def _serve(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    app: str = "lab",
    disabled_extensions: tuple[str, ...] = (),
) -> Iterator[JupyterLabServer]:
    base = tmp_path_factory.mktemp(name)
    root = copy_notebooks(ROOT / "notebooks", base / "notebooks")
    with JupyterLabServer(
        root, base / "state", log_name=name, app=app, disabled_extensions=disabled_extensions
    ) as server:
        yield server


@pytest.fixture(scope="package")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            **launch_options(chromium, profile)  # type: ignore[arg-type]
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def lab(
    request: pytest.FixtureRequest, browser: BrowserContext, lab_server: JupyterLabServer
) -> Iterator[LabPage]:
    yield from _tab(request, browser, lab_server)


@pytest.fixture
def front_end(request: pytest.FixtureRequest, browser: BrowserContext) -> Iterator[LabPage]:
    """A tab on the front end named by the test's parameter (one of ``FRONT_ENDS``)."""
    server: JupyterLabServer = request.getfixturevalue(FRONT_ENDS[request.param])
    yield from _tab(request, browser, server)


def _tab(
    request: pytest.FixtureRequest, browser: BrowserContext, server: JupyterLabServer
) -> Iterator[LabPage]:
    page = LabPage(browser.new_page(), server)
    try:
        yield page
    finally:
        if request.node.stash.get(FAILED, False):
            page.screenshot(f"FAILED-{request.node.name}")
            page.save_console(f"FAILED-{request.node.name}")
        page.page.close()
        server.shutdown_kernels()
