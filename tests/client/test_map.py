"""map: bounded concurrency, completion order, no job lost or duplicated, adapting to 429s."""

from __future__ import annotations

import gc
import json
import math
import threading
import weakref
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from nbext.client import AsyncClient, BadRequest, Client, JobFailed
from nbext.client._gate import SubmitGate
from nbext.models import JobStatus

from .conftest import KEY, AsyncVirtualTime, Harness, MakeHarness, VirtualTime

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

    h.emu.deploy(handler=counted, endpoint_id="counted", workers={"max": 50})
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


# The emulator's clock is the client's, so a 10 s wait costs no real time. It jumps
# when the first worker sleeps, though, while other workers' answers may still be on
# their way: those arrive 10 s "late", and their Retry-After counts from then (the gate
# never shortens a wait it cannot date). On this clock a map may take a window more than
# on a real one (benchmarks/map_over_latency.py measures that one); never less than the
# limit allows, which is what these check, with every input once.


def once_each(h: Harness, results: list[Any], n: int) -> None:
    """Every input's result once, each its own job, and no job the map did not return
    (the emulator forgets a /runsync job a minute after it ends: none may be counted)."""
    assert sorted(i for i, _ in results) == list(range(n))
    ids = {r.id for _, r in results}
    assert len(ids) == n and set(h.emu.jobs.jobs) <= ids


@pytest.mark.slow
async def test_map_adapts_to_the_runsync_rate_limit(make: MakeHarness) -> None:
    # /runsync admits 2000 per 10 s. 2100 jobs: the first 2000 go at once, the rest after
    # the service's Retry-After.
    h = await make(virtual_time=True)
    assert h.time is not None
    start = h.time.now()
    results = await collect_map(h, "echo", [{"i": i} for i in range(2100)], concurrency=32)
    once_each(h, results, 2100)
    assert h.time.now() - start >= 10.0


@pytest.mark.slow
async def test_map_paces_three_windows_without_losing_one(make: MakeHarness) -> None:
    # 4100 jobs at 2000 per 10 s: 2000 at once, 2000 when they leave the window, then
    # 100 more.
    h = await make(virtual_time=True)
    if not h.mode.endswith("server"):
        pytest.skip("once per client, over TCP, is enough for the long one")
    assert h.time is not None
    start = h.time.now()
    results = await collect_map(h, "echo", [{"i": i} for i in range(4100)], concurrency=32)
    once_each(h, results, 4100)
    assert h.time.now() - start >= 20.0


async def test_map_jobs_that_outlive_the_hold_are_waited_for_not_sent_again(h: Harness) -> None:
    # Each job sleeps 3 s of the emulator's clock, past /runsync's 1 s hold: the answer
    # is the job's id, and the item waits on it until the job ends.
    results: list[Any] = []

    async def run() -> None:
        results.extend(await collect_map(h, "sleep", [{"seconds": 3}] * 3, concurrency=3))

    def running() -> list[Any]:
        return [j for j in h.emu.jobs.jobs.values() if j.status is JobStatus.IN_PROGRESS]

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        await h.until(lambda: len(running()) == 3, "three running jobs")
        await h.advance(1.5)  # the holds end; the jobs go on
        assert len(running()) == 3
        await h.advance(2.0)
    assert sorted(i for i, _ in results) == [0, 1, 2]
    assert all(r.status is JobStatus.COMPLETED and r.output == {"slept": 3} for _, r in results)
    assert all(r.execution_time >= 3000 for _, r in results)  # each outlived its hold
    assert {r.id for _, r in results} == set(h.emu.jobs.jobs)  # one submission each
    assert all(job_id.startswith("sync-") for job_id in h.emu.jobs.jobs)


async def test_a_map_with_a_short_deadline_submits_through_run(make: MakeHarness) -> None:
    # A /runsync hold could outlast a 1.5 s deadline and leave a job whose id never came.
    h = await make(virtual_time=True)
    results = await collect_map(h, "echo", [{"i": i} for i in range(5)], deadline=1.5)
    assert sorted(i for i, _ in results) == list(range(5))
    assert not any(job_id.startswith("sync-") for job_id in h.emu.jobs.jobs)
    assert len(h.emu.jobs.jobs) == 5
    with pytest.raises(ValueError, match="deadline must be >= 0 seconds, got -1"):
        await collect_map(h, "echo", [{"i": 0}], deadline=-1)
    with pytest.raises(TypeError, match="unknown job option 'timeout'"):
        await collect_map(h, "echo", [{"i": 0}], timeout=1.5)  # timeout is HTTP seconds
    assert len(h.emu.jobs.jobs) == 5  # refused before anything was sent


async def test_breaking_out_of_a_sync_map_stops_submitting(make: MakeHarness) -> None:
    """``break`` lets go of the map, and that alone stops it, before the loop's next line:
    no collector has to find it first (a map that held itself in a cycle went on
    submitting, and its service charging, until a collection ran)."""
    h = await make()
    if h.is_async:
        pytest.skip("sync threads")

    def first_three() -> tuple[list[Any], bool, list[str], int]:
        earlier = set(threading.enumerate())
        gc.disable()  # a collection must not be what stops it
        try:
            results = h.endpoint("echo").map([{"i": i} for i in range(500)], concurrency=2)
            left = weakref.ref(results)
            out = []
            for item in results:
                out.append(item)
                if len(out) == 3:
                    break
            del results
            workers = [t.name for t in threading.enumerate() if t not in earlier]
            return out, left() is None, workers, len(h.emu.jobs.jobs)
        finally:
            gc.enable()

    got, freed, workers, settled = await anyio.to_thread.run_sync(first_three)
    assert len(got) == 3
    assert freed and "nbext-map" not in workers  # stopped, its workers ended
    assert len(h.emu.jobs.jobs) == settled < 500  # and nothing was submitted since


async def test_breaking_out_of_an_async_map_frees_it_for_the_loop_to_close(
    make: MakeHarness,
) -> None:
    """``async for`` cannot close at ``break``; the loop closes an async generator once
    nothing holds it, which needs the map to be free of cycles as the sync one is."""
    h = await make()
    if not h.is_async:
        pytest.skip("async generators")
    gc.disable()
    try:
        results = h.endpoint("echo").map([{"i": i} for i in range(500)], concurrency=2)
        left = weakref.ref(results)
        async for _ in results:
            break
        del results
        assert left() is None
    finally:
        gc.enable()


# ---- a service whose window is not the emulator's ------------------------------------------


class OtherLimiter(ThreadingHTTPServer):
    """/runsync admitting ``limit`` requests per ``window`` seconds of ``clock``, where
    the emulator (and the gate's guess) say 2000 per 10 s; each 429 says, in whole
    seconds, when the oldest admission leaves the window. It answers ``budget``
    requests at most, then 400, so a client that probes forever ends the test."""

    def __init__(self, clock: VirtualTime, limit: int, window: float, budget: int) -> None:
        self.clock, self.limit, self.window, self.budget = clock, limit, window, budget
        self.admitted: deque[float] = deque()
        self.seen: list[tuple[float, int, float]] = []
        """(arrival, status, until): ``until`` the instant a 429 asked to wait for."""
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _LimiterHandler)
        self.daemon_threads = True
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def judge(self) -> tuple[int, float]:
        with self.lock:
            now = self.clock.now()
            while self.admitted and self.admitted[0] <= now - self.window:
                self.admitted.popleft()
            if len(self.seen) >= self.budget:
                status, wait = 400, 0.0
            elif len(self.admitted) >= self.limit:
                status, wait = 429, float(math.ceil(self.admitted[0] + self.window - now))
            else:
                status, wait = 200, 0.0
                self.admitted.append(now)
            self.seen.append((now, status, now + wait))
            return status, wait


class _LimiterHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OtherLimiter

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status, wait = self.server.judge()
        answer = {"id": "j", "status": "COMPLETED", "output": body["input"]}
        if status != 200:
            answer = {"error": "rate limit reached" if status == 429 else "enough"}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", str(int(wait)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def limiter() -> Iterator[OtherLimiter]:
    server = OtherLimiter(VirtualTime(), limit=4, window=25.0, budget=60)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_map_sends_nothing_before_the_services_retry_after(
    limiter: OtherLimiter, kind: str
) -> None:
    # 4 per 25 s: the gate's own 10 s guess would come back at 10 s, into a full window.
    inputs = [{"i": i} for i in range(10)]
    settings: dict[str, Any] = {"serverless_url": limiter.url + "/v2", "max_retries": 0}
    if kind == "async":
        clock = AsyncVirtualTime()
        limiter.clock = clock
        async with AsyncClient(KEY, clock=clock, **settings) as client:
            results = [r async for r in client.endpoint("e").map(inputs, concurrency=1)]
    else:

        def blocking() -> list[Any]:
            with Client(KEY, clock=limiter.clock, **settings) as client:
                return list(client.endpoint("e").map(inputs, concurrency=1))

        results = await anyio.to_thread.run_sync(blocking)
    assert sorted(i for i, _ in results) == list(range(10))
    refused = [(arrival, until) for arrival, status, until in limiter.seen if status == 429]
    early = [
        (arrival, until)
        for arrival, _, _ in limiter.seen
        for answered, until in refused
        if answered < arrival < until
    ]
    assert early == []  # no request came while a wait the service asked for ran
    assert [until for _, until in refused] == [25.0, 50.0]  # once per window, not probing
    assert limiter.clock.now() == pytest.approx(50.0, abs=0.1)


def test_the_gate_holds_a_map_until_the_latest_retry_after_from_each_answer() -> None:
    gate = SubmitGate()
    assert gate.wait(0.0) == 0.0  # free until a 429
    gate.refused(1.0, 14.0)
    assert gate.wait(1.0) == 14.0 and gate.wait(14.9) == pytest.approx(0.1)
    gate.refused(3.0, 5.0)  # a shorter wait asked later does not cut the first short
    assert gate.wait(3.0) == pytest.approx(12.0)
    gate.refused(13.0, 14.0)  # an answer that took its time counts from its arrival
    assert gate.wait(15.0) == pytest.approx(12.0)
    assert gate.wait(27.0) == 0.0
