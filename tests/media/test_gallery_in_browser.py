"""The static gallery in real Chromium: pictures decode, players load, nothing is fetched.

The HTML is opened as a plain file with no JupyterLab around it (as nbconvert's HTML or
a notebook viewer would show it): no kernel, no network, no theme variables defined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from nbext.media import find, gallery_html
from tests.e2e.browser import chromium_or_skip, launch_options

from .conftest import b64, jpeg, noise_png, png, wav

pytestmark = pytest.mark.e2e


def test_the_gallery_renders_its_pictures_and_players_offline(tmp_path: Path) -> None:
    chromium = chromium_or_skip()
    output = {
        "images": [b64(png(300, 200)), b64(jpeg(160, 120))],
        "huge": b64(noise_png(1200, 1200)),
        "corrupt": b64(b"\x89PNG\r\n\x1a\n" + bytes(600_000)),
        "speech": b64(wav(1.5)),
    }
    rendered = gallery_html(find(output))
    assert rendered.placements == ("full", "full", "thumbnail", "placeholder", "full")
    page_file = tmp_path / "gallery.html"
    page_file.write_text(f"<!doctype html><html><body>{rendered.html}</body></html>")
    requests: list[str] = []
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            **launch_options(chromium, tmp_path / "profile")  # type: ignore[arg-type]
        )
        try:
            page = context.new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_file.as_uri())
            page.wait_for_function(
                "[...document.images].every(i => i.complete)"
                " && document.querySelector('audio').readyState >= 1",
                timeout=15_000,
            )
            images: list[dict[str, Any]] = page.evaluate(
                "[...document.images].map(i => ({alt: i.alt, w: i.naturalWidth}))"
            )
            duration = page.evaluate("document.querySelector('audio').duration")
            captions = page.locator("figcaption").all_inner_texts()
            page.locator("summary").first.click()
            shown = page.locator("details").first.inner_text()
        finally:
            context.close()
    assert [(i["alt"].split(":")[0], i["w"]) for i in images] == [
        ("images[0]", 300),
        ("images[1]", 160),
        ("huge", 512),  # the thumbnail
    ]
    assert duration == pytest.approx(1.5, abs=0.01)
    assert [c.split(" ")[0] for c in captions] == [
        "images[0]",
        "images[1]",
        "huge",
        "corrupt",
        "speech",
    ]
    assert "nbext.media.find(output)['huge']" in shown
    assert all(url.startswith(("file:", "data:")) for url in requests), requests


def test_pictures_below_the_fold_are_drawn_too(tmp_path: Path) -> None:
    """Inline pictures are not lazy: a page printed or captured whole shows every one."""
    chromium = chromium_or_skip()
    html = gallery_html(find([b64(png(200, 200)) for _ in range(60)])).html
    page_file = tmp_path / "tall.html"
    page_file.write_text(f"<!doctype html><html><body>{html}</body></html>")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            **{
                **launch_options(chromium, tmp_path / "profile"),
                "viewport": {"width": 600, "height": 300},
            }  # type: ignore[arg-type]
        )
        try:
            page = context.new_page()
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            widths = page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth)")
        finally:
            context.close()
    assert widths == [200] * 60
