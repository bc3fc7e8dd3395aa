"""Worker scripts that cannot start, or start slowly, as a user of the notebook meets them.

Each script runs unmodified with the official ``runpod`` package, in a process of its own
(on the real clock: a process's import takes real time). One exits at import: a crash
loop, which ``/health`` counts as unhealthy, ``/status`` shows IN_QUEUE with no worker,
and the client's error, ``job.phases()`` and ``%runpod why`` name with what the worker
said last. One sleeps 5 s at import: a cold start, counted as initializing while it
lasts, timed in the job's phases, the job's worker named once it runs.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nbext.client import Phase, Timeout
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


def test_a_script_that_exits_at_import_is_a_crash_loop_named_with_its_last_line(
    nb: Notebook, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.conn.management_api = "v2"  # the workers' list and logs are REST v2 routes
    script = tmp_path / "crashing.py"
    script.write_text(CRASHING)
    nb.emu.deploy_worker(script, endpoint_id="crashing", workers_min=1, workers_max=1)
    endpoint = nb.conn.client.endpoint("crashing")
    nb.until(lambda: endpoint.health().workers.unhealthy == 1, "the worker to crash", COLD_START_S)
    nb.until(
        lambda: LAST_WORDS in "\n".join(nb.emu.worker_logs("crashing")),
        "its last words in its log",
        COLD_START_S,
    )
    job = endpoint.run({"prompt": "hi"})
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
    nb.run(f"%runpod why {job.id} --endpoint crashing")
    printed = capsys.readouterr().out
    assert "1. no worker could start: 1 worker unhealthy" in printed
    assert f"   next: %runpod logs crashing --worker {phase.log_worker}" in printed
    assert LAST_WORDS in printed
    job.cancel()


def test_a_script_that_sleeps_at_import_is_a_timed_cold_start(nb: Notebook, tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    nb.emu.deploy_worker(script, endpoint_id="slow", workers_max=1)
    endpoint = nb.conn.client.endpoint("slow")
    job = endpoint.run({})
    with pytest.raises(Timeout) as info:
        job.wait(timeout=2)
    assert info.value.cause == "cold start: 1 worker initializing, none ready yet"
    assert info.value.health is not None and info.value.health.workers.initializing == 1
    phases: list[Phase] = list(job.phases(timeout=COLD_START_S, threshold=0))
    waiting = [p for p in phases if p.health is not None]
    assert waiting and waiting[0].cause == "cold start: 1 worker initializing, none ready yet"
    final = phases[-1]
    assert final.status is JobStatus.COMPLETED and final.result.output == {"ready": True}
    assert final.worker_id is not None and final.timings is not None
    assert final.timings.cold_start is not None
    assert SLOW_START_S - 2.5 <= final.timings.cold_start <= COLD_START_S
    assert job.status().worker_id == final.worker_id
