"""Streams, maps and single calls through a network that loses about 4 % of answers
(issue 24, part 3): every result comes back exactly once, or an error says what may be
missing; no job is ever submitted twice.

Seeded (``SEED``), bounded (fixed counts, every wait has a deadline), 127.0.0.1 only.
Run it with ``-s`` to read its figures::

    .venv/bin/python -m pytest -q -p no:cacheprovider -m slow -s tests/client/test_fault_soak.py
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from nbext.client import AsyncClient, ChunksMissing, Client, MaybeQueued, NbextError
from nbext.emulator import Emulator, EmulatorServer
from nbext.models import JobResult, JobStatus
from tests.faultproxy import FaultProxy

from .conftest import KEY

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SEED = 24
LATENCY = 0.02
"""Seconds the proxy adds before forwarding each request."""
RATE = 0.04
WORDS = [f"t{i}" for i in range(12)]
STREAMS = 60
"""Per client kind (sync and async)."""
MAPS = 2
MAP_INPUTS = 200
"""Per map; one sync and one async map of each size."""
CALLS = 100
"""run_sync calls, per client kind."""


class Tally:
    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    def stream(self, outputs: list[Any] | None, error: BaseException | None) -> None:
        if error is None:
            assert outputs == WORDS, outputs  # whole, in order, nothing twice
            self.counts["streams complete"] += 1
        elif isinstance(error, ChunksMissing):
            self.counts["streams: ChunksMissing"] += 1
        else:
            assert isinstance(error, NbextError), repr(error)
            assert outputs is None or outputs == WORDS[: len(outputs)]
            self.counts[f"streams: {type(error).__name__}"] += 1


@pytest.fixture
def served() -> Iterator[EmulatorServer]:
    emu = Emulator(api_key=KEY, rate_limit=False)
    emu.deploy(image="echo", endpoint_id="echo")
    emu.deploy(handler=words, endpoint_id="words", workers={"max": 50})
    server = EmulatorServer(emu).start()
    try:
        yield server
    finally:
        emu.reset()
        server.stop()
        emu.close()


async def words(job: dict[str, Any]) -> AsyncIterator[str]:
    for word in WORDS:
        await asyncio.sleep(0.003)  # the job's own pace: a token every few ms
        yield word


def stream_sync(client: Client, tally: Tally, n: int) -> None:
    outputs: list[Any] | None = None
    try:
        job = client.endpoint("words").run({"n": f"s{n}"})
        outputs = []
        for output in job.stream(timeout=60):
            outputs.append(output)
    except NbextError as exc:
        tally.stream(outputs, exc)
        return
    tally.stream(outputs, None)


async def stream_async(client: AsyncClient, tally: Tally, n: int) -> None:
    outputs: list[Any] | None = None
    try:
        job = await client.endpoint("words").run({"n": f"a{n}"})
        outputs = []
        async for output in job.stream(timeout=60):
            outputs.append(output)
    except NbextError as exc:
        tally.stream(outputs, exc)
        return
    tally.stream(outputs, None)


def check_map(items: list[Any], tag: str, tally: Tally) -> None:
    assert sorted(i for i, _ in items) == list(range(MAP_INPUTS))  # every input once
    for i, item in items:
        if isinstance(item, MaybeQueued):
            assert item.index == i and "may have been queued, not sent again" in str(item)
            tally.counts["map items: MaybeQueued"] += 1
        else:
            assert isinstance(item, JobResult) and item.status is JobStatus.COMPLETED
            assert item.output == {"m": tag, "i": i}
            tally.counts["map items: result"] += 1


def call_sync(client: Client, tally: Tally, n: int) -> None:
    try:
        result = client.endpoint("echo").run_sync({"c": f"s{n}"}, wait=10)
    except NbextError as exc:
        assert "may have been queued" in str(exc) or "no answer" in str(exc), str(exc)
        tally.counts[f"calls: {type(exc).__name__}"] += 1
        return
    assert result.output == {"c": f"s{n}"}
    tally.counts["calls: result"] += 1


async def call_async(client: AsyncClient, tally: Tally, n: int) -> None:
    try:
        result = await client.endpoint("echo").run_sync({"c": f"a{n}"}, wait=10)
    except NbextError as exc:
        assert "may have been queued" in str(exc) or "no answer" in str(exc), str(exc)
        tally.counts[f"calls: {type(exc).__name__}"] += 1
        return
    assert result.output == {"c": f"a{n}"}
    tally.counts["calls: result"] += 1


def sync_side(url: str, tally: Tally) -> None:
    with Client(KEY, serverless_url=url) as client, ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: stream_sync(client, tally, n), range(STREAMS)))
        for m in range(MAPS):
            tag = f"s{m}"
            inputs = [{"m": tag, "i": i} for i in range(MAP_INPUTS)]
            check_map(list(client.endpoint("echo").map(inputs, concurrency=8)), tag, tally)
        list(pool.map(lambda n: call_sync(client, tally, n), range(CALLS)))


async def async_side(url: str, tally: Tally) -> None:
    async with AsyncClient(KEY, serverless_url=url) as client:
        gate = asyncio.Semaphore(8)

        async def bounded(coro: Any) -> None:
            async with gate:
                await coro

        await asyncio.gather(*(bounded(stream_async(client, tally, n)) for n in range(STREAMS)))
        for m in range(MAPS):
            tag = f"a{m}"
            inputs = [{"m": tag, "i": i} for i in range(MAP_INPUTS)]
            items = [item async for item in client.endpoint("echo").map(inputs, concurrency=8)]
            check_map(items, tag, tally)
        await asyncio.gather(*(bounded(call_async(client, tally, n)) for n in range(CALLS)))


def submitted_once(emu: Emulator) -> None:
    """No input reached the service twice: each marker is one job at most."""
    seen = collections.Counter(repr(sorted(job.input.items())) for job in emu.jobs.jobs.values())
    twice = [key for key, count in seen.items() if count > 1]
    assert not twice, twice


async def test_streams_maps_and_calls_through_four_percent_faults(
    served: EmulatorServer,
) -> None:
    tally = Tally()
    server = served
    with FaultProxy(server.url, rate=RATE, seed=SEED, latency=LATENCY) as proxy:
        url = proxy.via(server.serverless_url)
        await asyncio.wait_for(
            asyncio.gather(asyncio.to_thread(sync_side, url, tally), async_side(url, tally)),
            timeout=600,
        )
    submitted_once(served.emulator)
    faults = {kind: proxy.counts[kind] for kind in ("drop", "reset", "truncate")}
    by_route = collections.Counter(
        exchange.path.split("/")[3] if exchange.path.count("/") >= 3 else exchange.path
        for exchange, _ in proxy.injected
    )
    print(
        f"\nrequests {proxy.counts['requests']}, faults {sum(faults.values())} {faults}, "
        f"by route {dict(by_route)}"
    )
    for key in sorted(tally.counts):
        print(f"{key}: {tally.counts[key]}")
    streams = 2 * STREAMS
    assert sum(v for k, v in tally.counts.items() if k.startswith("streams")) == streams
    assert sum(faults.values()) > 0
