"""Ending a test's local service: by its process id, never by name."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def stop_service(runtime: Path, timeout: float = 15.0) -> None:
    """End the local service of ``runtime`` by its process id, if one runs there."""
    from nbext.service import files

    found = files.read(runtime) if runtime.is_dir() else None
    if found is None or not files.alive(runtime):
        return
    os.kill(found.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while files.alive(runtime):
        if time.monotonic() > deadline:
            os.kill(found.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    with contextlib.suppress(ChildProcessError):  # started by this process: reaped
        os.waitpid(found.pid, 0)
