"""The ``%%runpod_job --stream`` panel through a network that loses a /stream answer:
the panel's text and the cell's value hold every chunk once, in order (issue 24)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.faultproxy import FaultProxy, once

from .conftest import Notebook
from .test_map_faults import through

WORDS = [f"word{i} " for i in range(9)]


@pytest.mark.parametrize("lost", [WORDS[0], WORDS[4], WORDS[-1]])
def test_the_stream_panel_shows_every_chunk_when_an_answer_is_lost(nb: Notebook, lost: str) -> None:
    async def paced(job: dict[str, Any]) -> AsyncIterator[str]:
        held = nb.emu.jobs.jobs[job["id"]]
        for word in WORDS:
            while held.stream_cursor < len(held.chunks):  # one word per /stream answer
                await asyncio.sleep(0.001)
            yield word

    nb.deploy(paced, "paced")
    rule = once(lambda e: "/stream/" in e.path and f'"{lost}"'.encode() in e.body)
    with FaultProxy(nb.server.url, rule=rule) as proxy:
        through(nb, proxy)
        nb.run("%%runpod_job paced --stream -o out\n{}")
    assert proxy.counts["drop"] == 1
    panel = nb.panel()
    assert panel.text == "".join(WORDS)
    assert panel.chunks == len(WORDS)
    assert nb.shell.user_ns["out"] == WORDS
