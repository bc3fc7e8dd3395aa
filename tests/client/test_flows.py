"""Flows driven by hand: the wait cadence and the pacing of /stream, without any I/O."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.client import Timeout
from nbext.client._drive import Steps
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
from nbext.client._map import MAP_HOLD, operation_for, submit_and_wait
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
        steps = Steps(flow)
        while (effect := steps.advance()) is not None:
            if isinstance(effect, Sleep):
                self.sleeps.append((self.t, effect.until - self.t))
                self.t = effect.until
            elif isinstance(effect, Send):
                self.sent.append((self.t, effect.call.operation))
                self.t += self.rtt
                answered = self.answer(self.t, effect.call)
                if isinstance(answered, httpx.TransportError):  # the connection failed
                    steps.fail(answered)
                    continue
                status, body = answered
                steps.answer(httpx.Response(status, json=body))
            elif isinstance(effect, Emit):
                self.emitted.append(effect.value.output)
        return steps.result


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


# ---- one map item -------------------------------------------------------------------


def map_item(
    driver: Scripted, timeout: float | None = 10.0, gate: SubmitGate | None = None
) -> list[str]:
    first = len(driver.sent)
    body = b'{"input":{}}'
    operation = operation_for(timeout)
    result = driver.run(
        submit_and_wait(driver.ctx, gate or SubmitGate(), operation, "e", body, timeout)
    )
    assert result.status == "COMPLETED" and result.output == "done"
    return [op for _, op in driver.sent[first:]]


def ends_after(seconds: float, driver: Scripted) -> Any:
    """A service whose one job ends ``seconds`` after its submission, holding /runsync
    and /stream as the interface says (until the end, or for the asked hold)."""
    end: list[float] = []

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        done = {"id": "j", "status": "COMPLETED", "output": "done"}
        if call.operation in ("run", "runsync"):
            end.append(t + seconds)
            if call.operation == "runsync":
                if seconds <= int(call.params["wait"]) / 1000:
                    driver.t = end[0]
                    return 200, done
                driver.t = t + int(call.params["wait"]) / 1000
            return 200, {"id": "j", "status": "IN_PROGRESS"}
        if call.operation == "stream":
            driver.t = max(driver.t, min(end[0], t + int(call.params["wait"]) / 1000))
            return 200, {
                "status": "COMPLETED" if driver.t >= end[0] else "IN_PROGRESS",
                "stream": [],
            }
        return 200, done if t >= end[0] else {"id": "j", "status": "IN_PROGRESS"}

    return answer


def test_a_map_item_whose_job_ends_within_the_hold_costs_one_call() -> None:
    driver = Scripted(None)
    driver.answer = ends_after(0.3, driver)
    assert map_item(driver) == ["runsync"]
    assert driver.t == pytest.approx(0.3 + driver.rtt)  # the answer came at the end


def test_a_map_item_whose_job_outlives_the_hold_waits_on_its_id() -> None:
    driver = Scripted(None)
    driver.answer = ends_after(7.0, driver)
    assert map_item(driver) == ["runsync", "stream", "status"]  # never submitted twice
    assert driver.t - 7.0 <= 2 * driver.rtt  # the long-poll answered at the end


def test_a_map_item_with_a_timeout_shorter_than_two_holds_submits_through_run() -> None:
    assert operation_for(None) == operation_for(2 * MAP_HOLD) == "runsync"
    driver = Scripted(None)
    driver.answer = ends_after(0.5, driver)
    assert map_item(driver, timeout=1.5) == ["run", "stream", "status"]


def test_a_map_item_has_a_deadline_counted_from_its_submission() -> None:
    driver = Scripted(None)
    driver.answer = ends_after(60.0, driver)
    with pytest.raises(Timeout, match=r"job j .*submitted by /runsync"):
        map_item(driver, timeout=5.0)
    assert driver.t <= 5.0 + 0.3


def test_a_map_item_sends_its_submission_again_only_after_a_429() -> None:
    sent = 0

    def answer(t: float, call: Any) -> tuple[int, dict[str, Any]]:
        nonlocal sent
        sent += 1
        if sent == 1:
            return 429, {"error": "rate limit of /runsync reached"}
        return 200, {"id": "j", "status": "COMPLETED", "output": "done"}

    driver, gate = Scripted(answer), SubmitGate()
    assert map_item(driver, gate=gate) == ["runsync", "runsync"]
    # no Retry-After: the retry policy's first backoff (0.25 s, at its least jitter)
    assert [seconds for _, seconds in driver.sleeps] == [pytest.approx(0.125)]


@pytest.mark.parametrize("operation", ["run", "runsync"])
def test_a_map_item_whose_submission_may_have_arrived_is_never_sent_again(
    operation: str,
) -> None:
    driver = Scripted(lambda t, call: httpx.ReadError("connection reset by peer"))
    gate = SubmitGate()
    timeout = 10.0 if operation == "runsync" else 1.0
    with pytest.raises(Exception, match="connection reset by peer"):
        map_item(driver, timeout=timeout, gate=gate)
    assert [op for _, op in driver.sent] == [operation]
    assert gate.wait(driver.t) == 0.0  # not refused: nothing waits


def test_the_effect_a_flow_yields_after_a_failure_is_performed() -> None:
    # A transport failure is thrown into the flow; what the flow yields in answer (here
    # a pause before trying again) is its next effect, and must not be skipped.
    def flow() -> Any:
        try:
            yield "first"
        except httpx.ConnectError:
            got = yield "after the failure"
            return got
        return "no failure"

    steps = Steps(flow())
    assert steps.advance() == "first"
    steps.fail(httpx.ConnectError("refused"))
    assert steps.advance() == "after the failure"
    steps.answer("its result")
    assert steps.advance() is None and steps.result == "its result"
