"""10 000 streamed chunks through the real magic: few widget updates, the exact text."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import ipywidgets
import pytest

from .conftest import Notebook

CHUNKS = 10_000


@pytest.fixture
def observed_updates() -> Iterator[dict[int, list[str]]]:
    """Every value change of every HTML widget made during the test, by widget id."""
    updates: dict[int, list[str]] = {}

    def watch(widget: ipywidgets.Widget) -> None:
        if isinstance(widget, ipywidgets.HTML):
            updates[id(widget)] = []
            widget.observe(lambda c: updates[id(c["owner"])].append(c["new"]), names="value")

    previous = ipywidgets.Widget._widget_construction_callback
    ipywidgets.Widget.on_widget_constructed(watch)
    try:
        yield updates
    finally:
        ipywidgets.Widget._widget_construction_callback = previous


def test_ten_thousand_chunks_through_the_magic(
    nb: Notebook, observed_updates: dict[int, list[str]]
) -> None:
    pieces = [f"token{i} " for i in range(CHUNKS)]

    def chatty(job: dict[str, Any]) -> Any:
        yield from pieces

    nb.deploy(chatty, "chatty")
    started = time.monotonic()
    nb.run("%%runpod_job chatty --stream -o out\n{}")
    elapsed = time.monotonic() - started
    panel = nb.panel()
    assert panel.chunks == CHUNKS
    assert panel.text == "".join(pieces)
    assert "".join(pieces)[-200:] in panel.text_view.value
    text_updates = observed_updates[id(panel.text_view)]
    # at most one refresh per 0.1 s, plus the forced ones (state changes, the end)
    assert len(text_updates) <= elapsed * 10 + 5, (len(text_updates), elapsed)
    assert panel.renders <= elapsed * 10 + 8
    assert len(nb.shell.user_ns["out"]) == CHUNKS
