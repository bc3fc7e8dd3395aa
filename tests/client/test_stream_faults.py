"""A /stream answer lost on the way loses no chunk: every output once, in order, or an
error that says which may be missing (issue 24, part 1).

/stream hands each chunk out once, so sending the GET again after a lost answer only
returns the chunks after it. The client notices (a skipped ``stream_index``, or a call
that failed after the service may have answered) and takes what it lacks from the
job's final output. The network is ``FaultProxy``'s: it forwards the poll, reads the
emulator's answer, and loses the one carrying the chosen chunk (the first, one in the
middle, the last: the last can be noticed by no later index).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from nbext.client import AsyncClient, ChunksMissing, Client
from tests.faultproxy import Exchange, Fault, FaultProxy, once

from .conftest import KEY, ServedEmulator

pytestmark = pytest.mark.anyio

WORDS = [f"w{i}" for i in range(7)]
POSITIONS = {"first": WORDS[0], "middle": WORDS[3], "last": WORDS[-1]}


class Served(ServedEmulator):
    """An emulator server whose ``paced`` handler yields one word per /stream answer."""

    def deploy(self) -> None:
        self.emu.deploy(handler=self.paced, endpoint_id="paced")
        self.emu.deploy(handler=self.burst, endpoint_id="burst")
        self.emu.deploy(handler=self.paced, endpoint_id="plain", aggregate_stream=False)

    async def paced(self, job: dict[str, Any]) -> AsyncIterator[str]:
        """Each word only once the previous one was handed out: one word per answer, so
        the answer a rule loses carries exactly that word (and maybe the job's end)."""
        held = self.emu.jobs.jobs[job["id"]]
        for word in WORDS:
            while held.stream_cursor < len(held.chunks):
                await asyncio.sleep(0.001)  # waits for a reader, not for time to pass
            yield word

    async def burst(self, job: dict[str, Any]) -> AsyncIterator[str]:
        for word in WORDS:
            yield word


@pytest.fixture
def served() -> Iterator[Served]:
    served = Served()
    try:
        yield served
    finally:
        served.close()


def carrying(word: str) -> Any:
    def rule(exchange: Exchange) -> bool:
        return "/stream/" in exchange.path and f'"{word}"'.encode() in exchange.body

    return rule


def streamed_sync(proxy: FaultProxy, served: Served, endpoint: str) -> tuple[list[Any], int]:
    with Client(KEY, serverless_url=proxy.via(served.server.serverless_url)) as client:
        job = client.endpoint(endpoint).run({})
        return list(job.stream(timeout=30)), len(served.emu.jobs.jobs)


async def streamed_async(proxy: FaultProxy, served: Served, endpoint: str) -> tuple[list[Any], int]:
    async with AsyncClient(KEY, serverless_url=proxy.via(served.server.serverless_url)) as client:
        job = await client.endpoint(endpoint).run({})
        return [chunk async for chunk in job.stream(timeout=30)], len(served.emu.jobs.jobs)


async def streamed(
    kind: str, proxy: FaultProxy, served: Served, endpoint: str = "paced"
) -> list[Any]:
    if kind == "async":
        outputs, jobs = await streamed_async(proxy, served, endpoint)
    else:
        outputs, jobs = await asyncio.to_thread(streamed_sync, proxy, served, endpoint)
    assert jobs == 1
    return outputs


@pytest.mark.parametrize("client", ["sync", "async"])
@pytest.mark.parametrize("position", list(POSITIONS))
async def test_a_lost_stream_answer_loses_no_chunk(
    served: Served, client: str, position: str
) -> None:
    rule = once(carrying(POSITIONS[position]))
    with FaultProxy(served.server.url, rule=rule) as proxy:
        outputs = await streamed(client, proxy, served)
    assert proxy.counts["drop"] == 1  # the answer was lost, and the stream is whole
    assert outputs == WORDS


@pytest.mark.parametrize("fault", ["reset", "truncate"])
async def test_a_reset_or_truncated_stream_answer_loses_no_chunk(
    served: Served, fault: Fault
) -> None:
    rule = once(carrying(POSITIONS["middle"]), fault)
    with FaultProxy(served.server.url, rule=rule) as proxy:
        outputs = await streamed("sync", proxy, served)
    assert proxy.counts[fault] == 1
    assert outputs == WORDS


@pytest.mark.parametrize("client", ["sync", "async"])
async def test_the_lost_answer_that_held_the_whole_stream_and_its_end(
    served: Served, client: str
) -> None:
    # the job yields everything at once: one answer holds every chunk (and usually the
    # end); losing it leaves nothing to compare indices with
    rule = once(lambda e: "/stream/" in e.path and b'"w0"' in e.body)
    with FaultProxy(served.server.url, rule=rule) as proxy:
        outputs = await streamed(client, proxy, served, "burst")
    assert proxy.counts["drop"] == 1
    assert outputs == WORDS


async def test_wait_then_stream_recovers_what_the_wait_lost(served: Served) -> None:
    rule = once(carrying(POSITIONS["middle"]))
    with FaultProxy(served.server.url, rule=rule) as proxy:
        url = proxy.via(served.server.serverless_url)
        async with AsyncClient(KEY, serverless_url=url) as client:
            job = await client.endpoint("paced").run({})
            await job.wait(timeout=30)
            outputs = [chunk async for chunk in job.stream(timeout=30)]
    assert proxy.counts["drop"] == 1
    assert outputs == WORDS


@pytest.mark.parametrize("client", ["sync", "async"])
async def test_chunks_that_cannot_be_recovered_raise_saying_so(served: Served, client: str) -> None:
    # an endpoint that does not aggregate its stream keeps no output to recover from
    rule = once(carrying(POSITIONS["middle"]))
    proxy = FaultProxy(served.server.url, rule=rule)
    with proxy, pytest.raises(ChunksMissing) as info:
        await streamed(client, proxy, served, "plain")
    message = str(info.value)
    assert "may be missing" in message and "output #3" in message
    assert info.value.first_missing == 3
