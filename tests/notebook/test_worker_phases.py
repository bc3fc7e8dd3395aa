"""Worker scripts that cannot start, or start slowly, as a user of the notebook meets them.

Each script runs unmodified with the official ``runpod`` package, in a process of its own
(on the real clock: a process's import takes real time). One exits at import: a crash
loop, which ``/health`` counts as unhealthy, ``/status`` shows IN_QUEUE with no worker,
and the client's error, ``job.phases()`` and ``%runpod why`` name with what the worker
said last. One sleeps 5 s at import: a cold start, counted as initializing while it
lasts, timed in the job's phases, the job's worker named once it runs.
"""

from __future__ import annotations

import functools
import re
import textwrap
from pathlib import Path

import anyio.to_thread
import pytest

from nbext.client import Timeout
from nbext.models import JobStatus

from .conftest import Notebook
from .test_worker_scripts import COLD_START_S

LAST_WORDS = "model weights not found: /models/llama-7b"
CRASHING = textwrap.dedent(
    f"""
    import sys
    import runpod
    print("loading the model", flush=True)
    print({LAST_WORDS!r}, flush=True)
    sys.exit(1)
    """
)
SLOW_START_S = 5.0
SLOW = textwrap.dedent(
    f"""
    import time
    time.sleep({SLOW_START_S})
    import runpod
    def handler(job):
        return {{"ready": True}}
    runpod.serverless.start({{"handler": handler}})
    """
)


def bundles_of(nb: Notebook, text: str) -> list[str]:
    """The text/plain of every display and update of the output that once showed
    ``text``: one panel's successive states, as a front end received them."""
    for output in nb.outputs():
        plains = [str(bundle.get("text/plain", "")) for bundle in output]
        if any(text in plain for plain in plains):
            return plains
    raise AssertionError(f"no output showed {text!r}")


def test_a_script_that_exits_at_import_is_a_crash_loop_named_with_its_last_line(
    nb: Notebook, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "crashing.py"
    script.write_text(CRASHING)
    nb.emu.deploy_worker(script, endpoint_id="crashing", workers={"min": 1, "max": 1})
    endpoint = nb.conn.client.endpoint("crashing")
    nb.until(lambda: endpoint.health().workers.unhealthy == 1, "the worker to crash", COLD_START_S)
    nb.until(
        lambda: LAST_WORDS in "\n".join(nb.emu.worker_logs("crashing")),
        "its last words in its log",
        COLD_START_S,
    )
    nb.run('%%runpod_job crashing --timeout 3\n{"prompt": "hi"}')  # waits 3 s, in vain
    shown = bundles_of(nb, "why: no worker could start")
    last = shown[-1]
    assert "in queue · workers 0 ready, 1 unhealthy" in last
    assert "why: no worker could start: 1 worker unhealthy (crashing at start or not " in last
    assert f"; last line: {LAST_WORDS}" in last and "stopped waiting after 3 s" in last
    job = endpoint.job(nb.record().id)
    status = job.status()
    assert status.status is JobStatus.IN_QUEUE and status.worker_id is None
    health = endpoint.health()
    assert health.workers.ready == 0 and health.jobs.in_queue == 1
    with pytest.raises(Timeout) as info:
        job.wait(timeout=1)
    cause = info.value.cause
    assert cause is not None and cause.startswith("no worker could start: 1 worker unhealthy")
    assert cause.endswith(f"; last line: {LAST_WORDS}")
    phase = next(p for p in job.phases(threshold=0) if p.health is not None)
    assert phase.cause == cause and phase.last_line == LAST_WORDS
    said = [line for line in phase.log if not line.startswith("--- ")]  # not restarts
    assert said[-2:] == ["loading the model", LAST_WORDS]
    capsys.readouterr()
    nb.run("%runpod why")
    printed = capsys.readouterr().out
    assert "1. no worker could start: 1 worker unhealthy" in printed
    assert f"   next: %runpod logs crashing --worker {phase.log_worker}" in printed
    assert LAST_WORDS in printed
    job.cancel()


@pytest.mark.anyio
async def test_a_script_that_sleeps_at_import_is_a_timed_cold_start(
    nb: Notebook, tmp_path: Path
) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    nb.emu.deploy_worker(script, endpoint_id="slow", workers={"max": 1})
    nb.run("%%runpod_job slow --background -o out\n{}")
    endpoint = nb.conn.client.endpoint("slow")
    job = endpoint.job(nb.record().id)
    with pytest.raises(Timeout) as info:  # a wait of its own, while the panel follows
        await anyio.to_thread.run_sync(functools.partial(job.wait, timeout=2.5))
    assert info.value.cause == "cold start: 1 worker initializing, none ready yet"
    assert info.value.health is not None and info.value.health.workers.initializing == 1
    await nb.auntil(lambda: nb.record().final, "the job to end", COLD_START_S)
    task = nb.record().follower.task
    assert task is not None
    await task
    assert nb.shell.user_ns["out"] == {"ready": True}
    shown = bundles_of(nb, "initializing")
    starting = re.compile(r"in queue · workers 0 ready, 1 initializing \((\d+(\.\d)?) s\)")
    counted = {m.group(1) for plain in shown for m in starting.finditer(plain)}
    assert len(counted) >= 2, shown  # the cold start counted up in the panel
    final = re.search(r"cold start (\d+(\.\d)?) s, ran ", shown[-1])
    assert final is not None and SLOW_START_S - 2.5 <= float(final.group(1)) <= COLD_START_S
    status = job.status()  # it ran too briefly for the panel to see it running
    assert status.status is JobStatus.COMPLETED and status.worker_id is not None
    await nb.conn.aclose()
