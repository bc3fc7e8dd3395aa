"""Endpoints whose workers a notebook kernel serves (``nbext.deploy(function)``): this
``Launcher`` starts no process but queues worker starts and stops for the kernel's long
poll (docs/architecture.md#a-notebook-function-as-an-endpoint). A kernel's presence is
real time (it is a real process), whatever the emulator's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..domain.errors import Conflict, NotFound
from ..domain.remote_workers import RemoteWorker, RemoteWorkers
from ..domain.workers import WorkerState

HOLD_S = 2.0
"""How long an attach poll is held open when there is nothing to start or stop: it is
also the pings of the kernel's workers, so well within ``PING_MISSED_AFTER_S``."""
GONE_AFTER_S = 3.0
"""A kernel that has not polled for this long since its last poll ended is gone (a live
one polls again within milliseconds)."""


@dataclass(eq=False)
class _Kernel:
    """The kernel attached to one endpoint, and what it has yet to be told."""

    id: str = field(default_factory=lambda: "kernel-" + secrets.token_hex(6))
    starts: dict[str, str] = field(default_factory=dict)
    """Workers to start: id -> key (a worker started again gets a new key)."""
    stops: list[str] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    polls: int = 0
    present: bool = True
    timer: asyncio.TimerHandle | None = None


def _soon(fn: Callable[[], None]) -> None:
    """``fn`` on the loop's next turn, out of the fleet's state change in progress (at
    once when no loop runs: the emulator is stopping)."""
    try:
        asyncio.get_running_loop().call_soon(fn)
    except RuntimeError:
        fn()


class KernelLauncher:
    """The kernels serving the emulator's notebook-function endpoints, one per endpoint."""

    def __init__(self, workers: RemoteWorkers) -> None:
        self.workers = workers
        self.kernels: dict[str, _Kernel] = {}

    def attach(self, endpoint_id: str, kernel_id: str | None) -> str:
        """The kernel serving ``endpoint_id`` from now on; returns its id. ``kernel_id``
        names the one serving it (deploying again from it): it keeps its workers. Any
        other kernel replaces it: the workers the old one ran end, and start in the new."""
        old = self.kernels.get(endpoint_id)
        if old is not None and old.id == kernel_id:
            self._present(endpoint_id, old)
            return old.id
        if endpoint_id not in self.workers.pools:
            self.workers.add_pool(endpoint_id, self)
        kernel = self.kernels[endpoint_id] = _Kernel()
        if old is not None:
            if old.timer is not None:
                old.timer.cancel()
            old.wake.set()  # its held poll ends, refused
            self._end_served(endpoint_id, "another kernel serves the endpoint now")
        self._present(endpoint_id, kernel)
        self._arm(endpoint_id, kernel)  # gone unless it polls
        return kernel.id

    def detach(self, endpoint_id: str, kernel_id: str) -> None:
        """The kernel stops serving (it said so, or its poll's connection closed): gone
        at once, if it still serves the endpoint."""
        kernel = self.kernels.get(endpoint_id)
        if kernel is not None and kernel.id == kernel_id:
            kernel.wake.set()
            self._gone(endpoint_id, kernel, force=True)

    async def poll(self, endpoint_id: str, kernel_id: str) -> dict[str, Any] | None:
        """What the kernel must start and stop, waiting up to ``HOLD_S`` for something
        (None: nothing). A kernel that was gone is present again."""
        kernel = self._current(endpoint_id, kernel_id)
        kernel.polls += 1
        pool = self.workers.pools[endpoint_id]
        for worker in pool.workers.values():  # threads of a kernel that polls: alive
            if worker.contacted_at is not None:
                self.workers.ping(worker)
        if kernel.timer is not None:
            kernel.timer.cancel()
        if not kernel.present:
            self._present(endpoint_id, kernel)
        try:
            if not (kernel.starts or kernel.stops):
                kernel.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(kernel.wake.wait(), HOLD_S)
        finally:
            kernel.polls -= 1
            if kernel.polls == 0:
                self._arm(endpoint_id, kernel)
        kernel = self._current(endpoint_id, kernel_id)
        starts, stops, kernel.starts, kernel.stops = kernel.starts, kernel.stops, {}, []
        if not (starts or stops):
            return None
        return {"start": [{"id": i, "key": k} for i, k in starts.items()], "stop": stops}

    def _current(self, endpoint_id: str, kernel_id: str) -> _Kernel:
        kernel = self.kernels.get(endpoint_id)
        if endpoint_id not in self.workers.jobs.endpoints:
            self.kernels.pop(endpoint_id, None)
            self.workers.reconcile()
            raise NotFound(f"endpoint {endpoint_id!r} was deleted")
        if kernel is None or kernel.id != kernel_id:
            raise Conflict(f"another kernel serves endpoint {endpoint_id!r} now")
        return kernel

    # ---- presence ----------------------------------------------------------------------

    def _arm(self, endpoint_id: str, kernel: _Kernel) -> None:
        loop = asyncio.get_running_loop()
        kernel.timer = loop.call_later(GONE_AFTER_S, self._gone, endpoint_id, kernel)

    def _present(self, endpoint_id: str, kernel: _Kernel) -> None:
        """The kernel is there: the workers waiting for one start in it."""
        kernel.present = True
        pool = self.workers.pools.get(endpoint_id)
        for worker in pool.workers.values() if pool is not None else ():
            worker.domain.last_line = None
            if worker.contacted_at is None and not worker.stopping:
                kernel.starts[worker.id] = worker.key
        kernel.wake.set()

    def _gone(self, endpoint_id: str, kernel: _Kernel, force: bool = False) -> None:
        if self.kernels.get(endpoint_id) is not kernel or not kernel.present:
            return
        if kernel.polls and not force:
            return
        kernel.present = False
        self._end_served(endpoint_id, "its kernel is gone")
        self._waiting(endpoint_id)

    def _end_served(self, endpoint_id: str, how: str) -> None:
        """The workers a kernel ran end as an exited process does (started again if
        still wanted: in the kernel attached now, or waiting for one)."""
        pool = self.workers.pools.get(endpoint_id)
        if pool is None:
            return
        for worker in list(pool.workers.values()):
            if worker.contacted_at is not None:
                self.workers.exited(worker, how)
                worker.stopping = True  # its held polls end, handing it nothing
                worker.wake.fire()
                pool.work.fire()

    def _waiting(self, endpoint_id: str) -> None:
        """With no kernel, the endpoint's workers not ready wait UNHEALTHY (untimed: no
        restart would help), saying why."""
        kernel = self.kernels.get(endpoint_id)
        endpoint = self.workers.jobs.endpoints.get(endpoint_id)
        if kernel is None or kernel.present or endpoint is None:
            return
        gone = (
            f"the kernel that served endpoint {endpoint_id!r} is gone: its jobs wait; deploy "
            f"the function again from a running kernel (%runpod deploy FUNCTION --name "
            f"{endpoint_id})"
        )
        for worker in endpoint.workers:
            if not worker.ready:
                worker.last_line = gone
                self.workers.fleet.enter(worker, endpoint, WorkerState.UNHEALTHY)

    # ---- Launcher ----------------------------------------------------------------------

    def launch(self, worker: RemoteWorker) -> None:
        kernel = self.kernels.get(worker.endpoint_id)
        if kernel is None:
            return
        kernel.starts[worker.id] = worker.key
        kernel.wake.set()
        if not kernel.present:  # once the fleet has booted it
            _soon(lambda: self._waiting(worker.endpoint_id))

    def terminate(self, worker: RemoteWorker) -> None:
        kernel = self.kernels.get(worker.endpoint_id)
        if kernel is not None and kernel.starts.pop(worker.id, None) is None:
            kernel.stops.append(worker.id)
            kernel.wake.set()
        _soon(lambda: self.workers.exited(worker, "stopped"))
