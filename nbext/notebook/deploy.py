"""``nbext.deploy``: a notebook function, or a worker script, as an endpoint of the emulator.

A function runs in this kernel (``kernel_worker``; docs/behaviour.md#a-notebook-functions-kernel).
A worker script runs unmodified in processes of its own (docs/workers.md); deploying
waits for its first worker, so a script that cannot start says so in the deploying cell.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from .connection import Connection, Service
from .errors import InvalidArgument, NotebookError, WrongType
from .kernel import current
from .kernel_worker import KernelWorker
from .widgets.startup import StartupPanel

START_TIMEOUT_S = 120.0
"""How long deploying a script waits for its first worker to serve (a model may load)."""
START_POLL_S = 0.05
PANEL_AFTER_S = 1.0
"""A start longer than this is drawn as a live panel (a quick one prints one line)."""


class WorkerStartFailed(NotebookError):
    """A worker script could not start (it exited, or its calls were refused):
    ``output`` holds its last lines."""

    def __init__(self, message: str, output: list[str]) -> None:
        super().__init__(message)
        self.output = output


def deploy(
    function: Callable[..., Any] | str | os.PathLike[str],
    name: str | None = None,
    *,
    workers: Mapping[str, float] | None = None,
    execution_timeout: float | None = None,
    type: Literal["QUEUE", "LOAD_BALANCER"] = "QUEUE",
    python: str | None = None,
    env: dict[str, str] | None = None,
    start_timeout: float = START_TIMEOUT_S,
    connection: Connection | None = None,
) -> str:
    """Make ``function`` an endpoint of the embedded emulator; returns the endpoint id.

    ``function(job)`` follows the service's worker convention: ``job["input"]`` is the
    input, the return value the output, a generator streams. ``name`` defaults to the
    function's name. ``workers`` is REST v2's ``{"min": 0, "max": 3, "idleTimeout": 5}``
    (those are the defaults; give only what differs). ``execution_timeout`` is seconds
    (default 10 minutes). Only the local emulator runs notebook functions: connected to
    the cloud this raises.

    Given a path (``"worker.py"``), deploys that worker script instead: its processes
    call ``runpod.serverless.start`` as on the service. ``name`` defaults to the file's
    stem; ``python`` names another interpreter (a worker's own virtualenv); ``env`` is the
    endpoint's environment, the only variables its workers get beyond what a process needs
    (docs/workers.md): pass a secret there, ``env={"HF_TOKEN": os.environ["HF_TOKEN"]}``.
    ``type="LOAD_BALANCER"``: the script is an HTTP server serving on ``PORT`` with a health
    path (docs/behaviour.md#load-balancing-endpoints). Deploying waits ``start_timeout``
    seconds at most for the first worker to serve; past it, or at Ctrl-C, the endpoint is
    removed and this raises.
    """
    settings: dict[str, Any] = {
        "executionTimeoutMs": EXECUTION_TIMEOUT_DEFAULT_MS
        if execution_timeout is None
        else round(float(execution_timeout) * 1000),
        **({} if workers is None else {"workers": workers}),
    }
    if isinstance(function, str | os.PathLike):
        body = {**settings, "type": type}
        return _deploy_script(Path(function), name, body, python, env, start_timeout, connection)
    if python is not None or env is not None or type != "QUEUE":
        raise InvalidArgument("python=, env= and type= apply to a script (a path), not a function")
    if not callable(function):
        raise WrongType(
            f"deploy needs a function or a worker script's path, got {function.__class__.__name__}"
        )
    endpoint_id = name or getattr(function, "__name__", "")
    if not endpoint_id or endpoint_id == "<lambda>":
        raise InvalidArgument("this function has no usable name: pass name='my-endpoint'")
    kernel = connection or current()
    service = kernel.local()
    root_url = service.root_url
    served = kernel.kernel_workers.get(endpoint_id)
    if served is None or served.root_url != root_url:
        served = KernelWorker(root_url, service.key.reveal(), endpoint_id, function)
    served.function = function  # deploying again: new jobs run the new code
    try:
        served.deploy(settings)
    except ValueError as exc:  # the emulator's word on a bad name or setting
        raise InvalidArgument(str(exc)) from None
    if (before := kernel.kernel_workers.get(endpoint_id)) not in (None, served):
        before.stop()
    kernel.kernel_workers[endpoint_id] = served
    return endpoint_id


def _deploy_script(
    path: Path,
    name: str | None,
    settings: dict[str, Any],
    python: str | None,
    env: dict[str, str] | None,
    start_timeout: float,
    connection: Connection | None,
) -> str:
    if path.suffix != ".py":
        raise InvalidArgument(f"a worker script is a .py file, not {str(path)!r}")
    if not path.is_file():
        raise InvalidArgument(f"worker script {str(path)!r} not found")
    if not start_timeout > 0:
        raise InvalidArgument(f"start_timeout is seconds above 0, got {start_timeout!r}")
    service = (connection or current()).local("deploying a worker script needs")
    endpoint_id = name or path.stem
    body = {
        "path": str(path.resolve()),  # the service runs elsewhere: not the kernel's cwd
        "python": python or sys.executable,  # the kernel's environment, the user's
        "env": env or {},
        **settings,
    }
    service.control("PUT", f"/_emulator/scripts/{endpoint_id}", body)
    _await_first_worker(service, path.name, endpoint_id, start_timeout)
    return endpoint_id


def _await_first_worker(service: Service, name: str, endpoint_id: str, limit: float) -> None:
    """Wait until a worker serves, drawing a long wait (``StartupPanel``). A worker that
    cannot start, the limit, or an interrupt fails the deploy and removes the endpoint."""
    started = time.monotonic()
    panel: StartupPanel | None = None
    outcome = f"stopped by an interrupt: endpoint {endpoint_id!r} removed"
    try:
        while (waited := time.monotonic() - started) < limit:
            startup = service.control("GET", f"/_emulator/endpoints/{endpoint_id}/startup")
            if startup["serving"]:
                outcome = f"serving after {waited:.1f} s"
                return
            if (failure := startup["failure"]) is not None:
                outcome = f"{name} could not start: {failure}"
                raise _failed(outcome, startup["output"])
            if panel is None and waited >= PANEL_AFTER_S:
                panel = StartupPanel(name, endpoint_id, limit)
            if panel is not None:
                panel.wait(waited, startup["health"] or "")
            time.sleep(START_POLL_S)
        seen = f" ({startup['health']})" if startup["health"] else ""
        outcome = f"{name} could not start: no worker served within {limit:.0f} s{seen}"
        raise WorkerStartFailed(
            f"worker script {outcome}; the endpoint was removed (a worker that takes "
            "longer to load: start_timeout=SECONDS, --start-timeout)",
            startup["output"],
        )
    except (KeyboardInterrupt, WorkerStartFailed):
        service.control("DELETE", f"/_emulator/endpoints/{endpoint_id}")
        raise
    finally:
        if panel is not None:
            panel.end(outcome)


def _failed(outcome: str, output: list[str]) -> WorkerStartFailed:
    """The failure, ending with the last line it printed (a traceback's end says why)."""
    last = next((line.strip() for line in reversed(output) if line.strip()), "")
    if last or "it exited" in outcome:
        outcome += f": {last}" if last else ", printing nothing"
    return WorkerStartFailed(f"worker script {outcome}", output)
