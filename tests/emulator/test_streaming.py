"""``/stream``: drains new chunks, waits for one, returns at the end, never over 1 MB.

The waits are on the emulator's clock, so "waits up to ``wait`` ms" is checked by moving
the fake clock, and "returns as soon as a chunk arrives" by a chunk arriving while the
clock stands still.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from nbext.client import AsyncClient
from nbext.emulator import Emulator, create_app
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.errors import NotFound
from nbext.emulator.domain.streaming import split_text, to_chunks, wire_size
from nbext.models import SPLIT_KEY, STREAM_CHUNK_LIMIT

from .conftest import KEY, advance, submit

pytestmark = pytest.mark.anyio
MB = STREAM_CHUNK_LIMIT


class Feed:
    """An async-generator handler that yields exactly what the test puts in, when it does."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.end = object()

    async def handler(self, job: dict[str, Any]) -> AsyncIterator[Any]:
        while (item := await self.queue.get()) is not self.end:
            yield item

    async def put(self, *items: Any) -> None:
        for item in items:
            self.queue.put_nowait(item)
        await settle()

    async def finish(self) -> None:
        await self.put(self.end)


@pytest.fixture
def feed(emu: Emulator) -> Feed:
    f = Feed()
    emu.deploy(handler=f.handler, endpoint_id="feed", execution_timeout_ms=3_600_000)
    return f


async def stream(emu: Emulator, job_id: str, wait_ms: int = 0, endpoint: str = "feed") -> Any:
    return (await emu.jobs.stream(endpoint, job_id, wait_ms)).to_wire()


def outputs(response: dict[str, Any]) -> list[Any]:
    return [chunk["output"] for chunk in response["stream"]]


def reassemble(chunks: list[dict[str, Any]]) -> list[Any]:
    """Put split outputs back together by the ``SPLIT_KEY`` marks (see nbext.models)."""
    values: list[Any] = []
    parts: list[str] = []
    for chunk in chunks:
        split = chunk["metrics"].get(SPLIT_KEY)
        if split is None:
            assert not parts, "an unsplit chunk arrived in the middle of a split one"
            values.append(chunk["output"])
            continue
        assert split["part"] == len(parts)
        parts.append(chunk["output"])
        if len(parts) == split["parts"]:
            text = "".join(parts)
            values.append(text if split["encoding"] == "text" else json.loads(text))
            parts = []
    assert not parts, "a split output was left incomplete"
    return values


async def test_each_call_hands_out_only_chunks_not_handed_out_before(
    emu: Emulator, feed: Feed
) -> None:
    job = submit(emu, "feed")
    await feed.put("a", "b")
    first = await stream(emu, job.id)
    await feed.put("c")
    second = await stream(emu, job.id)
    third = await stream(emu, job.id)
    assert outputs(first) == ["a", "b"]
    assert outputs(second) == ["c"]
    assert outputs(third) == [] and third["status"] == "IN_PROGRESS"
    indexes = [c["metrics"]["stream_index"] for r in (first, second) for c in r["stream"]]
    assert indexes == [0, 1, 2]


async def test_a_call_with_nothing_new_waits_for_the_next_chunk(emu: Emulator, feed: Feed) -> None:
    job = submit(emu, "feed")
    await settle()
    waiting = asyncio.create_task(stream(emu, job.id, wait_ms=10_000))
    await settle()
    assert not waiting.done()
    await feed.put("late")  # the clock has not moved: only the chunk can wake it
    response = await asyncio.wait_for(waiting, 5)
    assert outputs(response) == ["late"] and response["status"] == "IN_PROGRESS"


async def test_a_waiting_call_returns_empty_when_its_wait_runs_out(
    emu: Emulator, feed: Feed
) -> None:
    job = submit(emu, "feed")
    await settle()
    waiting = asyncio.create_task(stream(emu, job.id, wait_ms=3_000))
    await advance(emu, 2.999)
    assert not waiting.done()
    await advance(emu, 0.001)
    response = await asyncio.wait_for(waiting, 5)
    assert response == {"status": "IN_PROGRESS", "stream": []}


async def test_the_default_wait_is_ten_seconds(emu: Emulator, http: httpx.AsyncClient) -> None:
    job = submit(emu, "held")
    waiting = asyncio.create_task(http.get(f"/v2/held/stream/{job.id}"))
    await advance(emu, 9.999)
    assert not waiting.done()
    await advance(emu, 0.001)
    response = await asyncio.wait_for(waiting, 5)
    assert response.json() == {"status": "IN_QUEUE", "stream": []}


async def test_a_waiting_call_returns_when_the_job_ends(emu: Emulator, feed: Feed) -> None:
    job = submit(emu, "feed")
    await settle()
    waiting = asyncio.create_task(stream(emu, job.id, wait_ms=60_000))
    await settle()
    await feed.finish()
    response = await asyncio.wait_for(waiting, 5)
    assert response == {"status": "COMPLETED", "stream": []}


async def test_a_waiting_call_returns_when_the_job_is_cancelled(emu: Emulator, feed: Feed) -> None:
    job = submit(emu, "feed")
    await settle()
    waiting = asyncio.create_task(stream(emu, job.id, wait_ms=60_000))
    await settle()
    emu.jobs.cancel("feed", job.id)
    response = await asyncio.wait_for(waiting, 5)
    assert response == {"status": "CANCELLED", "stream": []}


async def test_a_finished_job_answers_at_once_with_what_is_left(emu: Emulator, feed: Feed) -> None:
    job = submit(emu, "feed")
    await feed.put(1, 2)
    await feed.finish()
    response = await stream(emu, job.id, wait_ms=60_000)
    assert response == {
        "status": "COMPLETED",
        "stream": [
            {"output": 1, "metrics": {"stream_index": 0}},
            {"output": 2, "metrics": {"stream_index": 1}},
        ],
    }
    assert await stream(emu, job.id, wait_ms=60_000) == {"status": "COMPLETED", "stream": []}


async def test_a_removed_job_streams_404_and_wakes_its_waiters(emu: Emulator) -> None:
    job = submit(emu, "held", policy={"ttl": 10_000})
    waiting = asyncio.create_task(stream(emu, job.id, wait_ms=60_000, endpoint="held"))
    await advance(emu, 10)
    with pytest.raises(NotFound):
        await asyncio.wait_for(waiting, 5)
    with pytest.raises(NotFound):
        await stream(emu, job.id, endpoint="held")


async def test_chunks_yielded_after_cancel_are_dropped(emu: Emulator, feed: Feed) -> None:
    job = submit(emu, "feed")
    await feed.put("before")
    emu.jobs.cancel("feed", job.id)
    await feed.put("after")
    response = await stream(emu, job.id)
    assert outputs(response) == ["before"] and response["status"] == "CANCELLED"


# ---- the 1 MB limit ----------------------------------------------------------------------

BIG_VALUES = {
    "ascii text": "x" * (2 * MB + 12_345),
    "multi-byte text": "日本語のテキスト🙂" * 150_000,
    "text full of escapes": 'quote " backslash \\ newline \n nul \x00 tab \t ' * 60_000,
    "object": {"rows": [{"i": i, "s": "é" * 20} for i in range(60_000)]},
    "array": list(range(400_000)),
}


@pytest.mark.parametrize("name", list(BIG_VALUES))
async def test_a_large_output_is_split_into_chunks_of_at_most_1_mb_and_reassembles(
    emu: Emulator, feed: Feed, http: httpx.AsyncClient, name: str
) -> None:
    value = BIG_VALUES[name]
    job = submit(emu, "feed")
    await feed.put("small before", value, "small after")
    response = await http.get(f"/v2/feed/stream/{job.id}?wait=0")
    chunks = response.json()["stream"]
    assert len(chunks) >= 4
    for chunk in chunks:
        assert wire_size(chunk["output"]) <= MB
    split = [c for c in chunks if SPLIT_KEY in c["metrics"]]
    assert len(split) == len(chunks) - 2 >= 2
    encoding = "text" if isinstance(value, str) else "json"
    assert {c["metrics"][SPLIT_KEY]["encoding"] for c in split} == {encoding}
    assert {c["metrics"][SPLIT_KEY]["parts"] for c in split} == {len(split)}
    assert [c["metrics"]["stream_index"] for c in chunks] == list(range(len(chunks)))
    assert reassemble(chunks) == ["small before", value, "small after"]


async def test_a_chunk_of_exactly_1_mb_is_not_split() -> None:
    value = "y" * (MB - 2)  # plus two quotes: exactly the limit
    assert wire_size(value) == MB
    (chunk,) = to_chunks(value, {}, 0)
    assert chunk == {"output": value, "metrics": {"stream_index": 0}}
    assert len(to_chunks(value + "y", {}, 0)) == 2


def test_split_text_pieces_fit_and_join_back() -> None:
    text = "\x01é🙂\\" * 1_000
    pieces = split_text(text, 100)
    assert "".join(pieces) == text
    assert all(wire_size(p) <= 100 for p in pieces)


@pytest.mark.parametrize("unit", ["é", "日", "🙂", "\x00", "a"])
def test_split_text_fills_pieces_close_to_the_limit_whatever_the_bytes_per_character(
    unit: str,
) -> None:
    """Few, full pieces: n bytes of text make about n / limit pieces, never one per char."""
    text = unit * 50_000
    pieces = split_text(text, 10_000)
    total = wire_size(text)
    assert "".join(pieces) == text
    assert len(pieces) <= total // 10_000 + 2
    assert all(wire_size(p) <= 10_000 for p in pieces)


async def test_the_nbext_client_reassembles_what_the_emulator_split(
    emu: Emulator, feed: Feed
) -> None:
    value = {"blob": "z" * (MB + 1)}
    job = submit(emu, "feed")
    await feed.put("head", value)
    await feed.finish()
    transport = httpx.ASGITransport(app=create_app(emu))
    async with AsyncClient(KEY, serverless_url="http://emulator/v2", transport=transport) as c:
        pieces = [piece async for piece in c.endpoint("feed").job(job.id).stream()]
    assert pieces == ["head", value]
