"""A worker's life: its state table (``TABLE``, at the end) and the events that move a
worker through it; ``Fleet.enter`` is the one place a state changes
(docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .clock import Clock
from .endpoints import Endpoint
from .jobs import IllegalTransition, Job
from .workers import Worker, WorkerState, backoff

W = WorkerState


class Body(Protocol):
    """What the workers of an endpoint are made of, beyond their place in the table."""

    pulls: bool
    """Its workers take jobs themselves (processes); else the scheduler hands them out."""

    def launch(self, worker: Worker, endpoint: Endpoint) -> bool:
        """Start what runs ``worker``; True if it is ready at once, else it tells the fleet."""
        ...

    def stop(self, worker: Worker, endpoint: Endpoint) -> None: ...

    def healthy(self, worker: Worker, now: float) -> bool:
        """Whether a ready worker is well (a process whose pings stopped is not)."""
        ...


class InProcess:
    """A handler run in the emulator: ready as it starts, nothing to stop."""

    pulls = False

    def launch(self, worker: Worker, endpoint: Endpoint) -> bool:
        return True

    def stop(self, worker: Worker, endpoint: Endpoint) -> None:
        pass

    def healthy(self, worker: Worker, now: float) -> bool:
        return True


IN_PROCESS = InProcess()


class Fleet:
    """The workers of every endpoint of one emulator, and their state changes."""

    def __init__(self, clock: Clock, dispatch: Callable[[Endpoint], None]) -> None:
        self.clock = clock
        self.dispatch = dispatch
        """Hands queued jobs to workers (the scheduler's)."""
        self.bodies: dict[str, Body] = {}
        """The endpoints whose workers are not handlers run in the emulator."""

    def body(self, endpoint: Endpoint) -> Body:
        return self.bodies.get(endpoint.id, IN_PROCESS)

    def enter(
        self, worker: Worker, endpoint: Endpoint, state: WorkerState, after: float | None = None
    ) -> None:
        """Move ``worker`` to ``state``, its timer to run out ``after`` seconds from now
        (None: it waits for an event). Entering its own state again re-arms the timer."""
        if state is not worker.state and state not in TABLE[worker.state][0]:
            raise IllegalTransition(f"worker {worker.state} -> {state} is not in the table")
        if worker.timer is not None:
            worker.timer.cancel()
            worker.timer = None
        if state is not worker.state:
            worker.state, worker.since = state, self.clock.now()
        then = TABLE[state][1]
        if after is not None and then is not None:
            worker.timer = self.clock.call_later(after, then, self, worker, endpoint)

    # ---- the events of a worker's life ------------------------------------------------

    def add(self, endpoint: Endpoint) -> Worker:
        worker = Worker(since=self.clock.now())
        endpoint.workers.append(worker)
        self.start(worker, endpoint)
        return worker

    def start(self, worker: Worker, endpoint: Endpoint) -> None:
        """Start ``worker`` (again): held where the scenario says, else booted."""
        now = worker.started_at = self.clock.now()
        hold = endpoint.scenario.hold(worker, now) if endpoint.scenario else None
        if hold is None:
            self.boot(worker, endpoint)
        else:
            worker.last_line = hold.line or worker.last_line
            self.enter(worker, endpoint, hold.state, hold.seconds)

    def boot(self, worker: Worker, endpoint: Endpoint) -> None:
        """Start its body; until it is ready, a worker that crashed before is unhealthy
        rather than initializing: it is not warming up, it keeps failing."""
        if self.body(endpoint).launch(worker, endpoint):
            self.ready(worker, endpoint)
        else:
            self.enter(worker, endpoint, W.UNHEALTHY if worker.restarts else W.INITIALIZING)

    def ready(self, worker: Worker, endpoint: Endpoint) -> None:
        if worker.state is not W.GONE:
            worker.restarts = 0
            self.enter(worker, endpoint, W.IDLE, endpoint.idle_timeout)
            self.dispatch(endpoint)

    def run(self, worker: Worker, endpoint: Endpoint, job: Job) -> None:
        worker.job = job
        self.enter(worker, endpoint, W.RUNNING)

    def release(self, worker: Worker, endpoint: Endpoint) -> None:
        """Its job ended: IDLE, or removed if the endpoint scaled down while it ran (the
        job's transition dispatches the queue right after)."""
        worker.job = None
        if worker.state is W.GONE:
            return
        if len(endpoint.workers) > endpoint.workers_max:
            self.remove(worker, endpoint, dispatch=False)
        else:
            self.enter(worker, endpoint, W.IDLE, endpoint.idle_timeout)

    def crashed(self, worker: Worker, endpoint: Endpoint) -> None:
        """Its body died before it served: restarted after a backoff that grows."""
        self.enter(worker, endpoint, W.UNHEALTHY, backoff(worker.restarts))

    def remove(self, worker: Worker, endpoint: Endpoint, *, dispatch: bool = True) -> None:
        if worker.state is not W.GONE:
            self.enter(worker, endpoint, W.GONE)
            endpoint.workers.remove(worker)
            self.body(endpoint).stop(worker, endpoint)
            if dispatch:
                self.dispatch(endpoint)

    # ---- what the timers call (``TABLE``) ------------------------------------------------

    def restart(self, worker: Worker, endpoint: Endpoint) -> None:
        """Start a crashed worker again while a job that may start one waits, or
        ``workersMin`` keeps it; else remove it (the service stops scaling up for an
        empty queue)."""
        worker.restarts += 1
        waiting = any(not job.low_priority for job in endpoint.queue.values())
        if waiting or len(endpoint.workers) <= endpoint.workers_min:
            self.start(worker, endpoint)
        else:
            self.remove(worker, endpoint)

    def retire(self, worker: Worker, endpoint: Endpoint) -> None:
        """The idle timeout ran out: removed above ``workersMin``, else it stays idle
        untimed until the settings change (``rescale``)."""
        if len(endpoint.workers) > endpoint.workers_min:
            self.remove(worker, endpoint)

    # ---- the endpoint changed ----------------------------------------------------------

    def renew(self, endpoint: Endpoint) -> None:
        """Replace each worker not running a job by a new one, started as the endpoint now
        says (a scenario set or ended, a new body); running jobs carry on."""
        stale = [w for w in endpoint.workers if not w.running]
        for worker in stale:
            self.remove(worker, endpoint, dispatch=False)
        for _ in stale:
            self.add(endpoint)
        self.dispatch(endpoint)

    def rescale(self, endpoint: Endpoint) -> None:
        """Follow its scaling settings: idle workers above ``workersMax`` stop at once (busy
        ones as their job ends), workers are added up to ``workersMin``, and each idle
        worker's timeout counts from when it became idle."""
        for worker in [w for w in endpoint.workers if not w.running]:
            if len(endpoint.workers) <= endpoint.workers_max:
                break
            self.remove(worker, endpoint, dispatch=False)
        while len(endpoint.workers) < endpoint.workers_min:
            self.add(endpoint)
        for worker in endpoint.workers:
            if worker.state is W.IDLE:
                left = worker.since + endpoint.idle_timeout - self.clock.now()
                self.enter(worker, endpoint, W.IDLE, max(0.0, left))
        self.dispatch(endpoint)

    def state_of(self, worker: Worker, endpoint: Endpoint) -> WorkerState:
        """Its state as ``/health`` counts it: a ready worker whose body is not well
        counts as unhealthy."""
        if worker.ready and not self.body(endpoint).healthy(worker, self.clock.now()):
            return W.UNHEALTHY
        return worker.state


_STARTS = frozenset({W.THROTTLED, W.INITIALIZING, W.UNHEALTHY, W.IDLE, W.GONE})
"""Where a start lands (held by the scenario, booting, ready at once), or removed."""

TABLE: dict[WorkerState, tuple[frozenset[WorkerState], Callable[..., None] | None]] = {
    # state: (the states it may go to, what its timer does when it runs out)
    # New, or in a cold start (the scenario's: timed); untimed, a process not yet heard from.
    W.INITIALIZING: (_STARTS, Fleet.boot),
    # No GPU free (the scenario's): starts again when it ends.
    W.THROTTLED: (_STARTS, Fleet.start),
    # Crashed at start (timed: restarted after a backoff, if still wanted); untimed, a
    # restarted process not yet heard from, or one whose calls are refused.
    W.UNHEALTHY: (_STARTS, Fleet.restart),
    # Ready without a job: removed after the idle timeout, unless workersMin keeps it.
    W.IDLE: (frozenset({W.RUNNING, W.INITIALIZING, W.UNHEALTHY, W.GONE}), Fleet.retire),
    # Ready with a job (a process may hold several); back to IDLE when it ends.
    W.RUNNING: (frozenset({W.IDLE, W.INITIALIZING, W.UNHEALTHY, W.GONE}), None),
    W.GONE: (frozenset(), None),
}
