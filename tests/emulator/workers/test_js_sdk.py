"""The RunPod JS SDK (``runpod-sdk`` from npm, pinned by ``tests/js/package-lock.json``)
against the emulator: ``runSync`` falls back to ``/status-sync`` when ``/runsync`` answers
before the job ends, and ``statusSync`` reads the status shape.

Runs ``node`` on ``tests/js/status_sync.mjs``; skipped only when node is not installed. The
SDK is installed once per lockfile, with ``npm ci``, into a cache outside the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import COLD_START_S, KEY, Served, until

JS = Path(__file__).parents[2] / "js"
FILES = ("package.json", "package-lock.json", "status_sync.mjs")


def sdk_dir() -> Path:
    """A directory with the pinned SDK installed and the script beside it."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("node is installed but npm is not: install npm to run the JS SDK test")
    lock = (JS / "package-lock.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = cache / "nbext" / f"js-sdk-{hashlib.sha256(lock).hexdigest()[:16]}"
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(JS / name, target / name)
    if not (target / "node_modules" / "runpod-sdk" / "package.json").is_file():
        installed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert installed.returncode == 0, f"npm ci failed: {installed.stderr[-2000:]}"
    return target


def test_js_sdk_run_sync_falls_back_to_status_sync(served: Served, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JS SDK test needs node (and npm) on PATH")
    where = sdk_dir()
    ep = served.deploy("plain_worker.py", endpoint_id="jssdk", workers={"min": 1, "max": 1})
    until(lambda: served.health(ep)["workers"]["ready"] == 1, what="a ready worker")
    result = subprocess.run(
        [node, "status_sync.mjs", served.server.url, KEY, ep, str(tmp_path)],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=COLD_START_S * 2,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    ran, pending, done, calls = out["ran"], out["pending"], out["done"], out["calls"]
    # runSync: /runsync answered while the job waited, then /status-sync gave its end
    assert calls[0] == f"POST /v2/{ep}/runsync?wait=4000"
    assert calls[1].startswith(f"GET /v2/{ep}/status-sync/{ran['id']}?wait=")
    assert ran["status"] == "COMPLETED" and ran["succeeded"] is True and ran["completed"] is True
    assert ran["output"]["echo"]["mode"] == "progress"
    # statusSync: the status shape while the job runs (its progress) and once it ended
    assert pending["status"] == "IN_PROGRESS" and pending["output"] == "half way"
    assert done["status"] == "COMPLETED" and done["id"] == pending["id"]
    assert {"id", "status", "delayTime", "executionTime", "output"} <= set(done)
    assert done["output"]["echo"]["release"].endswith("second")
