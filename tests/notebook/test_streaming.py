"""Streamed text through the real magic: few widget updates for 10 000 chunks, the exact
text, and no word held back while a job pauses."""

from __future__ import annotations

import asyncio
import threading
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


def paused_after_two_words(gate: threading.Event) -> Any:
    """A handler that yields two words, then waits for ``gate`` before its last word."""

    def pausing(job: dict[str, Any]) -> Any:
        yield "a "
        yield "b "
        yield "released" if gate.wait(timeout=30) else "never shown"

    return pausing


def test_text_shows_while_the_job_pauses_in_blocking_mode(nb: Notebook) -> None:
    """The words a job yielded reach the panel while it waits, not when it next yields:
    the handler goes on only once the panel's text view shows both words."""
    gate = threading.Event()

    def watch(widget: ipywidgets.Widget) -> None:
        if isinstance(widget, ipywidgets.HTML):
            widget.observe(lambda c: "a b" in c["new"] and gate.set(), names="value")

    previous = ipywidgets.Widget._widget_construction_callback
    ipywidgets.Widget.on_widget_constructed(watch)
    try:
        nb.deploy(paused_after_two_words(gate), "pausing")
        nb.run("%%runpod_job pausing --stream\n{}")
    finally:
        ipywidgets.Widget._widget_construction_callback = previous
    panel = nb.panel()
    assert panel.state == "COMPLETED"
    assert panel.text == "a b released"


@pytest.mark.anyio
async def test_text_shows_while_the_job_pauses_in_background_mode(nb: Notebook) -> None:
    gate = threading.Event()
    nb.deploy(paused_after_two_words(gate), "pausing")
    nb.run("%%runpod_job pausing --stream --background\n{}")
    panel = nb.panel()
    await nb.auntil(lambda: "a b" in panel.text_view.value, "both words on the panel")
    assert panel.state == "IN_PROGRESS"
    gate.set()
    assert panel.task is not None
    await asyncio.wait_for(panel.task, 10)
    assert panel.state == "COMPLETED" and panel.text == "a b released"
    await nb.conn.aclose()
