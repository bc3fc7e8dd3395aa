"""Workers in processes of their own that take jobs over the worker protocol
(docs/workers.md; the design: docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

from nbext.models import JobStatus

from .clock import Clock, Signal, sleep
from .endpoints import Endpoint
from .errors import DomainError, InvalidInput, NotFound
from .fleet import Body
from .job_service import JobService
from .jobs import UNSET, Job
from .json_values import unservable
from .streaming import to_chunks
from .worker_output import WorkerOutput
from .workers import Worker, WorkerState

S = JobStatus

TAKE_HOLD_S = 10.0
"""How long a job-take or job-stop is held open when there is nothing to give (why:
docs/workers.md); it also bounds how long a stopping worker waits for its last poll."""
PING_MISSED_AFTER_S = 3.5
"""A worker whose last ping is older (3.5 of the 1 s intervals asked for) is unhealthy."""


class WorkerRefused(DomainError):
    """A worker-protocol call from an unknown worker, or with a wrong key (HTTP 401)."""


class Launcher(Protocol):
    """Starts and stops the process behind a remote worker (the supervisor)."""

    def launch(self, worker: RemoteWorker) -> None: ...

    def terminate(self, worker: RemoteWorker) -> None: ...


@dataclass(eq=False)
class RemoteWorker:
    """One process running a worker script for one endpoint."""

    endpoint_id: str
    domain: Worker
    """The endpoint's worker this process embodies (scaling and billing see it)."""
    key: str = field(default_factory=lambda: "rpw_" + secrets.token_hex(16))
    jobs: dict[str, int] = field(default_factory=dict)
    """Jobs it holds: id -> the attempt it was given (a late post of a stopped one is stale)."""
    to_stop: list[str] = field(default_factory=list)
    started_at: float = 0.0
    contacted_at: float | None = None
    """When it first called the emulator (until then: initializing; pings are due after)."""
    taking: bool = False
    """It has asked for jobs with its key: it serves (a ping alone may come from the SDK's
    heartbeat process, which sends the given key whatever the SDK's own calls send)."""
    last_ping: float | None = None
    failed_check: str | None = None
    """Why the SDK's startup check failed, when it reported so (it then exits)."""
    stopping: bool = False
    restart_requested: bool = False
    """It posted ``stopPod`` (``refresh_worker``): start a fresh process after it exits."""
    wake: Signal = field(default_factory=Signal)
    port: int | None = None
    """A load-balancing worker's ``PORT`` (``balancer``), chosen as it is launched."""
    health_port: int | None = None
    """Its ``PORT_HEALTH``: its ``PORT`` unless its endpoint's ``env`` asks for another."""

    @property
    def id(self) -> str:
        return self.domain.id

    def unhealthy(self, now: float) -> bool:
        """It reported a failed startup check, or its last ping is overdue; a worker that
        has called but never pinged is overdue as long after its first call (the SDK's
        heartbeat starts before its first take), one still starting is not."""
        heard = self.last_ping if self.last_ping is not None else self.contacted_at
        overdue = heard is not None and now - heard > PING_MISSED_AFTER_S
        return self.failed_check is not None or overdue


@dataclass(eq=False)
class Pool:
    """The remote workers of one endpoint deployed from a worker script."""

    endpoint_id: str
    launcher: Launcher
    workers: dict[str, RemoteWorker] = field(default_factory=dict)
    work: Signal = field(default_factory=Signal)
    """Fired when a job is queued: wakes held takes."""
    start_failure: str | None = None
    """Why the last worker that could not start failed (it exited before it asked for a
    job, or its calls were refused), until one asks: told apart from a slow start."""


class RemoteWorkers:
    """Every pool of one emulator, the worker protocol's operations on them, and the
    body (``fleet.Body``) of their endpoints' workers."""

    pulls = True

    def __init__(self, clock: Clock, jobs: JobService) -> None:
        self.clock = clock
        self.jobs = jobs
        self.fleet = jobs.fleet
        self.pools: dict[str, Pool] = {}
        self.by_id: dict[str, RemoteWorker] = {}
        self.closed = False
        """Set by ``stop_all``: no process is started any more (the emulator is stopping)."""
        self.output = WorkerOutput(clock)
        """What the processes print: their logs (written by the supervisor)."""
        jobs.on_change.append(self._job_changed)

    # ---- pools and processes ---------------------------------------------------------

    def add_pool(self, endpoint_id: str, launcher: Launcher, body: Body | None = None) -> Pool:
        """Processes for the endpoint's workers; ``body``: what else its workers are
        (a load-balancing endpoint's ``balancer``), else they pull jobs."""
        endpoint = self.jobs.endpoint(endpoint_id)
        self.closed = False  # a server serving this emulator again: workers may start
        pool = Pool(endpoint_id, launcher)
        self.pools[endpoint_id] = pool
        self.fleet.bodies[endpoint_id] = body or self
        self.fleet.renew(endpoint)  # workers made before it had processes get them
        return pool

    def reconcile(self) -> None:
        """Drop the pools of endpoints that are gone (their workers' processes were
        stopped as the workers were removed; any left are stopped now)."""
        for pool in list(self.pools.values()):
            if pool.endpoint_id not in self.jobs.endpoints:
                for worker in list(pool.workers.values()):
                    self._terminate(pool, worker)
                del self.pools[pool.endpoint_id]

    def warm(self, endpoint_id: str) -> None:
        """Start a worker now if the endpoint has none, as a first job would: deploying
        from a notebook shows at once whether the script starts, not at the first job.
        With ``workersMin`` 0 the worker is stopped after its idle timeout, as any."""
        endpoint = self.jobs.endpoint(endpoint_id)
        if endpoint_id in self.pools and not endpoint.workers and endpoint.workers_max > 0:
            self.fleet.add(endpoint)

    def startup(self, endpoint_id: str) -> tuple[bool, str | None]:
        """Whether a worker of the endpoint is serving, and why the last one that could
        not start failed (None if none did since a worker was last served)."""
        pool = self.pools.get(endpoint_id)
        if pool is None:
            return False, None
        serving = any(w.taking and not w.stopping for w in pool.workers.values())
        return serving, pool.start_failure

    # ---- the body of the pools' workers --------------------------------------------

    def launch(self, worker: Worker, endpoint: Endpoint) -> bool:
        """A process for ``worker``: it is ready at its first call (``authenticate``)."""
        pool = self.pools.get(endpoint.id)
        if pool is not None and not self.closed:
            remote = RemoteWorker(endpoint.id, worker, started_at=self.clock.now())
            pool.workers[remote.id] = remote
            self.by_id[remote.id] = remote
            pool.launcher.launch(remote)
        return False

    def stop(self, worker: Worker, endpoint: Endpoint) -> None:
        pool = self.pools.get(endpoint.id)
        remote = pool.workers.get(worker.id) if pool is not None else None
        if pool is not None and remote is not None and not remote.stopping:
            self._terminate(pool, remote)

    def healthy(self, worker: Worker, now: float) -> bool:
        remote = self.by_id.get(worker.id)
        return remote is None or not remote.unhealthy(now)

    def _terminate(self, pool: Pool, worker: RemoteWorker) -> None:
        worker.stopping = True
        worker.wake.fire()  # its stop poll ends,
        pool.work.fire()  # and its take: a stopping worker is handed no job
        pool.launcher.terminate(worker)

    def exited(self, worker: RemoteWorker, how: str) -> None:
        """The worker's process ended (``how``: exit code or signal): its jobs fail, never
        requeued (docs/workers.md#a-worker-that-crashes); a worker still wanted starts
        again at once if it served or posted ``stopPod``, else it crashed at start."""
        pool = self.pools.get(worker.endpoint_id)
        self.by_id.pop(worker.id, None)
        if pool is not None:
            pool.workers.pop(worker.id, None)
            if not worker.taking and not worker.stopping:
                pool.start_failure = f"it exited ({how})"
        for job_id, attempt in list(worker.jobs.items()):
            job = self.jobs.jobs.get(job_id)
            if job is not None and self.jobs.scheduler.current(job, attempt):
                self.jobs.lifecycle.transition(
                    job,
                    S.FAILED,
                    error=f"worker {worker.id} exited ({how}) while running this job; "
                    "its log says why. The job was not requeued, since its work may have "
                    "been done: retry it with /retry once the worker is fixed",
                )
        worker.jobs.clear()
        endpoint = self.jobs.endpoints.get(worker.endpoint_id)
        domain = worker.domain
        if endpoint is None or domain not in endpoint.workers or self.closed:
            return
        if worker.restart_requested or (worker.taking and not worker.stopping):
            self.fleet.start(domain, endpoint)
        elif not worker.stopping:
            self.fleet.crashed(domain, endpoint)

    def start_failed(self, worker: RemoteWorker, why: str) -> None:
        """The worker, which never served, cannot serve as it runs (``why``): its
        endpoint's ``startup`` says so, and it is out of routing (unhealthy)."""
        endpoint = self.jobs.endpoints.get(worker.endpoint_id)
        if worker.taking or endpoint is None or worker.domain not in endpoint.workers:
            return
        self.pools[endpoint.id].start_failure = why
        if worker.domain.state is not WorkerState.UNHEALTHY:
            self.fleet.enter(worker.domain, endpoint, WorkerState.UNHEALTHY)

    def stop_all(self) -> None:
        """Stop every worker for good: the emulator is stopping."""
        self.closed = True
        for pool in self.pools.values():
            for worker in list(pool.workers.values()):
                self._terminate(pool, worker)

    # ---- the worker protocol ---------------------------------------------------------

    def authenticate(self, endpoint_id: str, worker_id: str, header: str | None) -> RemoteWorker:
        worker = self.by_id.get(worker_id)
        if worker is None or worker.endpoint_id != endpoint_id:
            raise WorkerRefused(
                f"no worker {worker_id!r} on endpoint {endpoint_id!r}: workers are started by "
                "the emulator (--worker ID=PATH, deploy_worker), which issues their ids and keys"
            )
        presented = (header or "").strip()
        scheme, _, rest = presented.partition(" ")
        if scheme.lower() == "bearer" and rest:
            presented = rest.strip()
        if not secrets.compare_digest(presented.encode(), worker.key.encode()):
            self.start_failed(
                worker,
                "the emulator refuses its calls: it sends another key than the one it "
                "was given (a key in ~/.runpod/config.toml takes precedence in the SDK: "
                "remove it for local tests)",
            )
            raise WorkerRefused(
                f"wrong key for worker {worker_id!r}; a worker sends the key the emulator "
                "gave it in RUNPOD_AI_API_KEY (a key in ~/.runpod/config.toml takes "
                "precedence in the SDK: remove it for local tests)"
            )
        if worker.contacted_at is None:  # ready now: its idle timeout counts from here
            worker.contacted_at = self.clock.now()
            endpoint = self.jobs.endpoints.get(endpoint_id)
            if endpoint is not None and worker.domain in endpoint.workers:
                self.fleet.ready(worker.domain, endpoint)
        return worker

    async def take(self, worker: RemoteWorker, batch: int) -> list[dict[str, Any]]:
        """Up to ``batch`` queued jobs, waiting up to the hold time for the first."""
        pool = self.pools[worker.endpoint_id]
        if not worker.taking:
            worker.taking = True
            pool.start_failure = None
        endpoint = self.jobs.endpoint(worker.endpoint_id)
        if not await pool.work.wait_for(
            self.clock, lambda: bool(endpoint.queue) or worker.stopping, TAKE_HOLD_S
        ):
            return []
        if (
            worker.stopping
            or self.by_id.get(worker.id) is not worker
            or worker.domain not in endpoint.workers  # scaled down while it waited
        ):
            return []
        taken = []
        for job in list(endpoint.queue.values())[:batch]:
            job.progress = UNSET
            # A job the endpoint's scenario fails on purpose is never seen by the worker.
            if self.jobs.scheduler.assign(job, worker.domain, endpoint):
                worker.jobs[job.id] = job.attempt
                taken.append(job.payload(webhook=True))
        if endpoint.queue:
            pool.work.fire()  # others may take the rest
        return taken

    async def stops(self, worker: RemoteWorker) -> list[str]:
        """Ids of jobs the worker must stop, waiting up to the hold time for one."""
        await worker.wake.wait_for(
            self.clock, lambda: bool(worker.to_stop) or worker.stopping, TAKE_HOLD_S
        )
        ids, worker.to_stop = worker.to_stop, []
        return ids

    def ping(self, worker: RemoteWorker, failed_check: str | None = None) -> None:
        """A heartbeat; ``failed_check``: the SDK's startup check failed (why), and the
        worker counts as unhealthy until it exits."""
        worker.last_ping = self.clock.now()
        if failed_check is not None:
            worker.failed_check = failed_check

    def _held(self, worker: RemoteWorker, job_id: str) -> Job | None:
        """The job if ``worker`` holds its current attempt; None for a stale post."""
        attempt = worker.jobs.get(job_id)
        job = self.jobs.jobs.get(job_id)
        if attempt is None or job is None:
            if job is None or job.endpoint_id != worker.endpoint_id:
                raise NotFound(f"job {job_id!r} is not held by worker {worker.id!r}")
            return None
        if not self.jobs.scheduler.current(job, attempt):
            worker.jobs.pop(job_id, None)
            return None
        return job

    async def stream(self, worker: RemoteWorker, job_id: str, body: bytes) -> None:
        """One chunk (``{"output": value}``), visible through ``/stream`` at once, or
        after the gap the slow-stream scenario puts between chunks: the post is answered
        then, and the SDK posts its next chunk after that answer."""
        data = _object(body)
        job = self._held(worker, job_id)
        endpoint = self.jobs.endpoints.get(worker.endpoint_id)
        gap = endpoint.scenario.chunk_gap() if endpoint and endpoint.scenario else 0.0
        if job is not None and gap > 0:
            await sleep(self.clock, gap)
            job = self._held(worker, job_id)  # it may have ended meanwhile
        if job is None:
            return
        value = data.get("output")
        why = unservable(value)
        if why is not None:
            raise InvalidInput(f"stream chunk cannot be sent as JSON: {why}")
        job.chunks.extend(to_chunks(value, {}, len(job.chunks)))
        job.wake(final=False)

    def done(self, worker: RemoteWorker, job_id: str, body: bytes) -> None:
        """A job-done post: progress, a result, an error; ``stopPod`` restarts the worker."""
        data = _object(body)
        job = self._held(worker, job_id)
        if data.get("stopPod") is True and not worker.stopping:
            # ``refresh_worker``: the service replaces the worker after this job; the SDK
            # itself does not exit, so it is stopped (gracefully) and started afresh.
            worker.restart_requested = True
            pool = self.pools.get(worker.endpoint_id)
            if pool is not None:
                self._terminate(pool, worker)
        if job is None:
            return
        if data.get("status") == "IN_PROGRESS":  # progress_update: the job goes on
            job.progress = data.get("output")
            self.jobs.lifecycle.changed(job, store=False)
            job.wake(final=False)
            return
        worker.jobs.pop(job_id, None)
        self.jobs.lifecycle.finish(job, data.get("output"), data.get("error"), "worker output")

    # ---- observing jobs --------------------------------------------------------------

    def _job_changed(self, job: Job) -> None:
        pool = self.pools.get(job.endpoint_id)
        if pool is None:
            return
        if job.status is S.IN_QUEUE and job.removed is None:
            pool.work.fire()
            return
        # A job left IN_PROGRESS (or was removed) without its worker posting the end:
        # tell the worker through job-stop. ``stop_execution`` freed the domain worker;
        # a worker running other jobs side by side is still busy with them.
        for worker in pool.workers.values():
            if job.id in worker.jobs and (job.status is not S.IN_PROGRESS or job.removed):
                worker.jobs.pop(job.id)
                worker.to_stop.append(job.id)
                worker.wake.fire()
            domain = worker.domain
            if worker.jobs and domain.state is WorkerState.IDLE:  # it runs the others
                held = self.jobs.jobs.get(next(iter(worker.jobs)))
                endpoint = self.jobs.endpoints.get(job.endpoint_id)
                if held is not None and endpoint is not None:
                    self.fleet.run(domain, endpoint, held)
                    held.worker = domain

    # ---- health ----------------------------------------------------------------------

    def states(self, endpoint_id: str) -> dict[str, WorkerState]:
        """The state of each of a pool's endpoint's workers, as ``/health`` counts it
        (``Fleet.state_of``: a process whose pings stopped is unhealthy), by worker id."""
        endpoint = self.jobs.endpoints.get(endpoint_id)
        if endpoint_id not in self.pools or endpoint is None:
            return {}
        return {w.id: self.fleet.state_of(w, endpoint) for w in endpoint.workers}

    def started_at(self, worker_id: str) -> float | None:
        """When the worker's present process started (None: it has none)."""
        worker = self.by_id.get(worker_id)
        return worker.started_at if worker is not None else None


def _object(body: bytes) -> dict[str, Any]:
    """A worker's post: JSON text (sent as form-encoded by the SDK), an object."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"worker post is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput('worker post must be a JSON object such as {"output": ...}')
    return data
