"""Flows driven by hand: the wait cadence and the pacing of /stream, without any I/O."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.client import Timeout
from nbext.client._flows import (
    Context,
    Deadline,
    Emit,
    JobState,
    Send,
    Sleep,
    poll_interval,
    stream,
    wait,
)
from nbext.client._gate import SubmitGate
from nbext.client._lookout import LONGEST_DELAY, Lookout
from nbext.client._map import submit_and_wait
from nbext.client._retry import RetryPolicy


class Scripted:
    """A driver with a fake clock: every request takes ``rtt`` seconds."""

    def __init__(self, answer: Any, rtt: float = 0.002) -> None:
        self.t = 0.0
        self.answer = answer
        self.rtt = rtt
        self.sent: list[tuple[float, str]] = []
        self.sleeps: list[tuple[float, float]] = []
        self.emitted: list[Any] = []
        self.ctx = Context(
            policy=RetryPolicy(),
            secret=None,
            key_source=None,
            timeout=30.0,
            wait_timeout=900.0,
            now=lambda: self.t,
            rand=lambda: 0.0,
        )

    def run(self, flow: Any) -> Any:
        value = None
        while True:
            try:
                effect = flow.send(value)
            except StopIteration as done:
                return done.value
            value = None
            if isinstance(effect, Sleep):
                self.sleeps.append((self.t, effect.seconds))
                self.t += effect.seconds
            elif isinstance(effect, Send):
                self.sent.append((self.t, effect.call.operation))
                self.t += self.rtt
                status, body = self.answer(self.t, effect.call)
                value = httpx.Response(status, json=body)
            elif isinstance(effect, Emit):
                self.emitted.append(effect.value.output)


def deadline(timeout: float) -> Deadline:
    return Deadline(start=0.0, timeout=timeout, what="job j", endpoint_id="e", job_id="j")


def test_polling_notices_the_end_within_max_50ms_or_10_percent() -> None:
    for end in (0.03, 0.21, 1.7, 13.0, 95.0):
        driver = Scripted(
            lambda t, call, end=end: (
                200,
                {"id": "j", "status": "COMPLETED" if t >= end else "IN_PROGRESS", "output": 1},
            )
        )
        state = JobState("e", "j", owns_stream=False)
        result = driver.run(wait(driver.ctx, state, deadline(1000.0)))
        assert result.output == 1
        noticed = driver.t
        assert noticed - end <= max(0.05, 0.1 * end) + 2 * driver.rtt, (end, noticed)
        assert {op for _, op in driver.sent} == {"status"}  # never /stream for others' jobs
        polls = len(driver.sent)
        assert polls <= 12 + 25 * max(1.0, end / 0.5) ** 0.5  # few polls on long jobs


def test_poll_interval() -> None:
    assert poll_interval(0.0) == 0.05 and poll_interval(2.0) == pytest.approx(0.2)
    assert poll_interval(10_000.0) == 15.0


def test_an_owned_job_waits_on_the_server_not_by_polling() -> None:
    ended = False

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        nonlocal ended
        if call.operation == "stream":  # the server held it until the job ended
            ended = True
            return 200, {"status": "COMPLETED", "stream": [{"output": "a", "metrics": {}}]}
        return 200, {"id": "j", "status": "COMPLETED" if ended else "IN_PROGRESS", "output": 2}

    driver = Scripted(answer)
    state = JobState("e", "j")  # just submitted by this handle: nothing heard of it yet
    assert driver.run(wait(driver.ctx, state, deadline(10.0))).output == 2
    assert [op for _, op in driver.sent] == ["stream", "status"]
    assert driver.sleeps == []
    assert [c.output for c in state.buffer] == ["a"]  # kept for stream()


def test_a_job_heard_of_before_is_looked_at_first() -> None:
    driver = Scripted(lambda t, call: (200, {"id": "j", "status": "COMPLETED", "output": 4}))
    state = JobState("e", "j", heard=True)
    assert driver.run(wait(driver.ctx, state, deadline(10.0))).output == 4
    assert [op for _, op in driver.sent] == ["status"]


def job_answers(done_at_look: bool) -> Any:
    """A service whose jobs end at once, or only when their /stream is waited on."""
    ended: set[str] = set()
    count = 0

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        nonlocal count
        if call.operation == "run":
            count += 1
            job = f"j{count}"
            if done_at_look:
                ended.add(job)
            return 200, {"id": job, "status": "IN_QUEUE"}
        if call.operation == "stream":
            ended.add(call.job_id)
            return 200, {"status": "COMPLETED", "stream": []}
        status = "COMPLETED" if call.job_id in ended else "IN_QUEUE"
        return 200, {"id": call.job_id, "status": status, "output": call.job_id}

    return answer


def map_item(driver: Scripted, gate: SubmitGate, lookout: Lookout) -> list[str]:
    first = len(driver.sent)
    result = driver.run(submit_and_wait(driver.ctx, gate, lookout, "e", b'{"input":{}}', 10.0))
    assert result.status == "COMPLETED"
    return [op for _, op in driver.sent[first:]]


def test_a_map_item_on_an_idle_endpoint_costs_two_calls() -> None:
    driver, gate, lookout = Scripted(job_answers(done_at_look=True)), SubmitGate(), Lookout()
    assert all(map_item(driver, gate, lookout) == ["run", "status"] for _ in range(50))


def test_map_items_on_a_busy_endpoint_learn_to_skip_the_useless_look() -> None:
    driver, gate, lookout = Scripted(job_answers(done_at_look=False)), SubmitGate(), Lookout()
    calls = [map_item(driver, gate, lookout) for _ in range(200)]
    assert calls[0] == ["run", "status", "stream", "status"]  # looked, and missed
    assert calls[-1] in (["run", "stream", "status"], ["run", "status", "stream", "status"])
    looked = sum(1 for c in calls if c[1] == "status")
    assert looked < 30  # about a dozen misses to learn, then one probe in 16
    assert sum(len(c) for c in calls[20:]) / 180 < 3.1


def test_a_map_item_sends_run_again_only_after_a_429() -> None:
    runs = 0

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        nonlocal runs
        if call.operation == "run":
            runs += 1
            if runs == 1:
                return 429, {"error": "rate limit of /run reached"}
            return 200, {"id": "j", "status": "IN_QUEUE"}
        return 200, {"id": "j", "status": "COMPLETED", "output": 1}

    driver, gate = Scripted(answer), SubmitGate()
    assert map_item(driver, gate, Lookout()) == ["run", "run", "status"]
    assert gate.rejections == 1
    assert driver.sleeps and driver.sleeps[0][1] == pytest.approx(1.0)  # no Retry-After: 1 s


def test_a_server_that_answers_stream_at_once_is_not_hammered() -> None:
    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        done = t >= 3.0
        if call.operation == "stream":
            return 200, {"status": "COMPLETED" if done else "IN_PROGRESS", "stream": []}
        return 200, {"id": "j", "status": "COMPLETED" if done else "IN_PROGRESS", "output": 3}

    driver = Scripted(answer)
    state = JobState("e", "j")
    driver.run(wait(driver.ctx, state, deadline(10.0)))
    streams = [t for t, op in driver.sent if op == "stream"]
    assert len(streams) < 60  # 50 ms at first, then 10 % of the time waited
    assert driver.t - 3.0 <= 0.3 + 2 * driver.rtt


def test_stream_emits_and_ends_at_the_final_state_even_when_cancelled() -> None:
    answers = iter(
        [
            {"status": "IN_PROGRESS", "stream": [{"output": "one", "metrics": {}}]},
            {"status": "IN_PROGRESS", "stream": [{"output": "two", "metrics": {}}]},
            {"status": "CANCELLED", "stream": []},
        ]
    )
    driver = Scripted(lambda t, call: (200, next(answers)))
    driver.run(stream(driver.ctx, JobState("e", "j"), deadline(10.0)))
    assert driver.emitted == ["one", "two"]
    assert len(driver.sent) == 3
    # back-to-back chunk-bearing answers are spaced by at most 20 ms
    assert all(s <= 0.02 for _, s in driver.sleeps)


def test_stream_has_a_deadline() -> None:
    driver = Scripted(lambda t, call: (200, {"status": "IN_PROGRESS", "stream": []}))
    with pytest.raises(Timeout, match="job j"):
        driver.run(stream(driver.ctx, JobState("e", "j"), deadline(2.0)))
    assert driver.t <= 2.0 + 0.3


def test_map_items_learn_when_their_jobs_end_and_look_then() -> None:
    # Every job ends 20 ms after its /run: after a few misses the first look waits
    # about that long and finds the job done (2 calls), and never comes more than
    # 50 ms after the job's end, the floor of the notice promise.
    ends: dict[str, float] = {}
    driver = Scripted(None)

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        if call.operation == "run":
            job = f"j{len(ends)}"
            ends[job] = t + 0.02
            return 200, {"id": job, "status": "IN_QUEUE"}
        end = ends[call.job_id]
        if call.operation == "stream":  # the service holds it until the job ends
            driver.t = max(driver.t, end)
            return 200, {"status": "COMPLETED", "stream": []}
        status = "COMPLETED" if t >= end else "IN_PROGRESS"
        return 200, {"id": call.job_id, "status": status, "output": 1}

    driver.answer = answer
    gate, lookout = SubmitGate(), Lookout()
    calls = []
    for _ in range(100):
        started = driver.t
        calls.append(map_item(driver, gate, lookout))
        job = f"j{len(ends) - 1}"
        assert driver.t - ends[job] <= LONGEST_DELAY + 2 * driver.rtt
        assert driver.t - started < 0.02 + LONGEST_DELAY + 4 * driver.rtt
    assert 0.015 <= lookout.delay <= LONGEST_DELAY  # about the 20 ms jobs take
    later = calls[20:]
    assert sum(c == ["run", "status"] for c in later) >= 0.8 * len(later)
    assert sum(len(c) for c in later) / len(later) < 2.3


def test_jobs_longer_than_a_look_may_wait_go_to_the_long_poll() -> None:
    ends: dict[str, float] = {}
    driver = Scripted(None)

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        if call.operation == "run":
            job = f"j{len(ends)}"
            ends[job] = t + 0.5
            return 200, {"id": job, "status": "IN_QUEUE"}
        end = ends[call.job_id]
        if call.operation == "stream":
            driver.t = max(driver.t, end)
            return 200, {"status": "COMPLETED", "stream": []}
        status = "COMPLETED" if t >= end else "IN_PROGRESS"
        return 200, {"id": call.job_id, "status": status, "output": 1}

    driver.answer = answer
    gate, lookout = SubmitGate(), Lookout()
    calls = [map_item(driver, gate, lookout) for _ in range(100)]
    assert lookout.delay == LONGEST_DELAY
    assert sum(c == ["run", "stream", "status"] for c in calls[20:]) >= 70
