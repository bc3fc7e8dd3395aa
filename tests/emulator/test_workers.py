"""Workers: scaling between workersMin and workersMax, idle timeout, low priority, images.

docs/behaviour.md#scaling: a queued job starts a worker when none is idle and the endpoint is below
``workersMax`` (low-priority jobs never do); a worker idle longer than ``idleTimeout``
stops unless that would leave fewer than ``workersMin``; an endpoint whose image has no
handler keeps its jobs queued until ``register_image`` binds one.
"""

from __future__ import annotations

import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle
from nbext.models import JobStatus

from .conftest import Gates, advance, status_of, submit

pytestmark = pytest.mark.anyio
S = JobStatus


def workers(emu: Emulator, endpoint_id: str) -> tuple[int, int]:
    """(idle, running) as /health reports them."""
    health = emu.jobs.health(endpoint_id).workers
    return health.idle, health.running


async def test_an_endpoint_starts_with_workers_min_idle_workers(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="warm", workers={"min": 2, "max": 4})
    assert workers(emu, "warm") == (2, 0)


async def test_an_endpoint_with_workers_min_0_starts_with_none(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="cold", workers={"min": 0, "max": 4})
    assert workers(emu, "cold") == (0, 0)


async def test_queued_jobs_scale_workers_up_to_workers_max(emu: Emulator, gates: Gates) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"min": 0, "max": 3})
    jobs = [submit(emu, "g") for _ in range(5)]
    await settle()
    assert workers(emu, "g") == (0, 3)
    assert [j.status for j in jobs] == [S.IN_PROGRESS] * 3 + [S.IN_QUEUE] * 2
    assert emu.jobs.health("g").jobs.in_queue == 2


async def test_an_idle_worker_is_reused_before_a_new_one_starts(
    emu: Emulator, gates: Gates
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"min": 1, "max": 3})
    job = submit(emu, "g")
    await settle()
    assert workers(emu, "g") == (0, 1)
    gates.open(job.id)
    await settle()
    assert workers(emu, "g") == (1, 0)
    submit(emu, "g")
    await settle()
    assert workers(emu, "g") == (0, 1)


async def test_workers_max_0_keeps_every_job_queued(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="off", workers={"min": 0, "max": 0})
    job = submit(emu, "off")
    await settle()
    assert status_of(emu, "off", job.id)["status"] == "IN_QUEUE"
    assert workers(emu, "off") == (0, 0)


async def test_a_worker_stops_after_idle_timeout(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="e", workers={"min": 0, "max": 3, "idleTimeout": 5})
    submit(emu, "e")
    await settle()
    assert workers(emu, "e") == (1, 0)
    await advance(emu, 4.999)
    assert workers(emu, "e") == (1, 0)
    await advance(emu, 0.001)
    assert workers(emu, "e") == (0, 0)


async def test_idle_timeout_never_goes_below_workers_min(emu: Emulator, gates: Gates) -> None:
    emu.deploy(
        handler=gates.handler, endpoint_id="g", workers={"min": 1, "max": 3, "idleTimeout": 5}
    )
    jobs = [submit(emu, "g") for _ in range(3)]
    await settle()
    assert workers(emu, "g") == (0, 3)
    for job in jobs:
        gates.open(job.id)
    await settle()
    assert workers(emu, "g") == (3, 0)
    await advance(emu, 60)
    assert workers(emu, "g") == (1, 0)


async def run_one(emu: Emulator, gates: Gates) -> None:
    """Run one job on the gated endpoint "g", to its end."""
    job = submit(emu, "g")
    await settle()
    gates.open(job.id)
    await settle()


async def test_a_worker_taking_a_job_before_its_idle_timeout_stays(
    emu: Emulator, gates: Gates
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"max": 1, "idleTimeout": 5})
    await run_one(emu, gates)
    await advance(emu, 4)
    second = submit(emu, "g")
    await settle()
    await advance(emu, 10)  # past the first idle deadline, while running the second job
    assert workers(emu, "g") == (0, 1)
    gates.open(second.id)
    await settle()
    await advance(emu, 5)
    assert workers(emu, "g") == (0, 0)


async def test_the_idle_timeout_counts_from_the_end_of_the_last_job(emu: Emulator) -> None:
    """A worker that ran jobs at 0 s and 3 s stops at 8 s, not at the 5 s its first
    idle period would have ended."""
    emu.deploy("echo", endpoint_id="e", workers={"min": 0, "max": 1, "idleTimeout": 5})
    submit(emu, "e")
    await settle()
    await advance(emu, 3)
    submit(emu, "e")
    await settle()
    await advance(emu, 4.999)
    assert workers(emu, "e") == (1, 0)
    await advance(emu, 0.001)
    assert workers(emu, "e") == (0, 0)


async def test_a_shorter_idle_timeout_applies_to_a_worker_that_was_running(
    emu: Emulator, gates: Gates
) -> None:
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"max": 1, "idleTimeout": 30})
    await run_one(emu, gates)
    second = submit(emu, "g")
    await settle()
    emu.jobs.update_endpoint("g", idle_timeout=2)
    await advance(emu, 10)
    assert workers(emu, "g") == (0, 1)
    gates.open(second.id)
    await settle()
    await advance(emu, 1.999)
    assert workers(emu, "g") == (1, 0)
    await advance(emu, 0.001)
    assert workers(emu, "g") == (0, 0)


async def test_a_low_priority_job_never_starts_a_worker(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="e", workers={"min": 0, "max": 3})
    job = submit(emu, "e", policy={"lowPriority": True})
    await settle()
    await advance(emu, 60)
    assert status_of(emu, "e", job.id)["status"] == "IN_QUEUE"
    assert workers(emu, "e") == (0, 0)


async def test_a_low_priority_job_runs_on_an_idle_worker(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="e", workers={"min": 1, "max": 3})
    job = submit(emu, "e", {"low": True}, policy={"lowPriority": True})
    await settle()
    assert status_of(emu, "e", job.id)["output"] == {"low": True}
    assert workers(emu, "e") == (1, 0)


async def test_low_priority_jobs_do_not_add_workers_behind_a_normal_job(
    emu: Emulator, gates: Gates
) -> None:
    """One normal job may start one worker, however many low-priority jobs queue with it."""
    emu.deploy(handler=gates.handler, endpoint_id="g", workers={"min": 0, "max": 3})
    low = [submit(emu, "g", policy={"lowPriority": True}) for _ in range(2)]
    await settle()
    assert workers(emu, "g") == (0, 0)
    normal = submit(emu, "g")
    await settle()
    assert workers(emu, "g") == (0, 1)
    assert emu.jobs.health("g").jobs.in_queue == 2
    running = [j for j in [*low, normal] if j.status is S.IN_PROGRESS]
    assert len(running) == 1


async def test_an_image_without_a_handler_keeps_jobs_queued_until_registered(
    emu: Emulator,
) -> None:
    jobs = [submit(emu, "held", {"n": n}) for n in range(3)]
    await settle()
    await advance(emu, 60)
    assert [status_of(emu, "held", j.id)["status"] for j in jobs] == ["IN_QUEUE"] * 3
    assert workers(emu, "held") == (0, 0)

    async def doubled(job: dict[str, object]) -> object:
        n = job["input"]["n"]  # type: ignore[index]
        return {"n": n * 2}

    emu.register_image("no-such-image", doubled)
    await settle()
    assert [status_of(emu, "held", j.id)["output"] for j in jobs] == [
        {"n": 0},
        {"n": 2},
        {"n": 4},
    ]


async def test_registering_an_image_again_changes_what_its_endpoints_run(
    emu: Emulator,
) -> None:
    async def first(job: dict[str, object]) -> object:
        return "first"

    async def second(job: dict[str, object]) -> object:
        return "second"

    emu.register_image("my-model:dev", first)
    emu.deploy("my-model:dev", endpoint_id="mine")
    a = submit(emu, "mine")
    await settle()
    emu.register_image("my-model:dev", second)
    b = submit(emu, "mine")
    await settle()
    assert status_of(emu, "mine", a.id)["output"] == "first"
    assert status_of(emu, "mine", b.id)["output"] == "second"
