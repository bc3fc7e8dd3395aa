"""The job interface's operations: submit, wait, stream, cancel, retry, purge, health;
the façade over lifecycle, scheduling and persistence (docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from nbext.models import (
    RETRYABLE_STATES,
    TTL_DEFAULT_MS,
    TTL_MAX_MS,
    TTL_MIN_MS,
    AcceptedJob,
    CancelResult,
    Health,
    HealthJobs,
    HealthWorkers,
    JobResult,
    JobStatus,
    JobSubmission,
    PurgeResult,
    StreamResponse,
)

from .clock import Clock
from .endpoints import Endpoint
from .errors import Conflict, InvalidInput, NotFound
from .ids import new_id
from .images import ImageRegistry
from .jobs import Job, wire_result
from .lifecycle import Lifecycle
from .persistence import JobPersistence
from .scenarios import Scenario
from .scheduling import Scheduler
from .store_port import MemoryStore, Store
from .webhooks import WebhookDispatcher
from .workers import WorkerState as W

S = JobStatus


class JobService:
    """All endpoints and jobs of one emulator."""

    def __init__(
        self,
        clock: Clock,
        images: ImageRegistry,
        webhooks: WebhookDispatcher,
        executor: Executor,
        store: Store | None = None,
    ) -> None:
        self.clock = clock
        self.store: Store = store or MemoryStore()
        self.images = images
        self.webhooks = webhooks
        self.endpoints: dict[str, Endpoint] = {}
        self.jobs: dict[str, Job] = {}
        self.persistence = JobPersistence(self.store, clock)
        self.lifecycle = Lifecycle(clock, self.jobs, self.endpoints, self.persistence, webhooks)
        self.scheduler = Scheduler(clock, images, executor, self.endpoints, self.lifecycle)
        self.lifecycle.scheduler = self.scheduler
        self.fleet = self.scheduler.fleet
        self.on_change: list[Callable[[Job], None]] = self.lifecycle.on_change
        self.on_execution: list[Callable[[Endpoint, str, float, float], None]] = (
            self.scheduler.on_execution
        )

    # ---- endpoints -------------------------------------------------------------------

    def add_endpoint(self, endpoint: Endpoint) -> Endpoint:
        if endpoint.id in self.endpoints:
            raise InvalidInput(f"an endpoint with id {endpoint.id!r} already exists")
        endpoint.created_at = endpoint.created_at or self.clock.now()
        self.endpoints[endpoint.id] = endpoint
        self.fleet.rescale(endpoint)
        return endpoint

    def remove_endpoint(self, endpoint_id: str) -> None:
        endpoint = self.endpoint(endpoint_id)
        for job in [j for j in self.jobs.values() if j.endpoint_id == endpoint_id]:
            self.lifecycle.remove(job, "endpoint deleted")
        del self.endpoints[endpoint_id]
        for worker in list(endpoint.workers):
            self.fleet.remove(worker, endpoint)
        self.fleet.bodies.pop(endpoint_id, None)

    def update_endpoint(self, endpoint_id: str, **settings: Any) -> Endpoint:
        """Change the live endpoint's fields ``settings`` names (None leaves one as it is);
        jobs carry on, a new image or timeout applies from the next start, scaling at once."""
        endpoint = self.endpoint(endpoint_id)  # the settings were checked as they were stored
        for name, value in settings.items():
            if not hasattr(endpoint, name):
                raise TypeError(f"an endpoint has no setting {name!r}")  # a caller's typo
            if value is not None:
                setattr(endpoint, name, value)
        self.fleet.rescale(endpoint)
        return endpoint

    def set_scenario(self, endpoint_id: str, scenario: Scenario | None) -> Endpoint:
        """Give the endpoint a teaching scenario (None: back to a healthy fleet); workers
        not running a job are replaced by ones started under it, so it shows at once."""
        endpoint = self.endpoint(endpoint_id)
        if scenario is not None:
            scenario.set_at = self.clock.now()
        endpoint.scenario = scenario
        self.fleet.renew(endpoint)
        return endpoint

    def endpoint(self, endpoint_id: str) -> Endpoint:
        try:
            return self.endpoints[endpoint_id]
        except KeyError:
            raise NotFound(
                f"endpoint {endpoint_id!r} not found; deployed endpoints: "
                f"{', '.join(sorted(self.endpoints)) or 'none'}"
            ) from None

    def image_registered(self, name: str) -> None:
        """An image got a handler: endpoints running it may start their queued jobs."""
        for endpoint in list(self.endpoints.values()):
            if endpoint.image == name and endpoint.handler is None:
                self.scheduler.dispatch(endpoint)

    # ---- operations ------------------------------------------------------------------

    def submit(self, endpoint_id: str, submission: JobSubmission, *, sync: bool) -> Job:
        """Queue a job (``/run``, or the first half of ``/runsync``)."""
        policy = submission.policy
        now = self.clock.now()
        job = Job(
            id=("sync-" if sync else "") + str(uuid.uuid4()),
            endpoint_id=endpoint_id,
            input=submission.input,
            sync=sync,
            submitted_at=now,
            queued_at=now,
            ttl_ms=(policy.ttl if policy and policy.ttl else TTL_DEFAULT_MS),
            webhook=submission.webhook,
            s3_config=(
                submission.s3_config.model_dump(by_alias=True, exclude_none=True)
                if submission.s3_config
                else None
            ),
            execution_timeout_ms=policy.execution_timeout if policy else None,
            low_priority=policy.low_priority if policy else False,
        )
        return self.enqueue(job)

    def enqueue(self, job: Job) -> Job:
        """Store and queue a new job (``submit``'s, or a batch's request)."""
        endpoint = self.endpoint(job.endpoint_id)
        # Stored first: a store that fails refuses the job (StoreFailed), and nothing
        # of it is queued, so no answer ever contradicts what happened.
        self.persistence.accept(job)
        self.jobs[job.id] = job
        self.lifecycle.schedule_ttl(job)
        endpoint.queue[job.id] = job
        self.lifecycle.changed(job, store=False)
        self.scheduler.dispatch(endpoint)
        return job

    async def wait_final(self, job: Job, timeout_s: float) -> None:
        """Return when ``job`` is final or removed, or after ``timeout_s`` of the clock."""
        await job.signal.wait_for(self.clock, lambda: job.over, timeout_s, final_only=True)

    async def run_sync(
        self, endpoint_id: str, submission: JobSubmission, wait_ms: int
    ) -> dict[str, Any]:
        """``/runsync``: the result if the job ends within ``wait_ms``, else id and state."""
        job = self.submit(endpoint_id, submission, sync=True)
        await self.wait_final(job, wait_ms / 1000)
        if job.removed is not None:
            raise NotFound(f"job {job.id} was removed before it finished ({job.removed})")
        if job.status.is_final:
            return wire_result(job, self.clock.now())
        return {"id": job.id, "status": job.status.value}

    def job(self, endpoint_id: str, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or job.endpoint_id != endpoint_id:
            self.endpoint(endpoint_id)
            raise NotFound(
                f"job {job_id!r} not found on endpoint {endpoint_id!r}: unknown, purged, "
                "or removed after its TTL or retention period"
            )
        return job

    def status(self, endpoint_id: str, job_id: str, ttl_ms: int | None = None) -> JobResult:
        """``/status``, optionally setting the job's TTL (still counted from submission)."""
        return JobResult.model_validate(self.status_wire(endpoint_id, job_id, ttl_ms))

    def status_wire(
        self, endpoint_id: str, job_id: str, ttl_ms: int | None = None
    ) -> dict[str, Any]:
        """``status`` as the JSON object the HTTP route sends (no model on the hot path)."""
        job = self.job(endpoint_id, job_id)
        if ttl_ms is not None:
            self.set_ttl(job, ttl_ms)
        return wire_result(job, self.clock.now())

    def set_ttl(self, job: Job, ttl_ms: int) -> None:
        if not TTL_MIN_MS <= ttl_ms <= TTL_MAX_MS:
            raise InvalidInput(
                f"ttl must be between {TTL_MIN_MS} and {TTL_MAX_MS} ms, got {ttl_ms}"
            )
        age_ms = (self.clock.now() - job.submitted_at) * 1000
        if ttl_ms <= age_ms:
            raise InvalidInput(
                f"ttl={ttl_ms} ms has already elapsed for job {job.id} (submitted "
                f"{age_ms:.0f} ms ago; the TTL counts from submission); choose a larger ttl"
            )
        job.ttl_ms = ttl_ms
        self.lifecycle.schedule_ttl(job)
        self.lifecycle.changed(job)

    async def stream(self, endpoint_id: str, job_id: str, wait_ms: int) -> StreamResponse:
        """``/stream``: chunks not handed out before, waiting up to ``wait_ms`` for one."""
        job = self.job(endpoint_id, job_id)
        await job.signal.wait_for(
            self.clock, lambda: job.over or job.stream_cursor < len(job.chunks), wait_ms / 1000
        )
        if job.removed is not None:
            raise NotFound(f"job {job.id} was removed ({job.removed})")
        chunks = job.chunks[job.stream_cursor :]
        job.stream_cursor = len(job.chunks)
        return StreamResponse.model_validate({"status": job.status, "stream": chunks})

    def cancel(self, endpoint_id: str, job_id: str) -> CancelResult:
        job = self.job(endpoint_id, job_id)
        if job.status in (S.IN_QUEUE, S.IN_PROGRESS):
            self.lifecycle.transition(job, S.CANCELLED)
        elif job.status is not S.CANCELLED:
            raise Conflict(
                f"job {job.id} is {job.status.value} and can no longer be cancelled; "
                "only IN_QUEUE and IN_PROGRESS jobs can"
            )
        return CancelResult(id=job.id, status=S.CANCELLED)

    def retry(self, endpoint_id: str, job_id: str) -> AcceptedJob:
        job = self.job(endpoint_id, job_id)
        if job.status not in RETRYABLE_STATES:
            raise Conflict(
                f"job {job.id} is {job.status.value}; only FAILED or TIMED_OUT jobs can be retried"
            )
        self.lifecycle.transition(job, S.IN_QUEUE)
        return AcceptedJob(id=job.id, status=S.IN_QUEUE)

    def purge(self, endpoint_id: str) -> PurgeResult:
        endpoint = self.endpoint(endpoint_id)
        queued = list(endpoint.queue.values())
        for job in queued:
            self.lifecycle.remove(job, "purged")
        return PurgeResult(removed=len(queued), status="completed")

    def health(self, endpoint_id: str) -> Health:
        ep = self.endpoint(endpoint_id)
        counts = Counter(self.fleet.state_of(w, ep) for w in ep.workers)
        idle, running = counts[W.IDLE], counts[W.RUNNING]
        return Health(
            jobs=HealthJobs(
                completed=ep.completed,
                failed=ep.failed,
                in_progress=ep.in_progress,
                in_queue=len(ep.queue),
                retried=ep.retried,
            ),
            workers=HealthWorkers(
                idle=idle,
                running=running,
                initializing=counts[W.INITIALIZING],
                ready=idle + running,
                throttled=counts[W.THROTTLED],
                unhealthy=counts[W.UNHEALTHY],
            ),
        )

    def requests(self, endpoint_id: str) -> list[JobResult]:
        """The endpoint's retained jobs, newest first."""
        self.endpoint(endpoint_id)
        jobs = [j for j in self.jobs.values() if j.endpoint_id == endpoint_id]
        jobs.sort(key=lambda j: j.submitted_at, reverse=True)
        return [JobResult.model_validate(wire_result(j, self.clock.now())) for j in jobs]

    def running_workers(self, endpoint_id: str) -> int:
        endpoint = self.endpoints.get(endpoint_id)
        return endpoint.running_workers if endpoint else 0

    def restore(self, stored: list[Job] | None = None) -> int:
        """Take back the jobs a previous run stored (``stored``: read by the caller, with
        the counters); on the loop, endpoints first. A running job lost its worker, so it
        is queued again, as the service does; what outlived its TTL or retention goes."""
        if stored is None:
            self.persistence.load_counters(self.endpoints)
            stored = self.persistence.load_jobs()
        restored = 0
        for job in stored:
            endpoint = self.endpoints.get(job.endpoint_id)
            if endpoint is None or job.id in self.jobs:
                self.persistence.forget(job)
                continue
            if job.status is S.IN_PROGRESS:
                job.status, job.started_at = S.IN_QUEUE, None
                job.chunks, job.stream_cursor = [], 0
            self.jobs[job.id] = job
            self.lifecycle.schedule_ttl(job)
            if job.status.is_final:
                self.lifecycle.schedule_retention(job)
            elif job.status is S.IN_QUEUE:
                endpoint.queue[job.id] = job
            self.lifecycle.changed(job)
            restored += 1
        for endpoint in self.endpoints.values():
            self.scheduler.dispatch(endpoint)
        return restored

    # ---- administration --------------------------------------------------------------

    def reset(self) -> None:
        """Forget every job (endpoints stay, counters restart)."""
        for job in list(self.jobs.values()):
            self.lifecycle.remove(job, "emulator reset")
        for endpoint in self.endpoints.values():
            endpoint.completed = endpoint.failed = endpoint.retried = 0
            self.persistence.save_counters(endpoint)


def new_endpoint_id() -> str:
    """An id shaped like the service's: 14 lowercase letters and digits."""
    return new_id(14)
