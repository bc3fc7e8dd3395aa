"""A stream cut short by its deadline loses no chunk: the next ``stream()`` goes on from it.

/stream hands each chunk out once, in one answer. So the client must never give up on a
long-poll the service is still going to answer: the last poll before a deadline asks
the service to hold less than the time the client then waits for the answer. Here the
service is made late on purpose: the handler stalls the emulator's loop across the
moment the long-poll's hold ends (as a busy machine would), so the answer that carries
the next chunk leaves a few hundred milliseconds after the stream's deadline.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from nbext.client import AsyncClient, Client, Timeout
from nbext.emulator import Emulator, EmulatorServer

from .conftest import KEY

pytestmark = pytest.mark.anyio

DEADLINE = 1.0
"""The first ``stream()``'s timeout."""
STALL_BEFORE = 0.2
STALL = 0.7
"""The emulator's loop stalls from ``STALL_BEFORE`` s before the first stream's deadline
for ``STALL`` s: the hold of its last long-poll ends inside the stall, and the answer
leaves half a second after the deadline, carrying the chunk ``second``."""


class Stalling:
    """Yields ``first``; stalls the loop when told; yields ``second``, and ``third`` later."""

    def __init__(self) -> None:
        self.stall_at = math.inf
        """``time.monotonic()`` at which to stall (the server runs in this process)."""

    async def __call__(self, job: dict[str, Any]) -> AsyncIterator[str]:
        yield "first"
        while time.monotonic() < self.stall_at:
            await asyncio.sleep(0.005)
        time.sleep(STALL)  # blocks the emulator's loop: no answer can leave meanwhile
        yield "second"
        await asyncio.sleep(0.3)  # still running when the first stream's deadline passed
        yield "third"


@pytest.fixture
def served() -> Iterator[tuple[EmulatorServer, Stalling]]:
    handler = Stalling()
    emulator = Emulator(api_key=KEY, rate_limit=False)
    emulator.deploy(handler=handler, endpoint_id="stalling")
    server = EmulatorServer(emulator).start()
    try:
        yield server, handler
    finally:
        server.stop()
        emulator.close()


def test_a_stream_ended_by_its_deadline_then_resumed_loses_no_chunk(
    served: tuple[EmulatorServer, Stalling],
) -> None:
    server, handler = served
    with Client(KEY, serverless_url=server.serverless_url, wait_timeout=10) as client:
        job = client.endpoint("stalling").run({})
        seen: list[str] = []
        handler.stall_at = time.monotonic() + DEADLINE - STALL_BEFORE
        started = time.monotonic()
        with pytest.raises(Timeout):
            for output in job.stream(timeout=DEADLINE):
                seen.append(output)
        # The deadline held, give or take the late answer it waited for.
        assert time.monotonic() - started < DEADLINE + STALL + 0.5
        seen.extend(job.stream(timeout=10))
        assert seen == ["first", "second", "third"]


async def test_an_async_stream_ended_by_its_deadline_then_resumed_loses_no_chunk(
    served: tuple[EmulatorServer, Stalling],
) -> None:
    server, handler = served
    async with AsyncClient(KEY, serverless_url=server.serverless_url, wait_timeout=10) as client:
        job = await client.endpoint("stalling").run({})
        seen: list[str] = []
        handler.stall_at = time.monotonic() + DEADLINE - STALL_BEFORE
        with pytest.raises(Timeout):
            async for output in job.stream(timeout=DEADLINE):
                seen.append(output)
        seen.extend([output async for output in job.stream(timeout=10)])
        assert seen == ["first", "second", "third"]
