"""Sync handlers that hang for good: capacity comes back, and shutdown never waits.

Before the fix, 66 blocking jobs, each correctly TIMED_OUT, used up the 64 handler
threads; later jobs sat IN_PROGRESS for ever, and SIGTERM hung in
``concurrent.futures`` at exit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.handler_threads import HandlerThreads

from ..conftest import Blocking, MakeEmulator, advance, status_of, submit, until
from ..test_cli import URL

pytestmark = pytest.mark.anyio


def quick(job: dict[str, Any]) -> Any:
    return {"quick": job["input"]}


async def test_timed_out_handlers_give_their_threads_back(
    make_emulator: MakeEmulator, blocking: Blocking
) -> None:
    emu: Emulator = make_emulator(handler_threads=2, demos=False)
    emu.deploy(handler=blocking.handler, endpoint_id="stuck", workers={"max": 3},
               execution_timeout_ms=5_000)  # fmt: skip
    emu.deploy(handler=quick, endpoint_id="quick")
    stuck = [submit(emu, "stuck", {"n": n}) for n in range(3)]
    await until(lambda: len(blocking.started) == 2, "two handlers holding both threads")
    assert emu.jobs.health("stuck").workers.running == 3  # the third waits for a thread
    await advance(emu, 5)
    assert [status_of(emu, "stuck", j.id)["status"] for j in stuck] == ["TIMED_OUT"] * 3
    threads = emu.executor
    assert isinstance(threads, HandlerThreads)
    # The third got a thread when the first was written off, and then timed out too.
    await until(lambda: threads.stuck == 3, "the three stuck threads written off")
    # Capacity is back: new jobs run, on new threads, although the old ones still hang.
    for n in range(4):
        job = submit(emu, "quick", {"n": n})
        await until(lambda j=job: status_of(emu, "quick", j.id)["status"] == "COMPLETED",
                    "a later job to complete")  # fmt: skip
    again = submit(emu, "stuck", {"n": 9})
    await until(lambda: len(blocking.started) == 4, "a new stuck handler to start")
    assert emu.jobs.health("stuck").workers.running == 1
    assert threads.threads <= 2 + threads.stuck
    # When the stuck handlers do return, the extra threads retire and results are dropped.
    blocking.release_all()
    await until(lambda: threads.stuck == 0, "the stuck handlers to return")
    await until(lambda: threads.threads <= 2, "the extra threads to retire")
    await settle()
    assert [status_of(emu, "stuck", j.id)["status"] for j in stuck] == ["TIMED_OUT"] * 3
    # The new job's handler returns on its thread; its result reaches the loop after that.
    await until(
        lambda: status_of(emu, "stuck", again.id)["status"] == "COMPLETED",
        "the new stuck job to complete once released",
    )


def test_sigterm_ends_the_emulator_while_a_handler_hangs(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(
        "import time\n\ndef handler(job):\n    time.sleep(3600)\n    return 1\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", "--api-key", "k",
         "--endpoint", f"hang={tmp_path / 'hang.py'}:handler"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        base = None
        deadline = time.monotonic() + 30
        while base is None and time.monotonic() < deadline:
            match = URL.search(proc.stdout.readline())
            base = match.group(1) if match else None
        assert base is not None, "the emulator did not start"
        with httpx.Client(base_url=base, headers={"Authorization": "Bearer k"}) as client:
            job = client.post("/hang/run", json={"input": {}}).json()
            deadline = time.monotonic() + 30
            while client.get(f"/hang/status/{job['id']}").json()["status"] != "IN_PROGRESS":
                assert time.monotonic() < deadline, "the job did not start"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - started < 20
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
