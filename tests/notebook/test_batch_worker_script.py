"""A batch on a worker script run unmodified by the official ``runpod`` package: each
request reaches the handler as a job carrying its batch's id, and the results come back
in input order."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import Notebook

WORKER = textwrap.dedent(
    """
    import runpod

    def handler(job):
        return {"batch": job.get("batchId"), "echo": job["input"]}

    runpod.serverless.start({"handler": handler})
    """
)


def test_a_batch_runs_on_a_worker_script_whose_jobs_carry_the_batch_id(
    nb: Notebook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    nb.run(f"%runpod deploy {script} --name scripted --workers-max 2 --python {sys.executable}")
    nb.run("xs = [{'n': n} for n in range(20)]")
    nb.run("%runpod batch scripted xs -o res")
    [batch_id] = nb.emu.batches.batches
    res = nb.shell.user_ns["res"]
    assert res["n"].tolist() == list(range(20)) and set(res["state"]) == {"COMPLETED"}
    assert res["output"].tolist() == [{"batch": batch_id, "echo": {"n": n}} for n in range(20)]
