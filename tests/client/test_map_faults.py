"""A map outlives one ambiguous submission, and a map left early leaves no job behind
unaccounted for (issue 24, part 2).

The network is ``FaultProxy``'s: it forwards a /runsync, reads the emulator's answer
and loses it, so the job is queued but its id never arrives. That input must come back
as ``MaybeQueued`` (never sent again), and every other input as its result. A map left
before its end (an error, ``break``, ``close``) cancels the jobs it had submitted and
says which.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from nbext.client import AsyncClient, Client, JobFailed, MaybeQueued
from nbext.client._map import MAP_HOLD
from nbext.models import JobResult, JobStatus
from tests.faultproxy import Exchange, Fault, FaultProxy, once

from .conftest import KEY, ServedEmulator

pytestmark = pytest.mark.anyio
N = 12


class Served(ServedEmulator):
    """An emulator server with ``echo`` and ``gated`` (its jobs run until released)."""

    def deploy(self) -> None:
        self.release = threading.Event()
        self.fail = threading.Event()
        self.emu.deploy(image="echo", endpoint_id="echo")
        self.emu.deploy(handler=self.gated, endpoint_id="gated", workers={"max": 10})

    def gated(self, job: dict[str, Any]) -> Any:
        if job["input"].get("quick"):
            return job["input"]
        if job["input"].get("fails"):
            self.fail.wait(10)
            raise RuntimeError("failed on purpose")
        self.release.wait(10)
        return job["input"]

    def statuses(self) -> dict[str, JobStatus]:
        return {job_id: job.status for job_id, job in self.emu.jobs.jobs.items()}

    def waiting(self) -> int:
        """Running jobs whose submitter learned the id and waits on /stream: past the
        /runsync hold (1 s), and waited on again (between the two, nobody waits)."""
        now = self.emu.clock.now()
        return sum(
            job.status is JobStatus.IN_PROGRESS
            and now - job.submitted_at > MAP_HOLD + 0.05
            and len(job.signal._waiters) > 0
            for job in self.emu.jobs.jobs.values()
        )

    def until(self, condition: Any, what: str) -> None:
        deadline = threading.Event()
        for _ in range(5000):
            if condition():
                return
            deadline.wait(0.002)
        raise AssertionError(f"timed out waiting for {what}")

    def release_all(self) -> None:
        self.release.set()
        self.fail.set()


@pytest.fixture
def served() -> Iterator[Served]:
    served = Served()
    try:
        yield served
    finally:
        served.close()


def runsync_number(n: int) -> Any:
    seen = 0

    def rule(exchange: Exchange) -> bool:
        nonlocal seen
        if "/runsync" not in exchange.path:
            return False
        seen += 1
        return seen == n

    return rule


async def mapped(client: str, url: str, endpoint: str, inputs: list[Any]) -> list[Any]:
    if client == "async":
        async with AsyncClient(KEY, serverless_url=url) as aclient:
            return [item async for item in aclient.endpoint(endpoint).map(inputs, concurrency=3)]

    def run() -> list[Any]:
        with Client(KEY, serverless_url=url) as sclient:
            return list(sclient.endpoint(endpoint).map(inputs, concurrency=3))

    return await asyncio.to_thread(run)


@pytest.mark.parametrize("client", ["sync", "async"])
@pytest.mark.parametrize("fault", ["drop", "reset", "truncate"])
async def test_an_unanswered_submission_is_an_item_and_the_map_goes_on(
    served: Served, client: str, fault: Fault
) -> None:
    inputs = [{"i": i} for i in range(N)]
    with FaultProxy(served.server.url, rule=once(runsync_number(4), fault)) as proxy:
        items = await mapped(client, proxy.via(served.server.serverless_url), "echo", inputs)
    assert proxy.counts[fault] == 1
    assert sorted(i for i, _ in items) == list(range(N))  # every input once
    lost = [item for _, item in items if isinstance(item, MaybeQueued)]
    assert len(lost) == 1
    (maybe,) = lost
    assert "may have been queued, not sent again" in str(maybe)
    assert f"input #{maybe.index}" in str(maybe) and maybe.job_id is None
    done = {i: r for i, r in items if isinstance(r, JobResult)}
    assert all(r.output == {"i": i} for i, r in done.items())
    assert len(served.emu.jobs.jobs) == N  # the lost one was queued, and never sent again


@pytest.mark.parametrize("client", ["sync", "async"])
async def test_a_map_left_early_cancels_its_jobs_in_flight(served: Served, client: str) -> None:
    inputs: list[dict[str, Any]] = [{"quick": True}, {"i": 1}, {"i": 2}]
    url = served.server.serverless_url
    if client == "sync":

        def run() -> Any:
            with Client(KEY, serverless_url=url) as sclient:
                results = sclient.endpoint("gated").map(inputs, concurrency=2)
                first = next(results)
                served.until(lambda: served.waiting() == 2, "two jobs past their hold")
                results.close()
                return first, results.abandoned

        first, abandoned = await asyncio.to_thread(run)
    else:
        async with AsyncClient(KEY, serverless_url=url) as aclient:
            aresults = aclient.endpoint("gated").map(inputs, concurrency=2)
            first = await anext(aresults)
            await asyncio.to_thread(served.until, lambda: served.waiting() == 2, "the holds")
            await aresults.aclose()
            abandoned = aresults.abandoned
    assert first[0] == 0
    assert abandoned is not None and not abandoned.running and not abandoned.unanswered
    statuses = served.statuses()
    assert set(abandoned.cancelled) == {
        j for j, s in statuses.items() if s is not JobStatus.COMPLETED
    }
    assert len(abandoned.cancelled) == 2
    assert all(statuses[j] is JobStatus.CANCELLED for j in abandoned.cancelled)
    assert "cancelled 2 jobs" in str(abandoned)


async def test_the_error_that_ends_a_map_names_the_jobs_it_cancelled(served: Served) -> None:
    inputs: list[dict[str, Any]] = [{"fails": True}, {"i": 1}]
    url = served.server.serverless_url

    def run() -> None:
        with Client(KEY, serverless_url=url) as sclient:
            results = sclient.endpoint("gated").map(inputs, concurrency=2, raise_on_failure=True)

            def fail_once_both_wait() -> None:
                served.until(lambda: served.waiting() == 2, "both past the hold")
                served.fail.set()

            threading.Thread(target=fail_once_both_wait, daemon=True).start()
            list(results)

    with pytest.raises(JobFailed) as info:
        await asyncio.to_thread(run)
    notes = "\n".join(info.value.__notes__)
    (cancelled,) = [j for j, s in served.statuses().items() if s is JobStatus.CANCELLED]
    assert "map: input #0" in notes
    assert f"map left before its end: cancelled 1 job ({cancelled}) it had submitted" in notes
