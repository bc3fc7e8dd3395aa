"""Debian's Chromium under Playwright, or a clear skip (a clear failure in CI).

Playwright cannot download its own browsers here (no network but the package
registries), so it drives the system ``chromium`` through ``executable_path``. A machine
without it skips the browser tests, unless ``NBEXT_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs chromium): then a missing browser fails, so CI can never go
green by skipping what it was meant to check.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Route

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 900}


def browser_required() -> bool:
    return os.environ.get("NBEXT_REQUIRE_BROWSER", "") == "1"


def chromium_or_skip() -> str:
    """The path of Debian's chromium; skip (or fail when required) if it is missing."""
    path = shutil.which("chromium")
    if path is not None:
        return path
    message = (
        "Debian's chromium is not installed (apt-get install -y chromium); the browser "
        "tests drive it through Playwright, which cannot download a browser of its own"
    )
    if browser_required():
        pytest.fail(f"NBEXT_REQUIRE_BROWSER=1 but {message}", pytrace=False)
    pytest.skip(message)


def launch_options(executable: str, user_data_dir: Path) -> dict[str, object]:
    """Keyword arguments for ``chromium.launch_persistent_context``.

    A persistent context is how Playwright takes a user data directory (it refuses
    ``--user-data-dir`` in ``args``); a fresh one per session keeps any profile out.
    """
    return {
        "user_data_dir": str(user_data_dir),
        "executable_path": executable,
        "headless": True,
        "args": CHROMIUM_ARGS,
        "viewport": VIEWPORT,
    }


def open_offline(browser: BrowserContext, page_file: Path) -> tuple[Page, list[str]]:
    """A new tab on ``page_file`` where every request that would leave the file is
    refused; the tab, and the list the refused addresses are added to."""
    refused: list[str] = []

    def offline(route: Route) -> None:
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page = browser.new_page()
    page.route("**/*", offline)
    page.goto(page_file.as_uri())
    return page, refused
