"""Streamed text through the real magic: few output updates for 10 000 chunks, the
exact text, and no word held back while a job pauses: the text grows in the panel's
HTML and ``text/plain`` before the job ends."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import Notebook

CHUNKS = 10_000


def test_ten_thousand_chunks_through_the_magic(nb: Notebook) -> None:
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
    content = nb.outputs()[0]
    assert "".join(pieces)[-200:] in content[-1]["text/html"]
    # at most one update per 0.1 s, plus the forced ones (state changes, the end)
    assert len(content) <= elapsed * 10 + 6, (len(content), elapsed)
    assert panel.renders <= elapsed * 10 + 8
    assert len(nb.shell.user_ns["out"]) == CHUNKS
    live = [len(b["text/html"]) for b in content[:-1]]
    print(
        f"{CHUNKS} chunks in {elapsed:.2f} s: {len(content)} content messages, "
        f"live HTML at most {max(live):,} characters, final {len(content[-1]['text/html']):,}"
    )


def shown(nb: Notebook, text: str) -> Callable[[], bool]:
    """Whether an output sent so far shows ``text`` in both its HTML and its text."""

    def check() -> bool:
        return any(
            text in d["data"].get("text/plain", "") and text in d["data"].get("text/html", "")
            for d in list(nb.displays)
        )

    return check


def paused_until(condition: Callable[[], bool], released: threading.Event) -> Any:
    """A handler that yields two words, then waits for ``condition`` (the panel showing
    them) before its last word; ``released`` says it did not wait in vain."""

    def pausing(job: dict[str, Any]) -> Any:
        yield "a "
        yield "b "
        deadline = time.monotonic() + 30
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.005)
        if condition():
            released.set()
        yield "released"

    return pausing


def test_text_shows_while_the_job_pauses_in_blocking_mode(nb: Notebook) -> None:
    """The words a job yielded reach the cell's output while it waits, not when it next
    yields: the handler goes on only once an update sent to the page shows both."""
    released = threading.Event()
    nb.deploy(paused_until(shown(nb, "a b"), released), "pausing")
    nb.run("%%runpod_job pausing --stream\n{}")
    assert released.is_set()
    panel = nb.panel()
    assert panel.state == "COMPLETED"
    assert panel.text == "a b released"
    content = nb.outputs()[0]
    growing = [b["text/plain"] for b in content if "IN_PROGRESS" in b["text/plain"]]
    assert any("text: a b" in t and "released" not in t for t in growing)
    assert "text: a b released" in content[-1]["text/plain"]


@pytest.mark.anyio
async def test_text_shows_while_the_job_pauses_in_background_mode(nb: Notebook) -> None:
    released = threading.Event()
    nb.deploy(paused_until(shown(nb, "a b"), released), "pausing")
    nb.run("%%runpod_job pausing --stream --background\n{}")
    panel = nb.panel()
    assert panel.task is not None
    await asyncio.wait_for(panel.task, 10)
    assert released.is_set()
    assert panel.state == "COMPLETED" and panel.text == "a b released"
    await nb.conn.aclose()
