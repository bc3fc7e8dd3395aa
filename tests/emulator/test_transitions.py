"""Every row of the transition table (docs/behaviour.md#states), one test each, at the domain level.

The domain (``emu.jobs``) is driven directly, on a fake clock, so each test states
exactly which move it makes and which state results. Rows, in the table's order:

(none) -> IN_QUEUE on /run or /runsync; IN_QUEUE -> IN_PROGRESS when a worker is free;
IN_PROGRESS -> COMPLETED; IN_PROGRESS -> FAILED; IN_QUEUE or IN_PROGRESS -> CANCELLED;
FAILED or TIMED_OUT -> IN_QUEUE by /retry; any state -> removed when the TTL elapses;
COMPLETED -> removed when retention elapses. The execution timeout adds IN_PROGRESS -> TIMED_OUT.
"""

from __future__ import annotations

import asyncio

import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.errors import NotFound
from nbext.emulator.domain.jobs import ALLOWED, IllegalTransition, check_transition
from nbext.models import JobStatus

from .conftest import Blocking, Gates, advance, status_of, submission, submit, until

pytestmark = pytest.mark.anyio
S = JobStatus


async def test_run_creates_a_job_in_queue(emu: Emulator) -> None:
    job = submit(emu, "held", {"x": 1})
    await settle()
    assert status_of(emu, "held", job.id)["status"] == "IN_QUEUE"
    assert emu.jobs.health("held").jobs.in_queue == 1


async def test_runsync_creates_a_job_in_queue_while_it_waits(emu: Emulator) -> None:
    waiter = asyncio.create_task(emu.jobs.run_sync("held", submission({"x": 1}), 5_000))
    await settle()
    (job,) = emu.jobs.jobs.values()
    assert job.sync and job.status is S.IN_QUEUE
    await advance(emu, 5)
    assert await waiter == {"id": job.id, "status": "IN_QUEUE"}


async def test_a_job_waits_in_queue_while_no_worker_is_free(emu: Emulator, gates: Gates) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="one", workers={"max": 1})
    first, second = submit(emu, "one"), submit(emu, "one")
    await settle()
    assert first.status is S.IN_PROGRESS
    assert second.status is S.IN_QUEUE
    assert gates.started == [first.id]


async def test_a_queued_job_starts_when_a_worker_becomes_available(
    emu: Emulator, gates: Gates
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="one", workers={"max": 1})
    first, second = submit(emu, "one"), submit(emu, "one")
    await settle()
    gates.open(first.id)
    await settle()
    assert first.status is S.COMPLETED
    assert second.status is S.IN_PROGRESS
    assert gates.started == [first.id, second.id]


async def test_handler_finishing_completes_the_job_with_its_output(emu: Emulator) -> None:
    job = submit(emu, "echo", {"hello": "world"})
    await settle()
    body = status_of(emu, "echo", job.id)
    assert body["status"] == "COMPLETED"
    assert body["output"] == {"hello": "world"}
    assert "error" not in body


async def test_worker_error_fails_the_job_and_allows_retry(emu: Emulator) -> None:
    job = submit(emu, "fail", {"message": "boom"})
    await settle()
    body = status_of(emu, "fail", job.id)
    assert body["status"] == "FAILED"
    assert "boom" in body["error"]
    assert "output" not in body
    assert emu.jobs.retry("fail", job.id).status is S.IN_QUEUE


async def test_cancel_moves_a_queued_job_to_cancelled(emu: Emulator) -> None:
    job = submit(emu, "held")
    result = emu.jobs.cancel("held", job.id)
    assert result.to_wire() == {"id": job.id, "status": "CANCELLED"}
    assert status_of(emu, "held", job.id)["status"] == "CANCELLED"


async def test_cancel_moves_a_running_job_to_cancelled(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 60})
    await settle()
    assert job.status is S.IN_PROGRESS
    assert emu.jobs.cancel("sleep", job.id).status is S.CANCELLED
    assert status_of(emu, "sleep", job.id)["status"] == "CANCELLED"


async def test_retry_moves_a_failed_job_back_to_in_queue(emu: Emulator, gates: Gates) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"max": 1})
    blocker = submit(emu, "g")
    job = submit(emu, "g")
    await settle()
    gates.open(blocker.id)  # frees the only worker for `job`
    await settle()
    gates.fail(job.id)
    await settle()
    assert job.status is S.FAILED
    occupied = submit(emu, "g")  # holds the worker, so the retried job stays queued
    await settle()
    assert emu.jobs.retry("g", job.id).to_wire() == {"id": job.id, "status": "IN_QUEUE"}
    assert status_of(emu, "g", job.id)["status"] == "IN_QUEUE"
    gates.open(occupied.id)
    await settle()
    assert job.status is S.IN_PROGRESS


async def test_retry_moves_a_timed_out_job_back_to_in_queue(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 60}, policy={"executionTimeout": 5_000})
    await settle()
    await advance(emu, 5)
    assert job.status is S.TIMED_OUT
    assert emu.jobs.retry("sleep", job.id).status is S.IN_QUEUE
    await settle()
    assert job.status is S.IN_PROGRESS  # a free worker picks it up again


async def test_execution_timeout_moves_a_running_job_to_timed_out(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 60}, policy={"executionTimeout": 5_000})
    await settle()
    await advance(emu, 4.999)
    assert job.status is S.IN_PROGRESS
    await advance(emu, 0.001)
    body = status_of(emu, "sleep", job.id)
    assert body["status"] == "TIMED_OUT"
    assert "5000 ms" in body["error"]


@pytest.mark.parametrize("state", ["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED"])
async def test_ttl_removes_a_job_in_any_state(emu: Emulator, state: str) -> None:
    endpoint, payload = {
        "IN_QUEUE": ("held", {}),
        "IN_PROGRESS": ("sleep", {"seconds": 3600}),
        "COMPLETED": ("echo", {}),
        "FAILED": ("fail", {}),
        "CANCELLED": ("held", {}),
    }[state]
    job = submit(emu, endpoint, payload, policy={"ttl": 10_000})
    await settle()
    if state == "CANCELLED":
        emu.jobs.cancel(endpoint, job.id)
    assert status_of(emu, endpoint, job.id)["status"] == state
    await advance(emu, 9.999)
    assert status_of(emu, endpoint, job.id)["status"] == state
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status(endpoint, job.id)
    assert emu.jobs.health(endpoint).jobs.in_queue == 0
    assert emu.jobs.health(endpoint).jobs.in_progress == 0


async def test_ttl_removes_a_timed_out_job(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 60}, policy={"ttl": 10_000, "executionTimeout": 5_000})
    await settle()
    await advance(emu, 5)
    assert job.status is S.TIMED_OUT
    await advance(emu, 5)
    with pytest.raises(NotFound):
        emu.jobs.status("sleep", job.id)


async def test_retention_removes_a_completed_job(emu: Emulator) -> None:
    job = submit(emu, "echo")
    await settle()
    await advance(emu, 30 * 60 - 0.001)
    assert status_of(emu, "echo", job.id)["status"] == "COMPLETED"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("echo", job.id)


def test_the_transition_table_is_the_seeds_plus_timed_out() -> None:
    """The table itself: every move the table lists, TIMED_OUT on timeout, nothing else."""
    expected = {
        (S.IN_QUEUE, S.IN_PROGRESS),
        (S.IN_QUEUE, S.CANCELLED),
        (S.IN_PROGRESS, S.COMPLETED),
        (S.IN_PROGRESS, S.FAILED),
        (S.IN_PROGRESS, S.CANCELLED),
        (S.IN_PROGRESS, S.TIMED_OUT),
        (S.FAILED, S.IN_QUEUE),
        (S.TIMED_OUT, S.IN_QUEUE),
    }
    assert {(a, b) for a, targets in ALLOWED.items() for b in targets} == expected
    for a in S:
        for b in S:
            if (a, b) in expected:
                check_transition(a, b)
            else:
                with pytest.raises(IllegalTransition):
                    check_transition(a, b)


async def test_a_released_thread_handler_cannot_resurrect_a_removed_job(
    emu: Emulator, blocking: Blocking
) -> None:
    """TTL removes a running job; the handler's later result is dropped, nothing counts it."""
    emu.deploy(handler=blocking.handler, endpoint_id="b")
    job = submit(emu, "b", policy={"ttl": 10_000})
    await until(lambda: job.id in blocking.started, "the handler to start")
    await advance(emu, 10)
    blocking.release(job.id)
    await until(lambda: job.id in blocking.returned, "the handler to return")
    await settle()
    assert blocking.saw_cancel[job.id] is True
    assert job.id not in emu.jobs.jobs
    with pytest.raises(NotFound):
        emu.jobs.status("b", job.id)
    health = emu.jobs.health("b")
    assert (health.jobs.completed, health.jobs.in_progress, health.workers.running) == (0, 0, 0)
