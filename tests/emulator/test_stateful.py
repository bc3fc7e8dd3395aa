"""Random sequences of job operations against a model of
docs/behaviour.md#jobs (hypothesis, stateful).

The machine runs, runsyncs, cancels, retries and purges jobs, finishes or fails running
ones (their handler waits on a gate the machine opens), sets TTLs through ``/status``
and moves the fake clock across TTLs, retention periods and execution timeouts. A small
discrete-event model predicts every job's state; after each step the emulator must agree:

- every job the model holds answers ``/status`` with the model's state, and every job
  the model removed (TTL, retention, purge: for that reason) answers 404;
- ``/health`` counts equal the jobs' actual states and the model's counters;
- a final state never changes except by retry.

Timers that fall due at the same instant fire in the order they were scheduled, in the
emulator's ``FakeClock`` as in the model; every time here is a whole number of seconds,
so equal deadlines are exactly equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.errors import Conflict, InvalidInput, NotFound
from nbext.emulator.domain.jobs import Job
from nbext.models import JobSubmission

from .conftest import KEY, STORES, Gates

T = TypeVar("T")
WORKERS = 2
ENDPOINT_TIMEOUT_S = 40
RETENTION_S = {False: 30 * 60, True: 60}
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}
REASONS = {"ttl": "ttl elapsed", "retention": "retention period elapsed", "purge": "purged"}


@dataclass
class ModelJob:
    id: str
    sync: bool
    submitted: int
    ttl: int
    exec_timeout: int | None
    state: str = "IN_QUEUE"
    removed: str | None = None
    history: list[str] = field(default_factory=lambda: ["IN_QUEUE"])
    ttl_timer: tuple[int, int] | None = None
    exec_timer: tuple[int, int] | None = None
    retention_timer: tuple[int, int] | None = None


class Model:
    """The job rules (docs/behaviour.md#jobs) for an endpoint of ``WORKERS`` workers."""

    def __init__(self) -> None:
        self.t = 0
        self.seq = 0
        self.jobs: dict[str, ModelJob] = {}
        self.queue: list[str] = []
        self.completed = self.failed = self.retried = 0

    def _timer(self, delay: int) -> tuple[int, int]:
        self.seq += 1
        return (self.t + delay, self.seq)

    def running(self) -> list[str]:
        return [j.id for j in self.jobs.values() if j.removed is None and j.state == "IN_PROGRESS"]

    def present(self) -> list[ModelJob]:
        return [j for j in self.jobs.values() if j.removed is None]

    def _set(self, job: ModelJob, state: str) -> None:
        job.state = state
        job.history.append(state)

    def submit(self, job: ModelJob) -> None:
        self.jobs[job.id] = job
        job.ttl_timer = (job.submitted + job.ttl, self._timer(0)[1])
        self.queue.append(job.id)
        self._dispatch()

    def _dispatch(self) -> None:
        while self.queue and len(self.running()) < WORKERS:
            job = self.jobs[self.queue.pop(0)]
            self._set(job, "IN_PROGRESS")
            job.exec_timer = self._timer(job.exec_timeout or ENDPOINT_TIMEOUT_S)

    def finish(self, job: ModelJob, state: str) -> None:
        if job.state == "IN_QUEUE":
            self.queue.remove(job.id)
        job.exec_timer = None
        self._set(job, state)
        if state == "COMPLETED":
            self.completed += 1
        elif state in ("FAILED", "TIMED_OUT"):
            self.failed += 1
        job.retention_timer = self._timer(RETENTION_S[job.sync])
        self._dispatch()

    def retry(self, job: ModelJob) -> None:
        job.retention_timer = None
        self._set(job, "IN_QUEUE")
        self.retried += 1
        self.queue.append(job.id)
        self._dispatch()

    def remove(self, job: ModelJob, reason: str) -> None:
        job.removed = reason
        if job.id in self.queue:
            self.queue.remove(job.id)
        job.ttl_timer = job.exec_timer = job.retention_timer = None
        self._dispatch()

    def set_ttl(self, job: ModelJob, ttl: int) -> None:
        job.ttl = ttl
        job.ttl_timer = (job.submitted + ttl, self._timer(0)[1])

    def timers(self, kind: str) -> list[tuple[int, int]]:
        """The pending timers of one kind ("ttl", "exec", "retention"), by job age."""
        found = (getattr(job, f"{kind}_timer") for job in self.present())
        return [timer for timer in found if timer is not None]

    def advance(self, seconds: int) -> None:
        target = self.t + seconds
        while True:
            due = [
                (timer, kind, job)
                for job in self.present()
                for kind, timer in (
                    ("ttl", job.ttl_timer),
                    ("exec", job.exec_timer),
                    ("retention", job.retention_timer),
                )
                if timer is not None and timer[0] <= target
            ]
            if not due:
                break
            (when, _), kind, job = min(due, key=lambda d: d[0])
            self.t = when
            if kind == "exec":
                self.finish(job, "TIMED_OUT")
            else:
                self.remove(job, kind)
        self.t = target


class JobMachine(RuleBasedStateMachine):
    """The emulator (on its own loop and fake clock) and the model, side by side."""

    store_kind = "memory"
    jobs = Bundle("jobs")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.tmp = Path(tempfile.mkdtemp(prefix="nbext-stateful-"))
        db = self.tmp / "e.db" if self.store_kind == "sqlite" else None
        self.emu = Emulator(api_key=KEY, clock=FakeClock(), db=db, rate_limit=False)
        self.start = self.emu.clock.now()
        self.gates = Gates()
        self.model = Model()
        self.runsyncs: list[tuple[str, asyncio.Task[dict[str, Any]]]] = []
        self.seen: dict[str, str] = {}
        self.objects: dict[str, Job] = {}
        self.retried_since_check: set[str] = set()

        async def start() -> None:
            self.emu.bind()
            self.emu.deploy(
                handler=self.gates.handler,
                endpoint_id="g",
                workers={"max": WORKERS},
                execution_timeout_ms=ENDPOINT_TIMEOUT_S * 1000,
            )

        self.run(start())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the emulator's loop (where the domain lives), then let it settle."""

        async def go() -> T:
            try:
                return fn()
            finally:
                await settle()

        return self.run(go())

    def teardown(self) -> None:
        async def stop() -> None:
            for _, task in self.runsyncs:
                task.cancel()
            self.emu.jobs.reset()
            await settle()
            await self.emu.aclose()

        with contextlib.suppress(Exception):
            self.run(stop())
        self.emu.close()
        self.loop.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- rules -------------------------------------------------------------------------

    @initialize(target=jobs)
    def first_job(self) -> str:
        return self._submit(sync=False, ttl=None, exec_timeout=None, wait_ms=0)

    @rule(
        target=jobs,
        sync=st.booleans(),
        ttl=st.sampled_from([None, 10, 20, 45, 90, 600]),
        exec_timeout=st.sampled_from([None, 5, 15, 30]),
        wait_ms=st.sampled_from([1_000, 5_000, 90_000]),
    )
    def submit(self, sync: bool, ttl: int | None, exec_timeout: int | None, wait_ms: int) -> str:
        return self._submit(sync, ttl, exec_timeout, wait_ms)

    def _submit(self, sync: bool, ttl: int | None, exec_timeout: int | None, wait_ms: int) -> str:
        policy: dict[str, int] = {}
        if ttl is not None:
            policy["ttl"] = ttl * 1000
        if exec_timeout is not None:
            policy["executionTimeout"] = exec_timeout * 1000
        body = JobSubmission.model_validate(
            {"input": {"n": len(self.model.jobs)}, "policy": policy}
        )

        async def go() -> str:
            if not sync:
                return self.emu.jobs.submit("g", body, sync=False).id
            before = set(self.emu.jobs.jobs)
            task = asyncio.get_running_loop().create_task(
                self.emu.jobs.run_sync("g", body, wait_ms)
            )
            await asyncio.sleep(0)  # runs the task up to its first wait: the job is submitted
            (job_id,) = set(self.emu.jobs.jobs) - before
            self.runsyncs.append((job_id, task))
            await settle()
            return job_id

        job_id = self.run(go())
        self.objects[job_id] = self.emu.jobs.jobs[job_id]
        self.model.submit(ModelJob(job_id, sync, self.model.t, ttl or 86_400, exec_timeout))
        return job_id

    @precondition(lambda self: self.model.running())
    @rule(index=st.integers(0, WORKERS - 1), fail=st.booleans())
    def worker_finishes(self, index: int, fail: bool) -> None:
        running = self.model.running()  # in submission order: ids are random
        job = self.model.jobs[running[index % len(running)]]
        self.call(lambda: (self.gates.fail if fail else self.gates.open)(job.id))
        self.model.finish(job, "FAILED" if fail else "COMPLETED")

    @rule(job_id=jobs)
    def cancel(self, job_id: str) -> None:
        job = self.model.jobs[job_id]
        if job.removed is not None:
            with pytest.raises(NotFound):
                self.call(lambda: self.emu.jobs.cancel("g", job_id))
        elif job.state in ("IN_QUEUE", "IN_PROGRESS", "CANCELLED"):
            assert self.call(lambda: self.emu.jobs.cancel("g", job_id)).status.value == "CANCELLED"
            if job.state != "CANCELLED":
                self.model.finish(job, "CANCELLED")
        else:
            with pytest.raises(Conflict):
                self.call(lambda: self.emu.jobs.cancel("g", job_id))

    @rule(job_id=jobs)
    def retry(self, job_id: str) -> None:
        job = self.model.jobs[job_id]
        if job.removed is not None:
            with pytest.raises(NotFound):
                self.call(lambda: self.emu.jobs.retry("g", job_id))
        elif job.state in ("FAILED", "TIMED_OUT"):
            assert self.call(lambda: self.emu.jobs.retry("g", job_id)).to_wire() == {
                "id": job_id,
                "status": "IN_QUEUE",
            }
            self.model.retry(job)
            self.retried_since_check.add(job_id)
        else:
            with pytest.raises(Conflict):
                self.call(lambda: self.emu.jobs.retry("g", job_id))

    @rule()
    def purge(self) -> None:
        queued = list(self.model.queue)
        assert self.call(lambda: self.emu.jobs.purge("g")).to_wire() == {
            "removed": len(queued),
            "status": "completed",
        }
        for job_id in queued:
            self.model.remove(self.model.jobs[job_id], "purge")

    @rule(job_id=jobs, ttl=st.sampled_from([10, 30, 60, 120, 3600]))
    def status_sets_ttl(self, job_id: str, ttl: int) -> None:
        job = self.model.jobs[job_id]
        if job.removed is not None:
            with pytest.raises(NotFound):
                self.call(lambda: self.emu.jobs.status("g", job_id, ttl_ms=ttl * 1000))
        elif ttl <= self.model.t - job.submitted:
            with pytest.raises(InvalidInput, match="already elapsed"):
                self.call(lambda: self.emu.jobs.status("g", job_id, ttl_ms=ttl * 1000))
        else:
            self.call(lambda: self.emu.jobs.status("g", job_id, ttl_ms=ttl * 1000))
            self.model.set_ttl(job, ttl)

    @rule(seconds=st.sampled_from([1, 5, 10, 30, 61, 600, 1800]))
    def clock_moves(self, seconds: int) -> None:
        self.run(self.emu.advance_async(seconds))
        self.model.advance(seconds)

    @precondition(lambda self: self.model.present())
    @rule(
        kind=st.sampled_from(["ttl", "exec", "retention"]),
        index=st.integers(0, 3),
        early=st.sampled_from([0, 1]),
    )
    def clock_moves_to_a_deadline(self, kind: str, index: int, early: int) -> None:
        """Right onto (or one second short of) one job's TTL, timeout or retention end."""
        timers = [t[0] for t in self.model.timers(kind) if t[0] >= self.model.t]
        if not timers:
            return
        seconds = max(0, timers[index % len(timers)] - self.model.t - early)
        self.run(self.emu.advance_async(seconds))
        self.model.advance(seconds)

    # ---- invariants --------------------------------------------------------------------

    @invariant()
    def every_job_is_where_the_model_says(self) -> None:
        for job in self.model.jobs.values():
            emulated = self.emu.jobs.jobs.get(job.id)
            if job.removed is not None:
                assert emulated is None, f"{job.id} should be removed ({job.removed})"
                with pytest.raises(NotFound):
                    self.emu.jobs.status("g", job.id)
                continue
            assert emulated is not None, f"{job.id} was lost; the model has it {job.state}"
            assert self.emu.jobs.status("g", job.id).status.value == job.state, job.id
        assert len(self.emu.jobs.jobs) == len(self.model.present())

    @invariant()
    def every_pending_deadline_is_the_models(self) -> None:
        """TTL, timeout and retention timers fall due when the model says, checked at once.

        (Waiting for each boundary to be crossed would leave most off-by-one errors to
        chance; the FakeClock's timers say when they will fire.)
        """
        start = self.start
        for job in self.model.present():
            emulated = self.emu.jobs.jobs[job.id]
            for kind in ("ttl", "exec", "retention"):
                expected = getattr(job, f"{kind}_timer")
                timer = getattr(emulated, f"{kind}_timer")
                pending = timer is not None and not timer.cancelled
                if expected is None:
                    assert not pending, f"{job.id} has a {kind} timer the model does not"
                else:
                    assert pending, f"{job.id} lacks its {kind} timer"
                    assert timer.when - start == expected[0], f"{job.id}: {kind} deadline"

    @invariant()
    def removed_jobs_went_for_the_models_reason(self) -> None:
        # A removed Job object outlives its removal, and its ``removed`` says why it went.
        for job in self.model.jobs.values():
            if job.removed is not None:
                assert self.objects[job.id].removed == REASONS[job.removed], job.id

    @invariant()
    def health_counts_equal_the_jobs_states(self) -> None:
        health = self.emu.jobs.health("g")
        states = [j.status.value for j in self.emu.jobs.jobs.values()]
        assert health.jobs.in_queue == states.count("IN_QUEUE") == len(self.model.queue)
        assert health.jobs.in_progress == states.count("IN_PROGRESS") == len(self.model.running())
        assert health.workers.running == health.jobs.in_progress
        assert health.workers.running + health.workers.idle <= WORKERS
        assert (health.jobs.completed, health.jobs.failed, health.jobs.retried) == (
            self.model.completed,
            self.model.failed,
            self.model.retried,
        )

    @invariant()
    def final_states_change_only_by_retry(self) -> None:
        for job_id, job in self.emu.jobs.jobs.items():
            before = self.seen.get(job_id)
            now = job.status.value
            if before in FINAL and now != before:
                assert job_id in self.retried_since_check, f"{job_id}: {before} -> {now}"
            self.seen[job_id] = now
        self.retried_since_check.clear()

    @invariant()
    def finished_runsyncs_answered_a_state_their_job_had(self) -> None:
        for job_id, task in self.runsyncs:
            if not task.done():
                continue
            job = self.model.jobs[job_id]
            if task.exception() is not None:
                assert isinstance(task.exception(), NotFound) and job.removed is not None
                continue
            answer = task.result()
            assert answer["id"] == job_id and answer["status"] in job.history
            if answer["status"] not in FINAL:
                assert set(answer) == {"id", "status"}


@pytest.mark.slow
@pytest.mark.parametrize("store_kind", STORES)
def test_random_operation_sequences_agree_with_the_model(store_kind: str) -> None:
    machine = type(f"JobMachine_{store_kind}", (JobMachine,), {"store_kind": store_kind})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=100,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
