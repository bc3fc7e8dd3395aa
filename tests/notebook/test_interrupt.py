"""Ctrl-C in blocking mode: the remote job is cancelled, the cell says so, the kernel lives.

The interrupt is real: a SIGINT sent to the main thread (``signal.pthread_kill``), which
is what a Jupyter kernel's interrupt is; it breaks blocking calls as Ctrl-C does. It is
sent from inside the job's handler (so the job is provably submitted and running when it
lands), which then blocks until the emulator tells it the job was cancelled (or, if the
code under test failed to cancel, for at most 10 s so the test fails instead of hanging).

A kernel always handles SIGINT (that is what its interrupt button sends), but a test run
may start with SIGINT ignored (``nohup``, ``cmd &`` in a script, some CI runners), and
Python then leaves it ignored: no Ctrl-C would ever arrive. Each test here therefore
installs Python's own handler for its duration, as a kernel has one (``sigint_handled``).
"""

from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nbext.emulator import current_job
from nbext.models import JobStatus
from nbext.notebook import Interrupted
from nbext.notebook.interrupts import deferred_interrupts

from .conftest import Notebook

pytestmark = pytest.mark.usefixtures("sigint_handled")  # see its docstring


def press_ctrl_c() -> None:
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def interrupting_handler(release: threading.Event) -> Any:
    def handler(job: dict[str, Any]) -> dict[str, Any]:
        ctx = current_job()
        press_ctrl_c()  # the user presses Ctrl-C while the job runs
        deadline = time.monotonic() + 10
        while not ctx.cancelled and not release.is_set() and time.monotonic() < deadline:
            ctx.cancel_flag.wait(0.01)
        return {"finished": True}

    return handler


def test_ctrl_c_cancels_the_job_and_the_kernel_stays_usable(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    release = threading.Event()
    nb.deploy(interrupting_handler(release), "slow")
    try:
        with pytest.raises(Interrupted) as caught:
            nb.run('%%runpod_job slow -o out\n{"work": 1}')
    finally:
        release.set()
    record = nb.record()
    assert f"job {record.id} on endpoint 'slow' was cancelled (CANCELLED)" in str(caught.value)
    assert nb.job(record.id).status is JobStatus.CANCELLED
    panel = nb.panel()
    assert panel.state == "CANCELLED"
    assert "cancelled by Ctrl-C" in nb.outputs()[0][-1]["text/html"]
    assert nb.shell.user_ns["out"] is None
    # shown as one line, not a traceback
    shown = capsys.readouterr()
    printed = shown.out + shown.err
    assert "Interrupted: job" in printed and "Traceback" not in printed
    # the kernel goes on
    nb.run('%%runpod_job echo -o again\n{"ok": true}')
    assert nb.shell.user_ns["again"] == {"ok": True}


def test_ctrl_c_during_runsync_says_the_job_could_not_be_cancelled(nb: Notebook) -> None:
    release = threading.Event()
    nb.deploy(interrupting_handler(release), "slow")
    try:
        with pytest.raises(Interrupted) as caught:
            nb.run('%%runpod_job slow --sync\n{"work": 1}')
    finally:
        release.set()
    assert "could not be cancelled" in str(caught.value)
    nb.run('%%runpod_job echo -o again\n{"ok": 1}')
    assert nb.shell.user_ns["again"] == {"ok": 1}


def test_ctrl_c_during_a_map_stops_it(nb: Notebook) -> None:
    release = threading.Event()
    nb.deploy(interrupting_handler(release), "slow", workers={"max": 1})
    nb.run("inputs = [{'i': i} for i in range(3)]")
    try:
        with pytest.raises(Interrupted) as caught:
            nb.run("%runpod map slow inputs --concurrency 1")
    finally:
        release.set()
    assert "stopped after 0 of 3 jobs" in str(caught.value)
    assert "interrupted: 0 of 3 finished" in nb.last_plain()
    # Ctrl-C came during the /runsync hold: the map let that answer come, so the job is
    # named by its id and cancelled, not left running unnamed
    (job,) = nb.emu.jobs.jobs.values()
    assert f"cancelled 1 job ({job.id}) it had submitted" in str(caught.value)
    assert job.status is JobStatus.CANCELLED


def test_interrupts_are_held_back_while_a_job_is_being_submitted() -> None:
    reached = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        _thread.interrupt_main()
        for _ in range(1000):  # bytecodes run: a pending interrupt would land here
            reached.append(1)
        reached.append("end of block")
    assert reached[-1] == "end of block"


def test_deferred_interrupts_do_nothing_off_the_main_thread() -> None:
    done: list[bool] = []

    def work() -> None:
        with deferred_interrupts():
            done.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert done == [True]


def test_these_tests_pass_when_the_run_starts_with_sigint_ignored() -> None:
    """As under ``nohup`` or ``cmd &``: the child starts with SIGINT set to SIG_IGN."""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            __file__,
            "-k",
            "held_back or map_stops",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout


def test_ctrl_c_during_a_batch_detaches_and_the_batch_runs_on(
    nb: Notebook, capsys: pytest.CaptureFixture[str], tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    release = threading.Event()
    pressed: list[int] = []

    def handler(job: dict[str, Any]) -> dict[str, Any]:
        if not pressed:
            pressed.append(1)
            press_ctrl_c()  # once, while the first request runs
        release.wait(10)
        return {"finished": True}

    nb.deploy(handler, "slow", workers={"max": 1})
    nb.run("inputs = [{'i': i} for i in range(3)]")
    try:
        nb.run("%runpod batch slow inputs -o res")  # no error: the cell just lets go
    finally:
        release.set()
    (batch,) = nb.emu.batches.batches.values()
    assert f"detached from batch {batch.id}, which runs on" in capsys.readouterr().out
    assert "res" not in nb.shell.user_ns
    assert batch.status.value == "FINALIZED"  # not cancelled
    nb.run(f"%runpod batch attach slow {batch.id} -o res -q")
    assert nb.shell.user_ns["res"]["output"].tolist() == [{"finished": True}] * 3
