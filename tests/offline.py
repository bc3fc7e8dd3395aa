"""Running a program offline: in a network namespace of its own with loopback only
(``unshare -n``, then ``ip link set lo up``), as in a classroom with no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

import pytest


def offline(command: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None) -> str:
    """What ``command`` printed, run offline with ``env`` (by default this process's, less
    every ``RUNPOD_`` setting: no key). Skips the test where no namespace can be made (no
    root, no ``unshare``); fails it with the command's last words when the command fails."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2) for a network namespace")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.decode()[:200]}")
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUNPOD_")}
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *command],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def python_offline(code: str, *, timeout: float = 120) -> list[str]:
    """The lines Python ``code`` printed, run offline with no key."""
    return offline([sys.executable, "-c", code], timeout=timeout).splitlines()
