"""``client.on_job_result``: every job state the client reads reaches its listeners; and
``job.states()``, the loop over those answers for one job."""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest

from nbext.client import Timeout
from nbext.models import JobResult, JobStatus

from .conftest import Harness

pytestmark = pytest.mark.anyio
S = JobStatus


def states_of(seen: list[JobResult], job_id: str) -> list[JobStatus]:
    return [result.status for result in seen if result.id == job_id]


async def test_listeners_hear_submission_status_wait_cancel_and_retry(h: Harness) -> None:
    seen: list[JobResult] = []
    h.client.on_job_result(seen.append)
    job = await h.call(h.endpoint("sleep").run, {"seconds": 60})
    assert states_of(seen, job.id) == [S.IN_QUEUE]
    await h.until(lambda: h.job(job.id).status is S.IN_PROGRESS, "job started")
    await h.call(job.status)
    assert states_of(seen, job.id)[-1] is S.IN_PROGRESS
    await h.call(job.cancel)
    assert states_of(seen, job.id)[-1] is S.CANCELLED

    attempts: list[str] = []

    def flaky(job: dict[str, Any]) -> dict[str, Any]:
        attempts.append(job["id"])
        if len(attempts) == 1:
            raise RuntimeError("transient")
        return {"ok": True}

    h.emu.deploy(handler=flaky, endpoint_id="flaky")
    failing = await h.call(h.endpoint("flaky").run, {})
    await h.call(failing.wait, timeout=5, raise_on_failure=False)
    assert states_of(seen, failing.id)[-1] is S.FAILED
    await h.call(failing.retry)
    assert states_of(seen, failing.id)[-1] is S.IN_QUEUE
    done = await h.call(failing.wait, timeout=5)
    assert seen[-1] == done and done.output == {"ok": True}


async def test_run_sync_and_map_results_reach_listeners_on_the_callers_thread(
    h: Harness,
) -> None:
    seen: list[tuple[str, int]] = []
    h.client.on_job_result(lambda result: seen.append((result.id, threading.get_ident())))

    def run_and_map() -> tuple[int, list[str]]:
        done = h.endpoint("echo").run_sync({"n": 1}, wait=5, timeout=10)
        mapped = [result.id for _, result in h.endpoint("echo").map([{"i": 1}, {"i": 2}])]
        return threading.get_ident(), [done.id, *mapped]

    if h.is_async:
        done = await h.endpoint("echo").run_sync({"n": 1}, wait=5, timeout=10)
        mapped = [r.id async for _, r in h.endpoint("echo").map([{"i": 1}, {"i": 2}])]
        caller, ids = threading.get_ident(), [done.id, *mapped]
    else:
        caller, ids = await h.call(run_and_map)
    assert {job_id for job_id, _ in seen} >= set(ids)
    assert {thread for _, thread in seen} == {caller}


async def test_a_listener_that_raises_is_logged_and_the_call_goes_on(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[JobResult] = []

    def broken(result: JobResult) -> None:
        raise RuntimeError("observer bug")

    h.client.on_job_result(broken)
    unsubscribe = h.client.on_job_result(heard.append)
    with caplog.at_level(logging.ERROR, logger="nbext.client"):
        job = await h.call(h.endpoint("echo").run, {"x": 1})
        result = await h.call(job.wait, timeout=5)
    assert result.status is S.COMPLETED and result.output == {"x": 1}
    assert heard[-1] == result  # the next listener still heard it
    assert "observer bug" in caplog.text and job.id in caplog.text
    unsubscribe()
    unsubscribe()  # twice is harmless
    await h.call(job.status)
    assert heard[-1] == result and len(heard) == len(states_of(heard, job.id))


# ---- job.states(): the same answers, as a loop the caller runs -----------------------------


async def test_states_are_each_status_answer_until_the_final_one(h: Harness) -> None:
    heard: list[JobResult] = []
    h.client.on_job_result(heard.append)
    job = await h.call(h.endpoint("sleep").run, {"seconds": 60})
    await h.until(lambda: h.job(job.id).status is S.IN_PROGRESS, "job started")
    polled: list[JobResult] = []

    async def follow() -> None:
        polled.extend(await h.collect(job.states(timeout=10)))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(follow)
        await h.until(lambda: states_of(heard, job.id).count(S.IN_PROGRESS) >= 2, "two polls")
        await h.advance(61)
    statuses = [result.status for result in polled]
    assert statuses[-1] is S.COMPLETED and set(statuses[:-1]) == {S.IN_PROGRESS}
    assert len(statuses) >= 3 and polled == [r for r in heard if r.id == job.id][1:]
    assert polled[-1].output is not None  # the final answer, not raised on or summarised


async def test_states_past_the_timeout_raise_and_leave_the_job_running(h: Harness) -> None:
    job = await h.call(h.endpoint("held").run, {})
    with pytest.raises(Timeout) as late:
        await h.collect(job.states(timeout=0.2))
    assert late.value.last_status is S.IN_QUEUE and late.value.job_id == job.id
    assert h.job(job.id).status is S.IN_QUEUE


async def test_states_leave_the_stream_to_its_reader(h: Harness) -> None:
    """/stream hands each chunk out once: following the states must not take any."""
    job = await h.call(h.endpoint("stream").run, {"text": "one two three"})
    polled = await h.collect(job.states(timeout=5))
    assert polled[-1].status is S.COMPLETED
    outputs = await h.collect(job.stream(timeout=5))
    assert "".join(o["text"][0] for o in outputs) == "one two three"
