"""Every job decision of docs/behaviour.md#jobs, one test each, at the domain level on a fake clock.

Ids; the execution timeout (job policy, endpoint setting, default); TTL counted from
submission and set by ``/status?ttl``; retention of 30 min (/run) and 1 min (/runsync),
whichever of TTL and retention comes first; cancel, retry and purge with their
eligible and ineligible states; the health counters.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.errors import Conflict, InvalidInput, NotFound
from nbext.emulator.domain.jobs import Job
from nbext.models import JobStatus

from .conftest import Blocking, Gates, advance, status_of, submission, submit, until

pytestmark = pytest.mark.anyio
S = JobStatus


async def _final(emu: Emulator, state: str) -> tuple[str, Job]:
    """A /run job brought to the final ``state``; returns its endpoint and the job."""
    if state == "COMPLETED":
        job = submit(emu, "echo", {"a": 1})
        endpoint = "echo"
    elif state == "FAILED":
        job, endpoint = submit(emu, "fail", {"message": "no"}), "fail"
    elif state == "CANCELLED":
        job, endpoint = submit(emu, "held"), "held"
        emu.jobs.cancel("held", job.id)
    else:
        job = submit(emu, "sleep", {"seconds": 60}, policy={"executionTimeout": 5_000})
        endpoint = "sleep"
        await settle()
        await advance(emu, 5)
    await settle()
    assert job.status.value == state
    return endpoint, job


# ---- ids -------------------------------------------------------------------------------


async def test_run_ids_are_uuid4_strings(emu: Emulator) -> None:
    ids = {submit(emu, "held").id for _ in range(20)}
    assert len(ids) == 20
    for job_id in ids:
        assert str(uuid.UUID(job_id)) == job_id
        assert uuid.UUID(job_id).version == 4


async def test_runsync_ids_are_uuid4_with_the_sync_prefix(emu: Emulator) -> None:
    result = await emu.jobs.run_sync("echo", submission({"n": 1}), 1_000)
    prefix, _, rest = result["id"].partition("-")
    assert prefix == "sync"
    assert uuid.UUID(rest).version == 4 and str(uuid.UUID(rest)) == rest


# ---- execution timeout -------------------------------------------------------------------


async def test_execution_timeout_defaults_to_ten_minutes(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 3600})
    await settle()
    await advance(emu, 600 - 0.001)
    assert job.status is S.IN_PROGRESS
    await advance(emu, 0.001)
    assert job.status is S.TIMED_OUT
    assert "600000 ms" in (job.error or "")


async def test_execution_timeout_comes_from_the_endpoint_setting(emu: Emulator) -> None:
    emu.deploy("sleep", endpoint_id="short", execution_timeout_ms=20_000)
    job = submit(emu, "short", {"seconds": 3600})
    await settle()
    await advance(emu, 19.999)
    assert job.status is S.IN_PROGRESS
    await advance(emu, 0.001)
    assert job.status is S.TIMED_OUT


@pytest.mark.parametrize("policy_ms", [8_000, 30_000])
async def test_execution_timeout_policy_overrides_the_endpoint_for_one_job(
    emu: Emulator, policy_ms: int
) -> None:
    emu.deploy("sleep", endpoint_id="short", execution_timeout_ms=20_000)
    job = submit(emu, "short", {"seconds": 3600}, policy={"executionTimeout": policy_ms})
    other = submit(emu, "short", {"seconds": 3600})
    await settle()
    await advance(emu, policy_ms / 1000 - 0.001)
    assert job.status is S.IN_PROGRESS
    await advance(emu, 0.001)
    assert job.status is S.TIMED_OUT
    assert f"{policy_ms} ms" in (job.error or "")
    assert other.status is (S.TIMED_OUT if policy_ms > 20_000 else S.IN_PROGRESS)


async def test_timed_out_handler_is_told_to_stop_and_its_result_dropped(
    emu: Emulator, blocking: Blocking
) -> None:
    emu.deploy(handler=blocking.handler, endpoint_id="b", execution_timeout_ms=5_000)
    job = submit(emu, "b")
    await until(lambda: job.id in blocking.started, "the handler to start")
    await advance(emu, 5)
    assert job.status is S.TIMED_OUT
    blocking.release(job.id)
    await until(lambda: job.id in blocking.returned, "the handler to return")
    await settle()
    assert blocking.saw_cancel[job.id] is True
    body = status_of(emu, "b", job.id)
    assert body["status"] == "TIMED_OUT" and "output" not in body
    assert emu.jobs.health("b").jobs.completed == 0


# ---- TTL ---------------------------------------------------------------------------------


async def test_ttl_defaults_to_24_hours_from_submission(emu: Emulator) -> None:
    job = submit(emu, "held")
    await advance(emu, 86_400 - 0.001)
    assert status_of(emu, "held", job.id)["status"] == "IN_QUEUE"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("held", job.id)


async def test_ttl_counts_queue_time_plus_execution_time(emu: Emulator) -> None:
    """The TTL runs from submission, not from the start: queue time uses it up too."""
    emu.deploy("sleep", endpoint_id="one", workers={"max": 1})
    blocker = submit(emu, "one", {"seconds": 8})
    job = submit(emu, "one", {"seconds": 5}, policy={"ttl": 12_000})
    await settle()
    await advance(emu, 8)  # blocker done; job starts at t=8 and would end at t=13
    assert blocker.status is S.COMPLETED and job.status is S.IN_PROGRESS
    await advance(emu, 4)
    with pytest.raises(NotFound):
        emu.jobs.status("one", job.id)
    assert emu.jobs.health("one").jobs.completed == 1


async def test_status_ttl_sets_the_ttl_counted_from_submission(emu: Emulator) -> None:
    job = submit(emu, "held")
    await advance(emu, 30)
    assert emu.jobs.status("held", job.id, ttl_ms=40_000).status is S.IN_QUEUE
    await advance(emu, 9.999)
    assert status_of(emu, "held", job.id)["status"] == "IN_QUEUE"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("held", job.id)


async def test_status_ttl_can_lengthen_a_policy_ttl(emu: Emulator) -> None:
    job = submit(emu, "held", policy={"ttl": 10_000})
    emu.jobs.status("held", job.id, ttl_ms=60_000)
    await advance(emu, 59)
    assert status_of(emu, "held", job.id)["status"] == "IN_QUEUE"
    await advance(emu, 1)
    with pytest.raises(NotFound):
        emu.jobs.status("held", job.id)


@pytest.mark.parametrize("ttl_ms", [9_999, 604_800_001, 0, -5])
async def test_status_ttl_out_of_range_is_refused_and_changes_nothing(
    emu: Emulator, ttl_ms: int
) -> None:
    job = submit(emu, "held", policy={"ttl": 20_000})
    with pytest.raises(InvalidInput, match="ttl must be between 10000 and 604800000"):
        emu.jobs.status("held", job.id, ttl_ms=ttl_ms)
    assert job.ttl_ms == 20_000


async def test_status_ttl_already_elapsed_is_refused_with_the_reason(emu: Emulator) -> None:
    job = submit(emu, "held")
    await advance(emu, 15)
    with pytest.raises(InvalidInput, match="already elapsed"):
        emu.jobs.status("held", job.id, ttl_ms=12_000)
    assert status_of(emu, "held", job.id)["status"] == "IN_QUEUE"


# ---- retention ---------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"])
async def test_run_jobs_are_kept_30_minutes_after_they_end(emu: Emulator, state: str) -> None:
    endpoint, job = await _final(emu, state)
    await advance(emu, 30 * 60 - 0.001)
    assert status_of(emu, endpoint, job.id)["status"] == state
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status(endpoint, job.id)


@pytest.mark.parametrize("endpoint", ["echo", "fail"])
async def test_runsync_jobs_are_kept_1_minute_after_they_end(emu: Emulator, endpoint: str) -> None:
    result = await emu.jobs.run_sync(endpoint, submission({}), 1_000)
    await advance(emu, 60 - 0.001)
    assert status_of(emu, endpoint, result["id"])["status"] == result["status"]
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status(endpoint, result["id"])


async def test_retention_counts_from_the_end_not_from_submission(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 100})
    await settle()
    await advance(emu, 100)
    assert job.status is S.COMPLETED
    await advance(emu, 30 * 60 - 0.001)
    assert status_of(emu, "sleep", job.id)["status"] == "COMPLETED"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("sleep", job.id)


async def test_ttl_removes_a_finished_job_before_retention_when_it_comes_first(
    emu: Emulator,
) -> None:
    job = submit(emu, "echo", policy={"ttl": 20_000})
    await settle()
    assert job.status is S.COMPLETED
    await advance(emu, 19.999)
    assert status_of(emu, "echo", job.id)["status"] == "COMPLETED"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("echo", job.id)


async def test_retention_removes_a_job_before_its_ttl_when_it_comes_first(
    emu: Emulator,
) -> None:
    result = await emu.jobs.run_sync("echo", submission({}, policy={"ttl": 600_000}), 1_000)
    await advance(emu, 60)
    with pytest.raises(NotFound):
        emu.jobs.status("echo", result["id"])


async def test_a_retried_job_is_not_removed_by_its_old_retention(
    emu: Emulator, gates: Gates
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", execution_timeout_ms=3_600_000)
    job = submit(emu, "g")
    await settle()
    gates.fail(job.id)
    await settle()
    assert job.status is S.FAILED
    await advance(emu, 20 * 60)
    emu.jobs.retry("g", job.id)
    await settle()
    await advance(emu, 20 * 60)  # past the first failure's retention, still running
    assert status_of(emu, "g", job.id)["status"] == "IN_PROGRESS"
    gates.fail(job.id)
    await settle()
    await advance(emu, 30 * 60 - 0.001)  # the new failure's retention
    assert status_of(emu, "g", job.id)["status"] == "FAILED"
    await advance(emu, 0.001)
    with pytest.raises(NotFound):
        emu.jobs.status("g", job.id)


# ---- cancel ------------------------------------------------------------------------------


async def test_a_cancelled_queued_job_never_starts(emu: Emulator, gates: Gates) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="one", workers={"max": 1})
    first, second = submit(emu, "one"), submit(emu, "one")
    await settle()
    emu.jobs.cancel("one", second.id)
    gates.open(first.id)
    await settle()
    assert gates.started == [first.id]
    assert second.status is S.CANCELLED
    assert status_of(emu, "one", second.id)["executionTime"] == 0
    assert emu.jobs.health("one").workers.running == 0


async def test_cancel_tells_a_running_handler_to_stop_and_drops_its_output(
    emu: Emulator, blocking: Blocking
) -> None:
    emu.deploy(handler=blocking.handler, endpoint_id="b")
    job = submit(emu, "b")
    await until(lambda: job.id in blocking.started, "the handler to start")
    emu.jobs.cancel("b", job.id)
    assert emu.jobs.health("b").workers.running == 0  # the worker is free at once
    blocking.release(job.id)
    await until(lambda: job.id in blocking.returned, "the handler to return")
    await settle()
    assert blocking.saw_cancel[job.id] is True
    body = status_of(emu, "b", job.id)
    assert body["status"] == "CANCELLED" and "output" not in body
    assert emu.jobs.health("b").jobs.completed == 0


async def test_cancelling_the_sleep_image_stops_it_at_once(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 3600})
    await settle()
    task = job.task
    assert task is not None
    emu.jobs.cancel("sleep", job.id)
    await settle()
    assert task.done()
    assert emu.jobs.health("sleep").workers.running == 0


async def test_cancelling_a_cancelled_job_answers_the_same_again(emu: Emulator) -> None:
    job = submit(emu, "held")
    first = emu.jobs.cancel("held", job.id).to_wire()
    second = emu.jobs.cancel("held", job.id).to_wire()
    assert first == second == {"id": job.id, "status": "CANCELLED"}


@pytest.mark.parametrize("state", ["COMPLETED", "FAILED", "TIMED_OUT"])
async def test_cancelling_a_finished_job_is_a_conflict(emu: Emulator, state: str) -> None:
    endpoint, job = await _final(emu, state)
    with pytest.raises(Conflict, match=f"{state} and can no longer be cancelled"):
        emu.jobs.cancel(endpoint, job.id)
    assert job.status.value == state


async def test_cancelling_an_unknown_job_is_not_found(emu: Emulator) -> None:
    with pytest.raises(NotFound, match="not found"):
        emu.jobs.cancel("echo", str(uuid.uuid4()))


# ---- retry -------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["FAILED", "TIMED_OUT"])
async def test_retry_keeps_id_and_input_and_clears_output_and_error(
    emu: Emulator, gates: Gates, state: str
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"max": 1})
    job = submit(emu, "g", {"n": 1}, policy={"executionTimeout": 5_000})
    await settle()
    if state == "FAILED":
        gates.fail(job.id)
        await settle()
    else:
        await advance(emu, 5)
    assert job.status.value == state and job.error
    blocker = submit(emu, "g")  # takes the only worker, so the retried job stays queued
    await settle()
    accepted = emu.jobs.retry("g", job.id)
    assert accepted.to_wire() == {"id": job.id, "status": "IN_QUEUE"}
    body = status_of(emu, "g", job.id)
    assert body["id"] == job.id and body["status"] == "IN_QUEUE"
    assert "error" not in body and "output" not in body
    assert job.input == {"n": 1}
    assert emu.jobs.health("g").jobs.retried == 1
    gates.open(blocker.id)
    await settle()
    assert job.status is S.IN_PROGRESS and gates.started[-1] == job.id


async def test_a_retried_job_runs_again_with_the_same_input(emu: Emulator, gates: Gates) -> None:
    seen: list[dict[str, object]] = []

    async def flaky(job: dict[str, object]) -> object:
        seen.append(job)
        if len(seen) == 1:
            raise RuntimeError("first attempt fails")
        return {"second": True}

    emu.deploy(handler=flaky, endpoint_id="flaky")
    job = submit(emu, "flaky", {"n": 7})
    await settle()
    assert job.status is S.FAILED
    emu.jobs.retry("flaky", job.id)
    await settle()
    assert [s["id"] for s in seen] == [job.id, job.id]
    assert [s["input"] for s in seen] == [{"n": 7}, {"n": 7}]
    assert status_of(emu, "flaky", job.id)["output"] == {"second": True}
    health = emu.jobs.health("flaky").jobs
    assert (health.failed, health.completed, health.retried) == (1, 1, 1)


@pytest.mark.parametrize("state", ["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "CANCELLED"])
async def test_retry_of_other_states_is_a_conflict(emu: Emulator, state: str) -> None:
    if state in ("COMPLETED", "CANCELLED"):
        endpoint, job = await _final(emu, state)
    elif state == "IN_QUEUE":
        endpoint, job = "held", submit(emu, "held")
    else:
        endpoint, job = "sleep", submit(emu, "sleep", {"seconds": 60})
        await settle()
    with pytest.raises(Conflict, match="only FAILED or TIMED_OUT"):
        emu.jobs.retry(endpoint, job.id)
    assert job.status.value == state
    assert emu.jobs.health(endpoint).jobs.retried == 0


async def test_retry_of_an_expired_job_is_not_found(emu: Emulator) -> None:
    endpoint, job = await _final(emu, "FAILED")
    await advance(emu, 30 * 60)
    with pytest.raises(NotFound):
        emu.jobs.retry(endpoint, job.id)
    assert emu.jobs.health(endpoint).jobs.retried == 0


# ---- purge -------------------------------------------------------------------------------


async def test_purge_removes_only_queued_jobs_and_running_ones_go_on(emu: Emulator) -> None:
    emu.deploy("sleep", endpoint_id="two", workers={"max": 2})
    running = [submit(emu, "two", {"seconds": 10}) for _ in range(2)]
    queued = [submit(emu, "two", {"seconds": 10}) for _ in range(3)]
    await settle()
    result = emu.jobs.purge("two")
    assert result.to_wire() == {"removed": 3, "status": "completed"}
    for job in queued:
        with pytest.raises(NotFound):
            emu.jobs.status("two", job.id)
    assert [status_of(emu, "two", j.id)["status"] for j in running] == ["IN_PROGRESS"] * 2
    await advance(emu, 10)
    assert [status_of(emu, "two", j.id)["status"] for j in running] == ["COMPLETED"] * 2
    health = emu.jobs.health("two").jobs
    assert (health.in_queue, health.completed) == (0, 2)


async def test_purge_leaves_finished_jobs_alone(emu: Emulator) -> None:
    done = submit(emu, "echo")
    await settle()
    assert emu.jobs.purge("echo").removed == 0
    assert status_of(emu, "echo", done.id)["status"] == "COMPLETED"


async def test_purge_of_an_empty_queue_removes_nothing(emu: Emulator) -> None:
    assert emu.jobs.purge("held").to_wire() == {"removed": 0, "status": "completed"}


async def test_purge_wakes_a_runsync_waiting_on_a_purged_job(emu: Emulator) -> None:
    waiter = asyncio.create_task(emu.jobs.run_sync("held", submission({}), 60_000))
    await settle()
    emu.jobs.purge("held")
    with pytest.raises(NotFound, match="removed"):
        await asyncio.wait_for(waiter, 5)


# ---- health ------------------------------------------------------------------------------


async def test_health_counts_every_kind_of_job(emu: Emulator, gates: Gates) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"max": 2})
    jobs = [submit(emu, "g") for _ in range(5)]
    await settle()
    health = emu.jobs.health("g").to_wire()
    assert health == {
        "jobs": {"completed": 0, "failed": 0, "inProgress": 2, "inQueue": 3, "retried": 0},
        "workers": {
            "idle": 0,
            "running": 2,
            "initializing": 0,
            "ready": 2,
            "throttled": 0,
            "unhealthy": 0,
        },
    }
    gates.open(jobs[0].id)
    await settle()
    gates.fail(jobs[1].id)
    await settle()
    emu.jobs.cancel("g", jobs[2].id)  # running by now (it took a freed worker)
    await settle()
    emu.jobs.retry("g", jobs[1].id)
    await settle()
    health = emu.jobs.health("g").to_wire()
    assert health["jobs"] == {
        "completed": 1,
        "failed": 1,
        "inProgress": 2,
        "inQueue": 1,
        "retried": 1,
    }
    assert health["workers"] == {
        "idle": 0,
        "running": 2,
        "initializing": 0,
        "ready": 2,
        "throttled": 0,
        "unhealthy": 0,
    }


async def test_health_counters_are_not_reduced_when_jobs_expire(emu: Emulator) -> None:
    submit(emu, "echo")
    submit(emu, "fail")
    await settle()
    await advance(emu, 31 * 60)
    assert emu.jobs.health("echo").jobs.completed == 1
    assert emu.jobs.health("fail").jobs.failed == 1
    assert emu.jobs.jobs == {}


async def test_a_timed_out_job_counts_as_failed(emu: Emulator) -> None:
    await _final(emu, "TIMED_OUT")
    assert emu.jobs.health("sleep").jobs.failed == 1


async def test_delay_and_execution_times_come_from_the_clock(emu: Emulator) -> None:
    emu.deploy("sleep", endpoint_id="one", workers={"max": 1})
    submit(emu, "one", {"seconds": 2})
    job = submit(emu, "one", {"seconds": 3})
    await settle()
    await advance(emu, 1)
    assert status_of(emu, "one", job.id)["delayTime"] == 1000
    await advance(emu, 5)
    body = status_of(emu, "one", job.id)
    assert body["status"] == "COMPLETED"
    assert (body["delayTime"], body["executionTime"]) == (2000, 3000)
