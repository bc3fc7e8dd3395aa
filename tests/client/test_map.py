"""map: bounded concurrency, completion order, no job lost or duplicated, adapting to 429s."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from nbext.client import BadRequest, JobFailed
from nbext.client._map import SubmitGate
from nbext.models import JobStatus

from .conftest import Harness, MakeHarness

pytestmark = pytest.mark.anyio


async def collect_map(h: Harness, endpoint: str, inputs: Any, **kw: Any) -> list[Any]:
    return await h.collect(h.endpoint(endpoint).map(inputs, **kw))


async def test_map_yields_every_result_once(h: Harness) -> None:
    inputs = [{"i": i} for i in range(60)]
    results = await collect_map(h, "echo", inputs, concurrency=7)
    assert sorted(i for i, _ in results) == list(range(60))
    assert all(r.output == {"i": i} and r.status is JobStatus.COMPLETED for i, r in results)
    assert len(h.emu.jobs.jobs) == 60  # one job per input, none duplicated


async def test_map_accepts_a_lazy_iterable_and_bounds_concurrency(make: MakeHarness) -> None:
    h = await make(fake_clock=False)
    running = 0
    peak = 0
    lock = threading.Lock()

    def counted(job: dict[str, Any]) -> dict[str, Any]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            threading.Event().wait(0.01)
            return job["input"]
        finally:
            with lock:
                running -= 1

    h.emu.deploy(handler=counted, endpoint_id="counted", workers_max=50)
    results = await collect_map(h, "counted", ({"i": i} for i in range(40)), concurrency=4)
    assert sorted(i for i, _ in results) == list(range(40))
    assert 1 <= peak <= 4


async def test_map_reports_failures_as_results_or_raises(h: Harness) -> None:
    def odd_fails(job: dict[str, Any]) -> Any:
        if job["input"]["i"] % 2:
            raise ValueError(f"odd {job['input']['i']}")
        return job["input"]

    h.emu.deploy(handler=odd_fails, endpoint_id="odd")
    results = dict(await collect_map(h, "odd", [{"i": i} for i in range(10)], concurrency=3))
    assert len(results) == 10
    assert all(results[i].status is JobStatus.FAILED for i in range(1, 10, 2))
    assert "odd 3" in (results[3].error or "")
    with pytest.raises(JobFailed) as info:
        await collect_map(h, "odd", [{"i": 0}, {"i": 1}], concurrency=1, raise_on_failure=True)
    assert "map: input #1" in info.value.__notes__


async def test_a_bad_input_stops_the_map_with_its_index(h: Harness) -> None:
    with pytest.raises(BadRequest) as info:
        await collect_map(h, "echo", [{"i": 0}, [1]], concurrency=1)
    assert "map: input #1" in info.value.__notes__


async def test_map_adapts_to_the_run_rate_limit(make: MakeHarness) -> None:
    # /run admits 1000 per 10 s. 1100 jobs: the first 1000 go at once, the rest wait
    # exactly for the window; the emulator's clock is the client's, so no real waiting.
    h = await make(virtual_time=True)
    assert h.time is not None
    start = h.time.now()
    results = await collect_map(h, "echo", [{"i": i} for i in range(1100)], concurrency=32)
    assert sorted(i for i, _ in results) == list(range(1100))
    assert len(h.emu.jobs.jobs) == 1100  # none lost, none duplicated
    elapsed = h.time.now() - start
    assert 10.0 <= elapsed <= 11.0, elapsed


async def test_breaking_out_of_a_sync_map_stops_submitting(make: MakeHarness) -> None:
    h = await make()
    if h.is_async:
        pytest.skip("sync threads")

    def first_three() -> list[Any]:
        out = []
        for item in h.endpoint("echo").map([{"i": i} for i in range(500)], concurrency=2):
            out.append(item)
            if len(out) == 3:
                break
        return out

    got = await anyio.to_thread.run_sync(first_three)
    assert len(got) == 3
    settled = len(h.emu.jobs.jobs)
    assert settled < 20  # the workers stopped; they did not run through all 500


def test_gate_runs_free_until_a_429_then_paces_on_the_learned_window() -> None:
    gate = SubmitGate(window=10.0)
    tickets = []
    for k in range(5):
        delay, ticket = gate.acquire(0.1 * k)
        assert delay == 0.0 and ticket is not None
        tickets.append(ticket)
    delay, sixth = gate.acquire(0.5)
    assert sixth is not None
    gate.rejected(sixth, 0.6, retry_after=10.0)  # the service holds 5 per window
    assert gate.learned_limit == 5
    delay, none = gate.acquire(0.7)
    assert none is None and delay == pytest.approx(10.0 + 0.05 - 0.7)  # oldest leaves at 10
    delay, ticket = gate.acquire(10.06)
    assert ticket is not None  # one slot freed
    delay, none = gate.acquire(10.07)
    assert none is None and delay == pytest.approx(10.1 + 0.05 - 10.07)
    # a window after the last 429 the learned limit is forgotten
    assert gate.acquire(25.0)[1] is not None


def test_gate_honours_a_shorter_retry_after() -> None:
    gate = SubmitGate(window=10.0)
    _, ticket = gate.acquire(0.0)
    _, second = gate.acquire(0.0)
    assert ticket is not None and second is not None
    gate.rejected(second, 0.0, retry_after=1.0)
    delay, none = gate.acquire(0.0)
    assert none is None and delay == pytest.approx(1.0)
    gate2 = SubmitGate()
    _, only = gate2.acquire(0.0)
    assert only is not None
    gate2.rejected(only, 0.0, retry_after=3.0)  # nothing of ours in the window: trust it
    assert gate2.acquire(1.0)[0] == pytest.approx(2.0)


def test_a_429_sent_before_the_pause_does_not_extend_it() -> None:
    gate = SubmitGate(window=10.0)
    _, a = gate.acquire(0.0)
    _, b = gate.acquire(0.0)
    _, c = gate.acquire(0.0)
    assert a is not None and b is not None and c is not None
    gate.rejected(b, 0.01, retry_after=10.0)  # the news: the window is full
    gate.rejected(c, 9.99, retry_after=10.0)  # in flight at the time: old news
    delay, _ = gate.acquire(9.99)
    assert delay == pytest.approx(0.02)  # resume as planned at 10.01, not at 19.99
