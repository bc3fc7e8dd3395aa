"""A worker's health by its pings, on the emulator's fake clock.

The test plays the worker process: a launcher that starts nothing stands where the
supervisor would start ``python worker.py``, and the test makes the calls the SDK makes
(its first call, its pings) through the domain, with the key the emulator issued.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.domain.remote_workers import PING_MISSED_AFTER_S, RemoteWorker

pytestmark = pytest.mark.anyio


@dataclass
class NoProcesses:
    """A launcher that starts no process: the test makes the worker's calls itself."""

    started: list[RemoteWorker] = field(default_factory=list)

    def launch(self, worker: RemoteWorker) -> None:
        self.started.append(worker)

    def terminate(self, worker: RemoteWorker) -> None:
        pass


async def test_a_worker_that_never_pinged_is_unhealthy_once_its_first_ping_is_overdue(
    emu: Emulator,
) -> None:
    clock = emu.clock
    assert isinstance(clock, FakeClock)
    emu.deploy("worker/silent.py", endpoint_id="silent", workers={"min": 1, "max": 1})
    launcher = NoProcesses()
    workers = emu.remote_workers
    workers.add_pool("silent", launcher)
    (worker,) = launcher.started
    assert workers.states("silent") == {worker.id: "initializing"}

    await clock.advance(60)  # a cold start (a model loading) is not a missed ping
    assert workers.states("silent") == {worker.id: "initializing"}

    workers.authenticate("silent", worker.id, worker.key)  # its first call: it serves
    await clock.advance(PING_MISSED_AFTER_S)
    assert workers.states("silent") == {worker.id: "idle"}
    await clock.advance(0.1)  # its first ping is overdue, and none came
    assert workers.states("silent") == {worker.id: "unhealthy"}
    assert emu.jobs.health("silent").workers.unhealthy == 1

    workers.ping(worker)
    assert workers.states("silent") == {worker.id: "idle"}
    await clock.advance(PING_MISSED_AFTER_S + 0.1)
    assert workers.states("silent") == {worker.id: "unhealthy"}
