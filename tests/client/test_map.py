"""map: bounded concurrency, completion order, no job lost or duplicated, adapting to 429s."""

from __future__ import annotations

import json
import math
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from nbext.client import AsyncClient, BadRequest, Client, JobFailed
from nbext.client._gate import IN_FLIGHT_RECHECK, RESUME_MARGIN, SubmitGate, Ticket
from nbext.models import JobStatus

from .conftest import KEY, Harness, MakeHarness

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


@pytest.mark.slow
async def test_map_adapts_to_the_runsync_rate_limit(make: MakeHarness) -> None:
    # /runsync admits 2000 per 10 s. 2100 jobs: the first 2000 go at once, the rest
    # wait exactly for the window; the emulator's clock is the client's, so no real
    # waiting.
    h = await make(virtual_time=True)
    assert h.time is not None
    start = h.time.now()
    results = await collect_map(h, "echo", [{"i": i} for i in range(2100)], concurrency=32)
    assert sorted(i for i, _ in results) == list(range(2100))
    assert len(h.emu.jobs.jobs) == 2100  # none lost, none duplicated
    elapsed = h.time.now() - start
    assert 10.0 <= elapsed <= 11.0, elapsed


@pytest.mark.slow
async def test_map_paces_three_windows_without_losing_one(make: MakeHarness) -> None:
    # 4100 jobs at 2000 per 10 s: 2000 at once, 2000 when they leave the window, then
    # 100 more; a gate that learned a limit one too low would wait until 30 s.
    h = await make(virtual_time=True)
    if not h.mode.endswith("server"):
        pytest.skip("once per client, over TCP, is enough for the long one")
    assert h.time is not None
    start = h.time.now()
    results = await collect_map(h, "echo", [{"i": i} for i in range(4100)], concurrency=32)
    assert sorted(i for i, _ in results) == list(range(4100))
    assert len(h.emu.jobs.jobs) == 4100
    elapsed = h.time.now() - start
    assert 20.0 <= elapsed <= 20.5, elapsed


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


async def test_a_map_with_a_short_timeout_submits_through_run(make: MakeHarness) -> None:
    # A /runsync hold could outlast a 1.5 s deadline and leave a job whose id never came.
    h = await make(virtual_time=True)
    results = await collect_map(h, "echo", [{"i": i} for i in range(5)], timeout=1.5)
    assert sorted(i for i, _ in results) == list(range(5))
    assert not any(job_id.startswith("sync-") for job_id in h.emu.jobs.jobs)
    assert len(h.emu.jobs.jobs) == 5
    with pytest.raises(ValueError, match="timeout must be >= 0 seconds, got -1"):
        await collect_map(h, "echo", [{"i": 0}], timeout=-1)
    assert len(h.emu.jobs.jobs) == 5  # refused before anything was sent


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


# ---- a service whose window is not the gate's ------------------------------------------------


class VirtualTime:
    """A clock that moves only when the client sleeps, shared by the client and the
    server below: a 25 s wait costs no real time, and both read the same instants."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep_until(self, instant: float) -> None:
        with self._lock:
            self._now = max(self._now, instant)


class AsyncVirtualTime(VirtualTime):
    async def sleep_until(self, instant: float) -> None:  # type: ignore[override]
        VirtualTime.sleep_until(self, instant)


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


def sent(gate: SubmitGate, at: float, answered: float | None = None) -> Ticket:
    """A submission let through at ``at`` (and answered, not 429, at ``answered``)."""
    delay, ticket = gate.acquire(at)
    assert delay == 0.0 and ticket is not None
    if answered is not None:
        gate.admitted(ticket, answered)
    return ticket


def test_gate_runs_free_until_a_429_then_paces_on_the_learned_window() -> None:
    gate = SubmitGate(window=10.0)
    for k in range(5):
        sent(gate, 0.1 * k, answered=0.1 * k + 0.01)
    sixth = sent(gate, 0.5)
    gate.rejected(sixth, 0.6, retry_after=9.0)  # the service holds 5 per window
    assert gate.learned_limit == 5
    delay, none = gate.acquire(0.7)  # nothing goes before the service's Retry-After
    assert none is None and delay == pytest.approx(0.6 + 9.0 - 0.7)
    # then the oldest, counted from its answer (0.01), leaves the window at 10.01
    sent(gate, 10.03, answered=10.04)  # one slot freed
    delay, held = gate.acquire(10.05)  # the next slot frees when the second leaves
    assert held is not None and delay == pytest.approx(0.11 + 10.0 + RESUME_MARGIN - 10.05)
    assert gate.go(held, 10.05 + delay)
    # a window after the last 429 the learned limit is forgotten
    assert gate.acquire(25.0)[1] is not None


def test_gate_waits_for_a_slot_whose_answer_is_still_in_flight() -> None:
    gate = SubmitGate(window=10.0)
    first = sent(gate, 0.0)  # no answer yet
    sent(gate, 0.0, answered=0.01)
    third = sent(gate, 0.02)
    gate.rejected(third, 0.03, retry_after=9.0)
    assert gate.learned_limit == 2
    # at 10.02 the second has left the window, but the first's slot is not known yet
    delay, none = gate.acquire(10.02)
    assert none is None and delay == pytest.approx(IN_FLIGHT_RECHECK)
    gate.admitted(first, 10.02)  # answered very late: it counts from now
    delay, held = gate.acquire(10.02)
    assert held is not None and delay == pytest.approx(10.0 + RESUME_MARGIN)


def test_waiting_workers_are_each_given_the_next_slot_not_all_the_same() -> None:
    gate = SubmitGate(window=10.0)
    for k in range(3):
        sent(gate, 0.1 * k, answered=0.1 * k + 0.01)
    fourth = sent(gate, 0.3)
    gate.rejected(fourth, 0.31, retry_after=1.0)  # the service holds 3 per window
    assert gate.learned_limit == 3
    now = 1.31  # the pause is over; the window frees its slots from 10.02 on
    held = [gate.acquire(now) for _ in range(3)]
    assert [now + delay for delay, _ in held] == pytest.approx(
        [0.1 * k + 0.01 + 10.0 + RESUME_MARGIN for k in range(3)]
    )
    assert all(ticket is not None for _, ticket in held)
    # a fourth worker cannot go before the first held slot is used and leaves in turn
    delay, none = gate.acquire(now)
    assert none is None and now + delay == pytest.approx(10.02 + 10.0 + RESUME_MARGIN)
    for delay, ticket in held:
        assert ticket is not None and gate.go(ticket, now + delay)


def test_a_held_slot_is_given_up_when_a_429_pauses_the_batch_meanwhile() -> None:
    gate = SubmitGate(window=10.0)
    sent(gate, 0.0, answered=0.01)
    second, third = sent(gate, 0.0), sent(gate, 0.0)
    gate.admitted(third, 0.01)
    gate.rejected(second, 0.02, retry_after=0.5)  # two per window
    first_delay, first = gate.acquire(0.6)
    second_delay, later = gate.acquire(0.6)
    assert first is not None and later is not None
    assert first is not later and first_delay == second_delay  # two slots, free at 10.02
    assert gate.go(first, 0.6 + first_delay)
    gate.rejected(first, 10.03, retry_after=5.0)  # the service still says no: pause
    assert not gate.go(later, 0.6 + second_delay)
    assert gate.in_window(10.03) == 0  # the held slot was given back
    delay, none = gate.acquire(10.03)
    assert none is None and delay > 0  # and its worker waits out the pause


def test_gate_honours_a_shorter_retry_after() -> None:
    gate = SubmitGate(window=10.0)
    sent(gate, 0.0, answered=0.0)
    second = sent(gate, 0.0)
    gate.rejected(second, 0.0, retry_after=1.0)
    delay, none = gate.acquire(0.0)
    assert none is None and delay == pytest.approx(1.0)
    gate2 = SubmitGate()
    only = sent(gate2, 0.0)
    gate2.rejected(only, 0.0, retry_after=3.0)  # nothing of ours in the window: trust it
    assert gate2.acquire(1.0)[0] == pytest.approx(2.0)


def test_retry_after_is_a_minimum_whatever_the_gate_guesses() -> None:
    # The gate's window is 10 s; this service's is longer and its Retry-After says so.
    gate = SubmitGate(window=10.0)
    sent(gate, 0.0, answered=0.01)
    second = sent(gate, 0.02)
    gate.rejected(second, 0.03, retry_after=25.0)
    assert gate.learned_limit == 1
    delay, none = gate.acquire(10.5)  # the gate's own guess has passed; the service's not
    assert none is None and 10.5 + delay == pytest.approx(25.03)
    assert gate.acquire(25.04)[1] is not None


def test_an_old_429_teaches_no_limit_but_its_retry_after_holds() -> None:
    gate = SubmitGate(window=10.0)
    sent(gate, 0.0, answered=0.0)
    b = sent(gate, 0.0)
    c = sent(gate, 0.0)
    gate.rejected(b, 0.01, retry_after=10.0)  # the news: the window is full
    assert gate.learned_limit == 2
    gate.rejected(c, 9.99, retry_after=10.0)  # in flight at the time: old news, whose
    assert gate.learned_limit == 2  # window was the one the pause already waits out
    assert gate.acquire(9.99)[0] == pytest.approx(0.02)  # not pushed out to 19.99
    d = sent(gate, 10.01)
    e = sent(gate, 10.01)
    gate.rejected(d, 10.02, retry_after=5.0)
    gate.rejected(e, 10.03, retry_after=7.0)  # old news asking for longer: it holds
    assert 10.03 + gate.acquire(10.03)[0] == pytest.approx(17.01)


def test_a_late_429_does_not_teach_a_limit_too_low() -> None:
    # The service admitted three at 0.04 (answers at 0.05) and holds three per window.
    # A fourth sent at 10.035 reaches it at 10.036, still inside the window of the
    # first three, and its 429 comes back slowly, at 10.2: by then those three have
    # left our window. The limit learned must still be three, not zero, or the batch's
    # last submissions would wait a whole window for nothing.
    gate = SubmitGate(window=10.0)
    for _ in range(3):
        sent(gate, 0.0, answered=0.05)
    fourth = sent(gate, 10.035)
    assert gate.in_window(10.1) == 1  # the three have left our window meanwhile
    gate.rejected(fourth, 10.2, retry_after=1.0)
    assert gate.learned_limit == 3
    assert gate.acquire(11.21)[1] is not None  # the wait asked for is over, slots free: go


def test_gate_threads_take_tickets_without_losing_any() -> None:
    gate = SubmitGate(window=10.0)
    taken: list[Ticket] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(500):
            _, ticket = gate.acquire(0.0)
            assert ticket is not None
            gate.admitted(ticket, 0.0)
            with lock:
                taken.append(ticket)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(map(id, taken))) == 2000
    assert gate.in_window(5.0) == 2000
    assert gate.in_window(10.02) == 0
