"""``job.phases()``: a followed job's phase, with its endpoint's health past a threshold.

The emulator's teaching scenarios put an endpoint's workers in each state a real fleet
can be in, and the client's clock is the emulator's fake clock (``virtual_time``): the
client's pauses move it, so a 10 s cold start passes in no real time, and every figure
below is exact to the client's poll pace.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any

import anyio.to_thread
import httpx
import pytest

from nbext.client import Phase, Timeout
from nbext.emulator.domain.scenarios import CRASH_LINE
from nbext.models import JobStatus as S

from .conftest import Harness, MakeHarness

pytestmark = pytest.mark.anyio


class Counted(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """The requests a client sent, by path, on their way to the real emulator."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.paths: Counter[str] = Counter()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths[request.url.path] += 1
        response: httpx.Response = self.inner.handle_request(request)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths[request.url.path] += 1
        response: httpx.Response = await self.inner.handle_async_request(request)
        return response


async def counted_client(h: Harness) -> tuple[Any, Counted]:
    """A second client of ``h``'s mode on the emulator's clock, counting its requests."""
    kw = h.transport_kwargs()
    inner = kw.pop("transport", None)
    if inner is None:
        inner = httpx.AsyncHTTPTransport() if h.is_async else httpx.HTTPTransport()
    counted = Counted(inner)
    return h.new_client(transport=counted, clock=h.time), counted


async def followed(h: Harness, client: Any, endpoint_id: str, input: Any, **kw: Any) -> list[Phase]:
    job = await h.call(client.endpoint(endpoint_id).run, input)
    phases: list[Phase] = await h.collect(job.phases(**kw))
    return phases


async def test_a_cold_start_is_timed_and_the_health_is_read_at_a_slow_pace(
    make: MakeHarness,
) -> None:
    h = await make(virtual_time=True)
    h.emu.deploy("sleep", endpoint_id="cold", scenario="cold-start:seconds=20")
    client, counted = await counted_client(h)
    phases = await followed(h, client, "cold", {"seconds": 2})
    waiting = [p for p in phases if p.status is S.IN_QUEUE]
    early = [p for p in waiting if p.waited < 2.0]
    assert early and all(p.health is None and p.cause is None for p in early)
    late = [p for p in waiting if p.waited >= 2.0]
    assert late and all(p.health is not None for p in late)
    assert all(p.cause == "cold start: 1 worker initializing, none ready yet" for p in late)
    assert all(p.health and p.health.workers.initializing == 1 for p in late)
    assert late[-1].ahead == 0
    colds = [p.cold_start or 0.0 for p in late]  # counted from the job's first sighting
    assert colds == sorted(colds) and colds[0] == pytest.approx(late[0].waited)
    running = [p for p in phases if p.status is S.IN_PROGRESS]
    assert running and all(p.health is None and p.cause is None for p in running)
    assert running[0].worker_id is not None
    final = phases[-1]
    assert final.status is S.COMPLETED and final.worker_id == running[0].worker_id
    assert final.timings is not None
    assert final.timings.cold_start == pytest.approx(20, abs=2.5)  # one poll's slack
    assert final.timings.queued is not None and final.timings.queued < 0.5
    assert final.timings.ran == pytest.approx(2, abs=0.05)
    assert all(p.timings is None for p in phases[:-1])
    # /status at the client's pace; /health every 5 s at most, only while in queue
    looks = counted.paths["/v2/cold/health"]
    assert 1 <= looks <= 1 + 20 // 5
    assert counted.paths["/v2/cold/status/" + final.result.id] >= 3 * looks
    await h.call(client.close) if not h.is_async else await client.aclose()


async def test_a_crash_loop_carries_the_workers_last_log_lines(make: MakeHarness) -> None:
    h = await make(virtual_time=True)
    h.emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    job = await h.call(h.endpoint("crash").run, {})
    seen: list[Phase] = []
    with pytest.raises(Timeout) as info:
        if h.is_async:
            async for phase in job.phases(timeout=8):
                seen.append(phase)
        else:
            await h.call(lambda: seen.extend(job.phases(timeout=8)))
    assert info.value.cause is not None and info.value.cause.endswith(CRASH_LINE)
    late = [p for p in seen if p.health is not None]
    assert late, [p.waited for p in seen]
    last = late[-1]
    assert last.cause is not None and last.cause.startswith("no worker could start")
    assert last.cause.endswith(f"; last line: {CRASH_LINE}")
    assert last.health is not None and last.health.workers.unhealthy == 1
    assert last.last_line == CRASH_LINE and last.log_worker is not None
    assert last.log and last.log[-1] == CRASH_LINE
    assert last.cold_start is None


async def test_a_throttled_fleet_then_a_cold_start(make: MakeHarness) -> None:
    h = await make(virtual_time=True)
    h.emu.deploy("echo", endpoint_id="busy", scenario="throttled:seconds=12")
    phases = await followed(h, h.client, "busy", {"x": 1})
    causes = [p.cause for p in phases if p.cause]
    assert causes[0] == "no GPU free: 1 worker throttled, waiting for a machine"
    final = phases[-1]
    assert final.status is S.COMPLETED and final.timings is not None
    assert final.timings.queued == pytest.approx(12, abs=5.5)


async def test_a_job_that_starts_at_once_costs_no_health_call(make: MakeHarness) -> None:
    h = await make(virtual_time=True)
    client, counted = await counted_client(h)
    phases = await followed(h, client, "sleep", {"seconds": 3})
    assert phases[-1].status is S.COMPLETED
    assert counted.paths["/v2/sleep/health"] == 0
    assert phases[-1].timings is not None and phases[-1].timings.cold_start is None
    await h.call(client.close) if not h.is_async else await client.aclose()


async def test_the_threshold_is_the_callers(h: Harness) -> None:
    h.emu.deploy("echo", endpoint_id="stuck", workers={"max": 0})
    job = await h.call(h.endpoint("stuck").run, {})
    with pytest.raises(ValueError, match="threshold must be >= 0 seconds, got -1"):
        await h.collect(job.phases(threshold=-1))
    first = await _first_phase(h, job, 0)
    assert first.cause is not None and first.cause.startswith("no worker is running or starting")
    assert first.ahead == 0


async def _first_phase(h: Harness, job: Any, threshold: float) -> Phase:
    if h.is_async:
        async with contextlib.aclosing(job.phases(threshold=threshold)) as phases:
            async for phase in phases:
                return phase  # type: ignore[no-any-return]
        raise AssertionError("no phase")

    def first() -> Phase:
        with contextlib.closing(job.phases(threshold=threshold)) as phases:
            return next(iter(phases))  # type: ignore[no-any-return]

    return await anyio.to_thread.run_sync(first)


async def test_a_failed_job_carries_its_workers_last_log_lines(make: MakeHarness) -> None:
    h = await make(virtual_time=True)
    phases = await followed(h, h.client, "fail", {"message": "bad input"})
    final = phases[-1]
    assert final.status is S.FAILED and final.worker_id is not None
    assert final.log_worker == final.worker_id
    assert final.log and final.last_line is not None
    assert final.last_line.startswith(f"job {final.result.id} FAILED after ")
    assert all(p.log == () for p in phases[:-1])


async def test_a_running_job_carries_its_workers_log_read_at_a_slow_pace(
    make: MakeHarness,
) -> None:
    h = await make(virtual_time=True)
    client, counted = await counted_client(h)
    phases = await followed(h, client, "sleep", {"seconds": 20})
    running = [p for p in phases if p.status is S.IN_PROGRESS]
    early = [p for p in running if p.waited < 2.0]
    assert early and all(p.log == () for p in early)
    late = [p for p in running if p.waited >= 2.5]
    assert late and all(p.log_worker == p.worker_id for p in late)
    assert all(f"worker {p.worker_id} started (sleep)" in p.log for p in late)
    assert all(p.cause is None and p.health is None for p in running)
    reads = sum(n for path, n in counted.paths.items() if path.endswith("/logs"))
    assert 1 <= reads <= 1 + 20 // 5
    assert phases[-1].log == () and phases[-1].log_worker is None  # a success: not kept
    await h.call(client.close) if not h.is_async else await client.aclose()
