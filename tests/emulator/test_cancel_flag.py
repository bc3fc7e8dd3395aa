"""The flag a running handler reads (or blocks on) to learn its job must stop.

``CancelFlag`` makes its ``threading.Event`` only when someone waits, so these tests pin
down the Event behaviour handlers rely on: set before, during and after a wait, from
another thread, and through a real cancel of a job whose sync handler blocks on it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from nbext.emulator import Emulator, current_job
from nbext.emulator.domain.cancel import STOPPED, CancelFlag
from nbext.models import JobStatus

from .conftest import submit, until

pytestmark = pytest.mark.anyio


def test_a_new_flag_is_clear_and_a_wait_times_out_false() -> None:
    flag = CancelFlag()
    assert not flag.is_set()
    assert flag.wait(0) is False
    assert repr(flag) == "CancelFlag(set=False)"


def test_a_set_flag_answers_true_without_waiting() -> None:
    flag = CancelFlag()
    flag.set()
    assert flag.is_set()
    assert flag.wait(0) is True
    assert flag.wait() is True  # no timeout: would hang if the set were lost


def test_setting_from_another_thread_wakes_a_waiter() -> None:
    flag = CancelFlag()
    waiting = threading.Event()
    woke: list[bool] = []

    def waiter() -> None:
        waiting.set()
        woke.append(flag.wait(30))

    thread = threading.Thread(target=waiter)
    thread.start()
    assert waiting.wait(30)
    flag.set()
    thread.join(30)
    assert woke == [True]


def race(flag: CancelFlag) -> list[bool]:
    """Start a waiter and a setter of ``flag`` together; what the waiter's wait returned."""
    results: list[bool] = []
    start = threading.Barrier(2)

    def waiter() -> None:
        start.wait()
        results.append(flag.wait(30))

    def setter() -> None:
        start.wait()
        flag.set()

    threads = [threading.Thread(target=waiter), threading.Thread(target=setter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_many_waiters_and_setters_racing_never_lose_the_set() -> None:
    for _ in range(200):
        assert race(CancelFlag()) == [True]


def test_the_shared_stopped_flag_is_set() -> None:
    assert STOPPED.is_set() and STOPPED.wait(0)


async def test_cancelling_a_job_releases_a_sync_handler_blocked_on_its_flag(
    emu: Emulator,
) -> None:
    blocked = threading.Event()
    released: list[bool] = []

    def handler(job: dict[str, Any]) -> Any:
        ctx = current_job()
        blocked.set()
        released.append(ctx.cancel_flag.wait(30))
        return {"late": True}

    emu.deploy(handler=handler, endpoint_id="blocking")
    job = submit(emu, "blocking")
    await until(blocked.is_set)
    assert job.status is JobStatus.IN_PROGRESS
    emu.jobs.cancel("blocking", job.id)
    await until(lambda: bool(released))
    assert released == [True]
    assert job.status is JobStatus.CANCELLED
