"""A wait that times out with the job still IN_QUEUE says why, from the endpoint's /health.

The emulator's teaching scenarios put the endpoint's workers in each state a real fleet
can be in; the Timeout must name the likely cause in its message and carry it, with the
health it came from, as fields a notebook can show.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from nbext.client import NotFound, Timeout
from nbext.emulator.domain.scenarios import CRASH_LINE
from nbext.models import JobStatus as S

from .conftest import Harness

pytestmark = pytest.mark.anyio

GOES_ON = "; the job goes on: wait again, or cancel it"


async def timed_out_wait(h: Harness, endpoint_id: str, input: Any = None) -> Timeout:
    job = await h.call(h.endpoint(endpoint_id).run, input or {})
    with pytest.raises(Timeout) as info:
        await h.call(job.wait, timeout=0.3)
    err = info.value
    assert err.job_id == job.id and err.last_status is S.IN_QUEUE
    assert err.cause is not None and f"; {err.cause}{GOES_ON}" in str(err)
    assert "\n" not in str(err)
    return err


@pytest.mark.parametrize(
    ("scenario", "cause", "counted"),
    [
        ("crash-loop", "no worker could start: 1 worker unhealthy", "unhealthy"),
        ("cold-start:seconds=60", "cold start: 1 worker initializing, none ready yet", None),
        ("throttled:seconds=60", "no GPU free: 1 worker throttled, waiting for a machine", None),
    ],
)
async def test_a_timeout_names_what_the_workers_are_doing(
    h: Harness, scenario: str, cause: str, counted: str | None
) -> None:
    h.emu.deploy("echo", endpoint_id="troubled", scenario=scenario)
    err = await timed_out_wait(h, "troubled")
    assert err.cause is not None and err.cause.startswith(cause)
    assert err.health is not None and err.health.jobs.in_queue == 1
    assert err.health.workers.ready == 0
    if counted:
        assert getattr(err.health.workers, counted) == 1
    if scenario == "crash-loop":  # what the crashing worker said last, from its v2 log
        assert err.cause.endswith(f"; last line: {CRASH_LINE}")
    else:
        assert "last line" not in err.cause


async def test_busy_workers_and_the_queue_ahead(h: Harness) -> None:
    h.emu.deploy("sleep", endpoint_id="one", workers={"max": 1})
    await h.call(h.endpoint("one").run, {"seconds": 100})
    await h.until(lambda: h.emu.jobs.endpoint("one").running_workers == 1, "a running job")
    await h.call(h.endpoint("one").run, {"seconds": 1})
    err = await timed_out_wait(h, "one", {"seconds": 1})
    assert err.cause == "every worker is busy: 1 worker running; 2 jobs in queue"
    await h.advance(102)  # every job ends before the emulator closes
    await h.until(lambda: not h.emu.jobs.endpoint("one").queue, "the queue to empty")


async def test_an_endpoint_whose_workers_cannot_start(h: Harness) -> None:
    h.emu.deploy("echo", endpoint_id="none", workers={"max": 0})
    err = await timed_out_wait(h, "none")
    assert err.cause is not None and err.cause.startswith("no worker is running or starting")


async def test_a_job_that_started_is_not_explained(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 30})
    await h.until(lambda: h.job(job.id).status is S.IN_PROGRESS, "the job to start")
    with pytest.raises(Timeout) as info:
        await h.call(job.wait, timeout=0.3)
    assert info.value.cause is None and info.value.health is None
    await h.advance(30)


async def test_run_sync_that_times_out_in_queue_says_why(h: Harness) -> None:
    h.emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    outcome: dict[str, Any] = {}

    async def runner() -> None:
        try:
            await h.call(h.endpoint("crash").run_sync, {}, wait=1, timeout=2)
        except Timeout as exc:
            outcome["error"] = exc

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner)
        await h.until(lambda: len(h.emu.jobs.endpoint("crash").queue) == 1, "the /runsync job")
        (job_id,) = h.emu.jobs.endpoint("crash").queue
        await h.until(lambda: h.waiters(job_id) == 1, "/runsync holding the request")
        await h.advance(1)  # /runsync's wait ends: it answers IN_QUEUE
    err = outcome["error"]
    assert err.job_id == job_id
    assert err.cause.startswith("no worker could start: 1 worker unhealthy")
    assert err.cause.endswith(f"; last line: {CRASH_LINE}")
    assert err.health.workers.unhealthy == 1


async def test_an_endpoint_diagnosed_on_demand_names_the_crash_loop_and_its_last_line(
    h: Harness,
) -> None:
    h.emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    await h.call(h.endpoint("crash").run, {})
    endpoint = h.endpoint("crash")
    await h.until(lambda: h.emu.jobs.health("crash").workers.unhealthy == 1, "a crashed worker")
    found = await h.call(endpoint.diagnose)
    assert found.health is not None and found.health.workers.unhealthy == 1
    assert found.cause.startswith("no worker could start: 1 worker unhealthy")
    assert found.cause.endswith(f"; last line: {CRASH_LINE}") and found.error is None
    assert found.tail is not None and found.tail.last_line == CRASH_LINE
    assert found.tail.worker == (await h.call(h.client.endpoints.workers, "crash"))[0].id


async def test_a_named_worker_has_its_log_read_in_any_state(h: Harness) -> None:
    h.emu.deploy("fail", endpoint_id="fails")
    job = await h.call(h.endpoint("fails").run, {"message": "no GPU today"})
    result = await h.call(job.wait, timeout=10, raise_on_failure=False)
    assert result.status is S.FAILED and result.worker_id is not None
    found = await h.call(h.endpoint("fails").diagnose, result.worker_id)
    assert found.health is not None and found.health.workers.unhealthy == 0
    assert "last line" not in found.cause
    assert found.tail is not None and found.tail.worker == result.worker_id
    assert found.tail.lines, "the worker's log, which the service keeps"


async def test_an_endpoint_that_cannot_be_read_is_said_with_what_it_raised(h: Harness) -> None:
    found = await h.call(h.endpoint("nowhere").diagnose)
    assert found.health is None and found.tail is None
    assert isinstance(found.error, NotFound)
    assert found.cause.startswith("why it waits is unknown: ")
