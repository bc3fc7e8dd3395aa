"""Fixtures for browser tests: one JupyterLab and one Chromium for the package, a tab each.

- ``lab_server``: JupyterLab from this venv on a free 127.0.0.1 port, serving a temp copy
  of ``notebooks/`` (tests may write their own notebooks into ``lab_server.root_dir``),
  with no RUNPOD_* variable and a throwaway HOME (see ``jupyter.py``).
- ``browser``: Debian's chromium under Playwright with a fresh user data directory,
  or a skip (a failure when ``NBEXT_REQUIRE_BROWSER=1``; see ``browser.py``).
- ``lab``: a new tab as a ``LabPage``; after the test its kernels are shut down, and a
  failing test leaves a screenshot and the page's console in ``test-artifacts/e2e/``.

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


@pytest.fixture(scope="package")
def lab_server(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterLabServer]:
    base = tmp_path_factory.mktemp("jupyterlab")
    root = copy_notebooks(ROOT / "notebooks", base / "notebooks")
    with JupyterLabServer(root, base / "state") as server:
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
    page = LabPage(browser.new_page(), lab_server)
    try:
        yield page
    finally:
        if request.node.stash.get(FAILED, False):
            page.screenshot(f"FAILED-{request.node.name}")
            page.save_console(f"FAILED-{request.node.name}")
        page.page.close()
        lab_server.shutdown_kernels()
