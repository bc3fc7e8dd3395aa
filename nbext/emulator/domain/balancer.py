"""Load-balancing endpoints: which worker's own HTTP server a request goes to, and when
(the rules: docs/behaviour.md#load-balancing-endpoints). This is the endpoint's
``fleet.Body`` over worker-script processes (``remote_workers``); health polling and
forwarding are the HTTP layer's (``api/balancing``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .clock import Clock, Signal
from .endpoints import Endpoint
from .errors import DomainError, InvalidInput
from .remote_workers import RemoteWorker, RemoteWorkers
from .workers import Worker, WorkerState

W = WorkerState

WAIT_S = 120.0
"""How long a request waits for a worker before ``no workers available``."""
STRICT_WAIT_S = 300.0
"""How long a strict-affinity request waits for its busy worker (``worker_timeout``)."""
PROCESSING_S = 330.0
"""How long a worker may take over one request (5.5 minutes)."""
BODY_LIMIT = 30 * 1024 * 1024
"""Request and response bodies, each."""
SERVED_KEPT = 1000
"""Requests kept per endpoint for the listing (the newest)."""
HEALTH_PATH = "/ping"
REQUEST_COUNT_DEFAULT = 4
"""Requests in flight per worker a load-balancing endpoint scales on, unless told."""


class Refused(DomainError):
    """A request the balancer answers itself: ``status``, the service's short ``error``
    and the one-line ``message``."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error


@dataclass(eq=False)
class Lease:
    """One request on one worker, from when it was routed to when its answer ended."""

    endpoint: Endpoint
    worker: RemoteWorker
    method: str
    path: str
    queued_at: float
    started_at: float


@dataclass(eq=False)
class Balanced:
    """What the balancer keeps of one load-balancing endpoint."""

    health_path: str = HEALTH_PATH
    waiting: int = 0
    changed: Signal = field(default_factory=Signal)
    """Fired when a worker may have become free: ready, released, gone."""
    scaled_down: set[str] = field(default_factory=set)
    """Ids of workers removed by their idle timeout: ``strict-resume`` starts them again."""
    served: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=SERVED_KEPT))


class Balancer:
    """The body of every load-balancing endpoint's workers, and the routing of requests."""

    pulls = False

    def __init__(
        self, clock: Clock, remote: RemoteWorkers, request_count: Callable[[str], int]
    ) -> None:
        self.clock = clock
        self.remote = remote
        self.request_count = request_count
        """An endpoint's ``scaling.requestCount`` as its record has it now."""
        self.fleet = remote.fleet
        self.endpoints: dict[str, Balanced] = {}
        self.in_flight: dict[str, int] = {}
        """Requests each worker holds, by worker id."""
        self.busy_since: dict[str, float] = {}
        self.health_seen: dict[str, str] = {}
        """What each worker's health path last answered, in words (worker records)."""
        self.on_execution: list[Callable[[Endpoint, str, float, float], None]] = []

    def add(self, endpoint_id: str, health_path: str | None) -> None:
        self.endpoints[endpoint_id] = Balanced(health_path or HEALTH_PATH)

    # ---- the body of the workers (``fleet.Body``) ----------------------------------------

    def launch(self, worker: Worker, endpoint: Endpoint) -> bool:
        return self.remote.launch(worker, endpoint)

    def stop(self, worker: Worker, endpoint: Endpoint) -> None:
        """Its process stops; a worker that was ready when its endpoint let it go (idle
        timeout, a lower ``workers.max``) was scaled down: ``strict-resume`` may start it
        again under its id."""
        balanced = self.endpoints[endpoint.id]
        seen = self.health_seen.pop(worker.id, "")
        if endpoint.id in self.remote.jobs.endpoints and seen.endswith("ready"):
            balanced.scaled_down.add(worker.id)
        balanced.changed.fire()
        self.remote.stop(worker, endpoint)

    def healthy(self, worker: Worker, now: float) -> bool:
        return True  # an unhealthy answer moves it to UNHEALTHY (``health``)

    # ---- what the prober saw ---------------------------------------------------------------

    def health(self, remote: RemoteWorker, status: int | None, path: str) -> None:
        """The worker's health path answered ``status`` (None: nothing listens yet)."""
        endpoint = self.remote.jobs.endpoints.get(remote.endpoint_id)
        worker = remote.domain
        if endpoint is None or worker not in endpoint.workers or remote.stopping:
            return
        word = {204: "initializing", 200: "ready"}.get(status or 0, "unhealthy, out of routing")
        seen = f"GET {path} answered {status}: {word}"
        if status is None:
            port = "PORT" if remote.health_port == remote.port else "PORT_HEALTH"
            seen = f"nothing listens on {port} {remote.health_port} yet (GET {path} refused)"
        if self.health_seen.get(worker.id) != seen:
            self.health_seen[worker.id] = seen
            self.remote.output.write(endpoint.id, worker.id, f"--- health: {seen}", "system")
        if status == 200:
            remote.taking = True  # it served: an exit now restarts it at once
            self.remote.pools[endpoint.id].start_failure = None
            if not worker.ready:
                self.fleet.ready(worker, endpoint)
                self.endpoints[endpoint.id].changed.fire()
        elif status is None or status == 204:
            if worker.ready and not self.in_flight.get(worker.id):
                self.fleet.enter(worker, endpoint, W.INITIALIZING)
        elif not remote.taking:  # never served: a deploy waiting on it fails now
            why = f"GET {path} answered {status}, not 200 (ready) or 204 (starting)"
            self.remote.start_failed(remote, f"its health path {why}")
        elif worker.state is not W.UNHEALTHY and not self.in_flight.get(worker.id):
            self.fleet.enter(worker, endpoint, W.UNHEALTHY)

    # ---- routing -------------------------------------------------------------------------

    async def acquire(self, endpoint_id: str, method: str, path: str, affinity: str) -> Lease:
        """A lease on a worker for one request, waiting for one as the rules say."""
        endpoint = self.remote.jobs.endpoint(endpoint_id)
        balanced = self.endpoints[endpoint_id]
        mode, wanted = _affinity(affinity)
        queued_at = self.clock.now()
        deadline = queued_at + (STRICT_WAIT_S if mode else WAIT_S)
        balanced.waiting += 1
        try:
            while (remote := self._pick(endpoint, balanced, mode, wanted)) is None:
                self._scale(endpoint, balanced)
                left = deadline - self.clock.now()
                if left <= 0:
                    raise self._timed_out(endpoint, mode, wanted)
                await balanced.changed.wait(self.clock, left)
        finally:
            balanced.waiting -= 1
        if endpoint.scenario and (error := endpoint.scenario.job_error()) is not None:
            raise Refused(500, "flaky", error)
        worker = remote.domain
        held = self.in_flight.get(worker.id, 0)
        self.in_flight[worker.id] = held + 1
        if not held:
            self.busy_since[worker.id] = self.clock.now()
            self.fleet.enter(worker, endpoint, W.RUNNING)
        return Lease(endpoint, remote, method, path, queued_at, self.clock.now())

    def release(
        self, lease: Lease, status: int | None, error: str | None = None, *, lost: bool = False
    ) -> None:
        """The request's answer ended (``status`` None: it failed on the way; ``lost``:
        the worker dropped the connection, so it is out of routing until its health
        path answers 200 again or its exit is seen)."""
        worker = lease.worker.domain
        endpoint = lease.endpoint
        now = self.clock.now()
        held = self.in_flight.get(worker.id, 1) - 1
        if held > 0:
            self.in_flight[worker.id] = held
        else:
            self.in_flight.pop(worker.id, None)
            since = self.busy_since.pop(worker.id, lease.started_at)
            for observer in self.on_execution:
                observer(endpoint, worker.id, since, now)
        if lost and worker.state is not W.GONE:
            self.health_seen[worker.id] = "the connection to it was lost"
            self.fleet.enter(worker, endpoint, W.UNHEALTHY)
        elif held <= 0 and worker.state is W.RUNNING:
            self.fleet.release(worker, endpoint)
        balanced = self.endpoints[endpoint.id]
        balanced.served.appendleft(
            {
                "method": lease.method,
                "path": lease.path,
                "status": status,
                "error": error,
                "workerId": worker.id,
                "delayTime": round((lease.started_at - lease.queued_at) * 1000),
                "executionTime": round((now - lease.started_at) * 1000),
                "startedAt": round(lease.started_at * 1000),  # epoch ms, as batches
            }
        )
        balanced.changed.fire()

    def _pick(
        self, endpoint: Endpoint, balanced: Balanced, mode: str, wanted: str
    ) -> RemoteWorker | None:
        """The ready worker with the fewest requests below its share (the one named by
        affinity when it may be had), None to wait; strict affinity to a worker that is
        gone is refused."""
        share = max(1, self.request_count(endpoint.id))
        ready = [
            r
            for w in endpoint.workers
            if w.ready
            and (r := self.remote.by_id.get(w.id)) is not None
            and not r.stopping
            and self.in_flight.get(w.id, 0) < share
        ]
        if wanted:
            if named := [r for r in ready if r.id == wanted]:
                return named[0]
            if mode and not any(w.id == wanted for w in endpoint.workers):
                if mode == "strict-resume" and wanted in balanced.scaled_down:
                    if len(endpoint.workers) < endpoint.workers_max:
                        balanced.scaled_down.discard(wanted)
                        worker = Worker(id=wanted, since=self.clock.now())
                        endpoint.workers.append(worker)
                        self.fleet.start(worker, endpoint)
                    return None
                raise Refused(
                    404,
                    "affinity_worker_gone",
                    f"worker {wanted} of endpoint {endpoint.id} is gone; send the request "
                    "without strict affinity to reach another worker",
                )
            if mode:
                return None
        return min(ready, key=lambda r: self.in_flight.get(r.id, 0)) if ready else None

    def _scale(self, endpoint: Endpoint, balanced: Balanced) -> None:
        """Add workers while the requests in flight and waiting exceed what the workers
        there take at ``requestCount`` each, up to ``workers.max``."""
        demand = sum(self.in_flight.get(w.id, 0) for w in endpoint.workers) + balanced.waiting
        share = max(1, self.request_count(endpoint.id))
        wanted = min(endpoint.workers_max, math.ceil(demand / share))
        while len(endpoint.workers) < wanted:
            self.fleet.add(endpoint)

    def _timed_out(self, endpoint: Endpoint, mode: str, wanted: str) -> Refused:
        """The wait's end, saying what the workers were doing (their states, and what a
        health path last answered): a script stuck loading is told from one not listening."""
        if mode:
            why = f"timed out waiting for worker {wanted}: busy for {STRICT_WAIT_S:g} s"
            return Refused(400, "worker_timeout", why)
        seen = [f"{w.id} {w.state}" for w in endpoint.workers] or ["no worker started"]
        seen += [self.health_seen[w.id] for w in endpoint.workers if w.id in self.health_seen][:1]
        why = f"no worker of endpoint {endpoint.id} was ready within {WAIT_S:g} s: "
        return Refused(503, "no workers available", why + "; ".join(seen))


def _affinity(header: str) -> tuple[str, str]:
    """``X-Runpod-Worker-Id``: ("", id) a preference, ("strict", id), ("strict-resume",
    id); ("", "") none."""
    words = header.split()
    if len(words) == 2 and words[0].lower() in ("strict", "strict-resume"):
        return words[0].lower(), words[1]
    if len(words) <= 1:
        return "", words[0] if words else ""
    raise InvalidInput(
        f"X-Runpod-Worker-Id {header!r} is not '<worker id>', 'strict <worker id>' or "
        "'strict-resume <worker id>'"
    )
