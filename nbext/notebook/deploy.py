"""``nbext.deploy``: a notebook function, or a worker script, as an endpoint of the
embedded emulator.

A function runs in this kernel, beside what the kernel has loaded, as a worker of its
endpoint pulling jobs over the worker protocol (``kernel_worker``): the emulator may be
another process. Deploying again under the same name (re-running the cell after editing
the function) rebinds it: the endpoint keeps its queue, counters and running jobs, new
jobs run the new code, and changed scaling settings apply. Deployed from another kernel,
that kernel serves it from then on (a kernel that is gone leaves its jobs waiting).

A worker script (a path) runs unmodified in processes of its own, as on the service
(docs/workers.md). Deploying waits for its first worker to serve, so a script that
cannot start says so in the deploying cell, with the last lines it printed, rather than
leaving the first job queued. Deploying it again (after editing the script) replaces
the endpoint's processes: new jobs run the new code.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from .connection import Connection, Service
from .errors import InvalidArgument, NotebookError, WrongType
from .kernel import current
from .kernel_worker import KernelWorker

START_TIMEOUT_S = 120.0
"""How long deploying a script waits for its first worker to serve (a cold start that
loads a model can take this long; the SDK alone takes a second or two)."""
START_POLL_S = 0.05


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
    workers_max: int = 3,
    workers_min: int = 0,
    idle_timeout: float = 5.0,
    execution_timeout: float | None = None,
    python: str | None = None,
    env: dict[str, str] | None = None,
    load_balancer: bool = False,
    connection: Connection | None = None,
) -> str:
    """Make ``function`` an endpoint of the embedded emulator; returns the endpoint id.

    ``function(job)`` follows the service's worker convention: ``job["input"]`` is the
    input, the return value the output, a generator streams. ``name`` defaults to the
    function's name. ``execution_timeout`` is seconds (default 10 minutes). Only the
    local emulator runs notebook functions: connected to the cloud this raises.

    Given a path (``"worker.py"``), deploys that worker script instead: its processes
    call ``runpod.serverless.start`` as on the service. ``name`` defaults to the file's
    stem; ``python`` names another interpreter (a worker's own virtualenv); ``env`` is
    the endpoint's environment. The workers get no other variable of the kernel's but
    what a process needs to run (``PATH``, ``HOME``, locale, proxies: docs/workers.md),
    so a secret a worker needs is passed here: ``env={"HF_TOKEN": os.environ["HF_TOKEN"]}``.

    ``load_balancer=True``: the script is an HTTP server (FastAPI, ``http.server``...)
    serving on ``PORT`` with a health path, and the endpoint a load-balancing one
    (docs/behaviour.md#load-balancing-endpoints); deploying waits for its first 200.
    """
    settings = _settings(workers_min, workers_max, idle_timeout, execution_timeout)
    if isinstance(function, str | os.PathLike):
        if load_balancer:
            settings["load_balancer"] = True
        return _deploy_script(Path(function), name, settings, python, env, connection)
    if python is not None or env is not None or load_balancer:
        raise InvalidArgument(
            "python=, env= and load_balancer= apply to a script (a path), not a function"
        )
    if not callable(function):
        raise WrongType(
            f"deploy needs a function or a worker script's path, got {type(function).__name__}"
        )
    endpoint_id = name or getattr(function, "__name__", "")
    if not endpoint_id or endpoint_id == "<lambda>":
        raise InvalidArgument("this function has no usable name: pass name='my-endpoint'")
    kernel = connection or current()
    service = kernel.local()
    root_url = service.serverless_url.removesuffix("/v2")
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


def _settings(
    workers_min: int, workers_max: int, idle_timeout: float, execution_timeout: float | None
) -> dict[str, Any]:
    timeout_ms = (
        EXECUTION_TIMEOUT_DEFAULT_MS
        if execution_timeout is None
        else round(float(execution_timeout) * 1000)
    )
    return {
        "workers_min": workers_min,
        "workers_max": workers_max,
        "idle_timeout": idle_timeout,
        "execution_timeout_ms": timeout_ms,
    }


def _deploy_script(
    path: Path,
    name: str | None,
    settings: dict[str, Any],
    python: str | None,
    env: dict[str, str] | None,
    connection: Connection | None,
) -> str:
    if path.suffix != ".py":
        raise InvalidArgument(f"a worker script is a .py file, not {str(path)!r}")
    if not path.is_file():
        raise InvalidArgument(f"worker script {str(path)!r} not found")
    service = (connection or current()).local("deploying a worker script needs")
    endpoint_id = name or path.stem
    body = {
        "path": str(path.resolve()),  # the service runs elsewhere: not the kernel's cwd
        "python": python or sys.executable,  # the kernel's environment, the user's
        "env": env or {},
        "loadBalancer": bool(settings.pop("load_balancer", False)),
        **{to_camel(key): value for key, value in settings.items()},
    }
    service.control("PUT", f"/_emulator/scripts/{endpoint_id}", body)
    _await_first_worker(service, endpoint_id, path)
    return endpoint_id


def _await_first_worker(service: Service, endpoint_id: str, path: Path) -> None:
    """Wait until a worker serves; a worker that dies first fails the deploy (and the
    endpoint is removed, so no job waits on a script that cannot start)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        startup = service.control("GET", f"/_emulator/endpoints/{endpoint_id}/startup")
        if startup["serving"]:
            return
        failure = startup["failure"]
        if failure is not None:
            output = startup["output"]
            service.control("DELETE", f"/_emulator/endpoints/{endpoint_id}")
            last = next((line for line in reversed(output) if line.strip()), "")
            if failure.startswith("it exited"):  # the end of its traceback says why
                failure += f": {last.strip()}" if last else ", printing nothing"
            raise WorkerStartFailed(
                f"worker script {path.name} could not start: {failure}",
                output,
            )
        time.sleep(START_POLL_S)
    # Slow, not dead (a large model loading): the endpoint stays, its jobs wait.
    warnings.warn(
        f"worker script {path.name}: no worker serves yet after {START_TIMEOUT_S:.0f} s; "
        "jobs wait in the queue until one does (its log: %runpod logs)",
        stacklevel=3,
    )
