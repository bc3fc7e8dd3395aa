"""The flag a running handler reads (or blocks on) to learn its job must stop.

A plain ``threading.Event``; this pins what handlers rely on: a real cancel of a job
whose sync handler blocks on the flag releases it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from nbext.emulator import Emulator, current_job
from nbext.models import JobStatus

from .conftest import submit, until

pytestmark = pytest.mark.anyio


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
