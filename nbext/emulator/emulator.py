"""``Emulator``: one local service instance, usable from the kernel's thread: a call from
another thread (``deploy``, ``advance``) is handed to the domain's one asyncio loop and
waited for, so the domain never sees two threads at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from nbext.models import (
    EXECUTION_TIMEOUT_DEFAULT_MS,
    EXECUTION_TIMEOUT_MAX_MS,
    EXECUTION_TIMEOUT_MIN_MS,
)

from .domain import scenarios
from .domain.balancer import REQUEST_COUNT_DEFAULT, Balancer
from .domain.batches import Batches
from .domain.clock import Clock, FakeClock, RealClock
from .domain.endpoints import Endpoint
from .domain.errors import DomainError
from .domain.handler_threads import HandlerThreads
from .domain.handlers import Handler
from .domain.images import DEMOS, ImageRegistry
from .domain.job_service import JobService, new_endpoint_id
from .domain.jobs import Job
from .domain.management.facade import Management
from .domain.ratelimit import RateLimiter
from .domain.remote_workers import RemoteWorkers
from .domain.store_port import CorruptRecord, MemoryStore, Store
from .domain.webhooks import CONCURRENCY as WEBHOOK_CONCURRENCY
from .domain.webhooks import WebhookDispatcher
from .sqlite_store import SQLiteStore
from .webhook_sender import WebhookSender, guard_webhook
from .workers.kernel_launcher import KernelLauncher
from .workers.supervisor import Supervisor, WorkerScript

T = TypeVar("T")
ENDPOINT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
EndpointType = Literal["QUEUE", "LOAD_BALANCER"]
WORKERS_DEFAULT: dict[str, float] = {"min": 0, "max": 3, "idleTimeout": 5.0}
"""REST v2's ``workers`` with the service console's defaults: 0 to 3, 5 s idle."""


def handler_image(endpoint_id: str) -> str:
    """The image name ``deploy(handler=...)`` binds a Python handler to."""
    return f"python/{endpoint_id}"


def generate_api_key() -> str:
    """A key shaped like the service's (``rpa_`` and 40 characters)."""
    return "rpa_" + secrets.token_hex(20).upper()


def mask_key(key: str) -> str:
    """``rpa_…3F2C``: enough to tell keys apart, never enough to use one."""
    if len(key) <= 8:
        return "…" + key[-2:]
    return f"{key[:4]}…{key[-4:]}"


def _scaling(given: Mapping[str, float] | None) -> dict[str, Any]:
    """v2's ``workers`` as the record's fields, the defaults filling in what is not given."""
    if not isinstance(given, Mapping | None):
        raise ValueError(f'workers is {{"min": N, "max": N, "idleTimeout": S}}, got {given!r}')
    if unknown := sorted(set(given or {}) - set(WORKERS_DEFAULT)):
        raise ValueError(f"workers has no {unknown[0]!r}: give min, max and idleTimeout")
    out = {**WORKERS_DEFAULT, **(given or {})}
    for key, value in out.items():
        whole = key != "idleTimeout"
        number = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        if not number or (whole and value != int(value)):
            kind = "a whole number" if whole else "seconds"
            raise ValueError(f"workers.{key} must be {kind} >= 0, got {value!r}")
    return {
        "workers_min": int(out["min"]),
        "workers_max": int(out["max"]),
        "idle_timeout": float(out["idleTimeout"]),
    }


def _check_execution_timeout(ms: int) -> None:
    """The service's range for a job's executionTimeout; outside it a job would time out
    at once (<= 0) or fall back to the default without saying so (0)."""
    low, high = EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS
    if isinstance(ms, bool) or not low <= ms <= high:
        raise ValueError(f"execution_timeout_ms must be between {low} and {high} ms, got {ms!r}")


class Emulator:
    """The local service: images, endpoints, jobs, clock, rate limits, webhooks."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        clock: Clock | None = None,
        rate_limit: bool = True,
        requests_per_worker: int = 50,
        webhook_retry_delay: float = 10.0,
        webhook_concurrency: int = WEBHOOK_CONCURRENCY,
        webhook_guard: bool = False,
        demo_images: bool = True,
        handler_threads: int = 64,
        db: str | Path | None = None,
        store: Store | None = None,
    ) -> None:
        if db is not None and store is not None:
            raise ValueError("give db= (a SQLite file) or store=, not both")
        self.store: Store = store or (SQLiteStore(db) if db is not None else MemoryStore())
        with self._reading_store(db):
            self.api_key = api_key or self._stored_key()
            """The key clients must send; shown to the user once when the emulator starts."""
        self.clock: Clock = clock or RealClock()
        self.images = ImageRegistry(with_demos=demo_images)
        self.rate_limiter = RateLimiter(
            self.clock, enabled=rate_limit, requests_per_worker=requests_per_worker
        )
        self._webhook_sender = WebhookSender(webhook_concurrency)
        self.webhooks = WebhookDispatcher(
            self.clock,
            self._send_webhook,
            retry_delay=webhook_retry_delay,
            concurrency=webhook_concurrency,
        )
        self.webhook_guard = webhook_guard
        """Refuse webhooks to link-local and cloud metadata addresses (off by default:
        a local emulator may well be pointed at anything on purpose)."""
        self.executor = HandlerThreads(handler_threads)
        self.jobs = JobService(
            self.clock, self.images, self.webhooks, self.executor, store=self.store
        )
        self.management = Management(self.clock, self.store, self.jobs)
        self.batches = Batches(self.clock, self.jobs, self.endpoint_type)
        with self._reading_store(db):
            # Endpoints come back now, so the jobs bind() restores find them; the jobs
            # are read now too, so a damaged record is reported before anything starts.
            self.management.restore()
            self.jobs.persistence.load_counters(self.jobs.endpoints)
            self._stored_jobs: list[Job] | None = self.jobs.persistence.load_jobs()
            self.batches.load()
        self.images.listeners.append(
            lambda name: self.call_on_loop(lambda: self.jobs.image_registered(name))
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self.remote_workers = RemoteWorkers(self.clock, self.jobs)
        """Workers that are processes running worker scripts (``deploy_worker``)."""
        self.balancer = Balancer(self.clock, self.remote_workers, self._request_count)
        self.balancer.on_execution = self.jobs.on_execution  # billed and logged as jobs are
        self.serving_at: str | None = None
        """The server's base URL once one serves this emulator (worker scripts call it)."""
        self._supervisor: Supervisor | None = None
        self.about: dict[str, Any] = {}
        """What the user's service says of itself (``user_service``): empty elsewhere."""
        self.joined_kernels: set[int] = set()
        """Process ids of the kernels that joined this emulator (``%runpod local status``)."""
        self.on_stop: Callable[[], None] | None = None
        """Stops the process serving this emulator, when it is the user's service."""
        self.last_call = time.monotonic()
        """When a client last called (the load-balancing middleware notes each call but
        the worker protocol's): the user's service stops after an idle period."""
        self.kernels = KernelLauncher(self.remote_workers)
        self._made: set[str] = set()
        """Endpoints ``deploy`` made: deploying one again is refused, another is taken back."""

    def __repr__(self) -> str:
        return (
            f"Emulator(api_key={mask_key(self.api_key)!r}, clock={self.clock!r}, "
            f"endpoints={sorted(self.jobs.endpoints)!r})"
        )

    @contextlib.contextmanager
    def _reading_store(self, db: str | Path | None) -> Iterator[None]:
        """A damaged record names its file (and how to recover); the store is let go."""
        try:
            yield
        except CorruptRecord as exc:
            self.store.close()
            raise exc.at(str(db) if db is not None else repr(self.store)) from None

    def _stored_key(self) -> str:
        """A generated key, kept in the store so a restart on the same file keeps it."""
        record = self.store.get("settings", "api_key")
        if record is None:
            record = {"value": generate_api_key()}
            self.store.put("settings", "api_key", record)
        return str(record["value"])

    def endpoint_type(self, endpoint_id: str) -> str:
        """The endpoint record's ``type`` (QUEUE or LOAD_BALANCER); QUEUE without a record."""
        record = self.management.endpoints.book.get(endpoint_id)
        return record.type if record is not None else "QUEUE"

    def check_key(self, presented: str) -> bool:
        """Constant-time comparison of a presented key with the emulator's."""
        return secrets.compare_digest(presented.encode(), self.api_key.encode())

    # ---- the loop --------------------------------------------------------------------

    def bind(self) -> None:
        """Adopt the running loop as the emulator's (called by the server on start)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            # Connections belong to a loop: a new loop gets new pools.
            self._webhook_sender = WebhookSender(self.webhooks.concurrency)
        if self._stored_jobs is not None:
            # Timers of restored jobs need the loop, so stored jobs come back here.
            self.jobs.restore(self._stored_jobs)
            self._stored_jobs = None
            self.batches.restore()

    def call_on_loop(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the emulator's loop and return its result, from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            return fn()
        with contextlib.suppress(RuntimeError):  # no loop runs in this thread
            if asyncio.get_running_loop() is loop:
                return fn()

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout=30)

    def _change(self, fn: Callable[[], object]) -> None:
        """``fn`` on the loop; a domain refusal reaches the notebook as a ValueError."""
        try:
            self.call_on_loop(fn)
        except DomainError as exc:
            raise ValueError(exc.message) from None

    # ---- images and endpoints --------------------------------------------------------

    def register_image(self, name: str, handler: Handler) -> None:
        """Bind an image name to a Python handler (sync, async, or a generator)."""
        self.images.register(name, handler)

    def deploy(
        self,
        image: str | None = None,
        *,
        handler: Handler | None = None,
        endpoint_id: str | None = None,
        name: str | None = None,
        type: EndpointType | None = None,
        workers: Mapping[str, float] | None = None,
        execution_timeout_ms: int = EXECUTION_TIMEOUT_DEFAULT_MS,
        aggregate_stream: bool = True,
        scenario: str | None = None,
    ) -> str:
        """Create an endpoint running ``image`` or ``handler`` (with REST v2's ``type`` and
        ``workers``, ``WORKERS_DEFAULT``); returns its id. An endpoint of that id this
        emulator did not make (kept by its database, made through REST) is taken back: it
        keeps its queue and settings and runs ``image`` or ``handler``."""
        if (image is None) == (handler is None):
            raise ValueError("deploy needs exactly one of image= or handler=")
        if handler is not None and not callable(handler):
            raise TypeError("handler must be callable: handler(job) -> output")
        demo = DEMOS.get(image or "")
        kind = type or (demo.type if demo is not None else "QUEUE")
        if kind not in ("QUEUE", "LOAD_BALANCER"):
            raise ValueError(f"type is QUEUE or LOAD_BALANCER, got {kind!r}")
        if kind == "LOAD_BALANCER" and handler is not None:
            raise ValueError("a load-balancing endpoint runs a server, not a handler")
        scaling = _scaling(workers)
        _check_execution_timeout(execution_timeout_ms)
        if endpoint_id is not None and not ENDPOINT_ID.match(endpoint_id):
            raise ValueError(
                f"endpoint id {endpoint_id!r} must be 1-64 letters, digits, '_', '.' or '-'"
            )
        if endpoint_id in self.jobs.endpoints and endpoint_id not in self._made:
            return self._take_back(endpoint_id, image, handler)
        name = name or endpoint_id or image or str(getattr(handler, "__name__", "endpoint"))
        endpoint_id = endpoint_id or new_endpoint_id()
        if endpoint_id in self.jobs.endpoints:
            raise ValueError(f"an endpoint with id {endpoint_id!r} already exists")
        endpoint = Endpoint(
            id=endpoint_id,
            name=name,
            image=image or handler_image(endpoint_id),
            **scaling,
            execution_timeout_ms=execution_timeout_ms,
            aggregate_stream=aggregate_stream,
        )
        if scenario is not None:
            endpoint.scenario = scenarios.parse(scenario, self.clock.now())
        if handler is not None:
            self.images.register(handler_image(endpoint_id), handler)
        per_worker = REQUEST_COUNT_DEFAULT if kind == "LOAD_BALANCER" else None
        self._change(lambda: self.management.endpoints.deploy(endpoint, per_worker))
        self._made.add(endpoint_id)
        self.serve_demo_server(endpoint_id)
        return endpoint_id

    def _take_back(self, endpoint_id: str, image: str | None, handler: Handler | None) -> str:
        existing = self.jobs.endpoints[endpoint_id]
        if handler is not None:
            self.register_image(existing.image or handler_image(endpoint_id), handler)
        elif image is not None and image != existing.image:
            self._change(lambda: self.management.endpoints.set_image(endpoint_id, image))
        self.serve_demo_server(endpoint_id)
        return endpoint_id

    def set_scenario(self, endpoint_id: str, scenario: str | None) -> str:
        """Give an endpoint a teaching scenario: ``NAME`` or ``NAME:key=value,...`` (see
        ``domain/scenarios.py``), or None to end it; returns how it is described. It acts
        on every kind of worker: handlers run in the emulator and worker scripts alike.
        """
        made = None if scenario is None else scenarios.parse(scenario, self.clock.now())
        self._change(lambda: self.jobs.set_scenario(endpoint_id, made))
        return "none" if made is None else made.describe()

    def deploy_worker(
        self,
        path: str | Path,
        *,
        endpoint_id: str | None = None,
        python: str | None = None,
        name: str | None = None,
        type: EndpointType = "QUEUE",
        workers: Mapping[str, float] | None = None,
        execution_timeout_ms: int = EXECUTION_TIMEOUT_DEFAULT_MS,
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> str:
        """``deploy`` with a worker script: an endpoint whose workers are processes running
        the script at ``path`` unmodified; returns its id (docs/workers.md). A queue
        endpoint's workers call the emulator, so it needs a running ``EmulatorServer`` and
        the real clock; a load-balancing one's script is an HTTP server on ``PORT``. ``python``
        is its interpreter, ``env`` and ``args`` its environment and launch arguments."""
        load_balancer = type == "LOAD_BALANCER"
        script_path = Path(path).expanduser().resolve()
        if not script_path.is_file():
            raise ValueError(f"worker script {path} does not exist")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"args must be a list of strings, got {args!r}")
        interpreter = python or sys.executable
        if python is not None and shutil.which(python) is None and not Path(python).is_file():
            raise ValueError(f"python interpreter {python!r} not found")
        if isinstance(self.clock, FakeClock) and not load_balancer:
            raise ValueError(
                "worker scripts run in real time (their polls, pings and cold starts): "
                "deploy them on an emulator with the real clock"
            )
        base_url = self.serving_at or ""
        if not base_url and not load_balancer:
            raise RuntimeError(
                "worker scripts call the emulator over HTTP: start an EmulatorServer for "
                "this emulator before deploy_worker"
            )
        endpoint_id = endpoint_id or new_endpoint_id()
        existing = self.jobs.endpoints.get(endpoint_id)
        if existing is not None and (
            endpoint_id in self.remote_workers.pools
            or existing.handler is not None
            or not (existing.image or "").startswith("worker/")
        ):  # only an endpoint a worker script served before a restart (--db) is taken back
            raise ValueError(f"an endpoint with id {endpoint_id!r} already exists")
        if existing is None:
            self.deploy(
                f"worker/{script_path.name}",
                endpoint_id=endpoint_id,
                name=name or script_path.stem,
                type=type,
                workers=workers,
                execution_timeout_ms=execution_timeout_ms,
            )
        variables = tuple(sorted((env or {}).items()))
        script = WorkerScript(script_path, interpreter, variables, load_balancer, tuple(args))
        self.serve_script(endpoint_id, script)
        return endpoint_id

    def deploy_kernel_function(
        self,
        endpoint_id: str,
        *,
        kernel: str | None = None,
        workers: Mapping[str, float] | None = None,
        execution_timeout_ms: int = EXECUTION_TIMEOUT_DEFAULT_MS,
    ) -> str:
        """An endpoint whose workers a notebook kernel serves (``workers/kernel_launcher.py``);
        returns the id of the kernel attached to it. Deployed before, it keeps its queue,
        its settings updated, and ``kernel`` (the one serving it) keeps its workers."""
        image = f"kernel/{endpoint_id}"
        existing = self.jobs.endpoints.get(endpoint_id)
        if existing is not None and existing.image != image:
            self.undeploy(endpoint_id)
            self.call_on_loop(self.remote_workers.reconcile)
            existing = None
        if existing is None:
            self.deploy(
                image,
                endpoint_id=endpoint_id,
                workers=workers,
                execution_timeout_ms=execution_timeout_ms,
            )
        else:
            _check_execution_timeout(execution_timeout_ms)
            settings = {**_scaling(workers), "timeout_ms": execution_timeout_ms}
            self._change(lambda: self.management.endpoints.change(endpoint_id, settings))
        return self.call_on_loop(lambda: self.kernels.attach(endpoint_id, kernel))

    def serve_script(self, endpoint_id: str, script: WorkerScript) -> None:
        """Run the endpoint's workers as processes of ``script``."""
        if self._supervisor is None:
            self._supervisor = Supervisor(
                self.remote_workers, lambda: self.serving_at or "", self._managed_env, self.balancer
            )
        supervisor = self._supervisor
        self.call_on_loop(lambda: supervisor.add(endpoint_id, script))

    def serve_demo_server(self, endpoint_id: str) -> None:
        """A load-balancing endpoint (made here or through REST v2) whose image is a demo's
        server (``DEMOS``) runs it; another image has no server here (requests are told)."""
        record = self.management.endpoints.get(endpoint_id)
        template = self.management.endpoints.template(record)
        demo = DEMOS.get(template.image if template else "")
        server = demo.server if demo is not None and record.type == "LOAD_BALANCER" else None
        if server is not None and endpoint_id not in self.remote_workers.pools:
            self.serve_script(endpoint_id, WorkerScript(server, load_balancer=True))

    def _request_count(self, endpoint_id: str) -> int:
        entry = self.management.endpoints.book.get(endpoint_id)
        return int(entry.scaling_value) if entry is not None else REQUEST_COUNT_DEFAULT

    def _managed_env(self, endpoint_id: str) -> dict[str, str]:
        entry = self.management.endpoints.book.get(endpoint_id)
        return dict(entry.env) if entry is not None else {}

    def worker_logs(self, endpoint_id: str, worker_id: str | None = None) -> list[str]:
        """What the endpoint's worker processes printed, each line tagged with its worker."""
        if self._supervisor is None:
            return []
        return self._supervisor.logs.lines(endpoint_id, worker_id)

    def stop_workers(self) -> None:
        """Stop every worker process and wait for them (the server does on stop)."""
        with contextlib.suppress(Exception):  # the loop may be gone (interpreter exit)
            self.call_on_loop(self.remote_workers.stop_all)  # wake their polls
        if self._supervisor is not None:
            self._supervisor.stop_all()

    def undeploy(self, endpoint_id: str) -> None:
        """Remove an endpoint and every job it has (and the template ``deploy`` made)."""
        self.call_on_loop(lambda: self.management.endpoints.delete(endpoint_id))
        self._made.discard(endpoint_id)

    def deploy_demos(self) -> None:
        """Every demo of ``DEMOS`` as an endpoint of its own name, but those deployed
        already (``llm-lb``'s process starts at its first request); one kept by the
        database runs its demo again."""
        for name in DEMOS:
            if name not in self._made:
                self.deploy(name, endpoint_id=name)

    def busy(self) -> str | None:
        """What is in flight, in words (None when nothing is): a queued or running job, an
        open batch, a load-balancing request, a webhook to deliver. The user's service
        never stops for idleness while any is."""
        jobs = sum(
            len(e.queue) + sum(1 for w in e.workers if w.running)
            for e in self.jobs.endpoints.values()
        )
        batches = sum(1 for b in self.batches.batches.values() if b.active)
        requests = sum(self.balancer.in_flight.values())
        parts = [
            f"{count} {what}"
            for count, what in (
                (jobs, "jobs queued or running"),
                (batches, "batches open"),
                (requests, "load-balancing requests"),
                (self.webhooks.pending, "webhooks to deliver"),
            )
            if count
        ]
        return ", ".join(parts) or None

    # ---- time ------------------------------------------------------------------------

    @property
    def fake_clock(self) -> FakeClock:
        if not isinstance(self.clock, FakeClock):
            raise RuntimeError(
                "this emulator runs on the real clock; create it with Emulator(clock=FakeClock())"
            )
        return self.clock

    async def advance_async(self, seconds: float) -> int:
        """Move the fake clock on the emulator's loop (from a coroutine on that loop)."""
        return await self.fake_clock.advance(seconds)

    def advance(self, seconds: float) -> int:
        """Move the fake clock from another thread (a notebook, a sync test)."""
        clock = self.fake_clock
        loop = self._loop
        if loop is None or not loop.is_running():
            return clock.step(seconds)
        return asyncio.run_coroutine_threadsafe(clock.advance(seconds), loop).result(timeout=60)

    # ---- administration --------------------------------------------------------------

    def reset(self) -> None:
        """Forget all jobs, batches, webhook deliveries and rate-limit history; endpoints stay."""

        def run() -> None:
            self.batches.reset()
            self.jobs.reset()
            self.webhooks.clear()
            self.rate_limiter.reset()

        self.call_on_loop(run)

    async def _send_webhook(self, url: str, body: dict[str, Any]) -> int:
        if self.webhook_guard:
            await guard_webhook(url)
        return await self._webhook_sender(url, body)

    async def aclose(self) -> None:
        """Stop deliveries and release the webhook HTTP clients."""
        self.webhooks.cancel_all()
        await self._webhook_sender.aclose()

    def close(self) -> None:
        """Release the handler threads and the store (running sync handlers finish alone)."""
        self.stop_workers()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.store.close()
