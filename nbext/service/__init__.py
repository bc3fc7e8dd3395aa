"""The user's local service, seen from a kernel or a script: join it, start it, stop it
(docs/behaviour.md#the-local-service). It imports none of the emulator, so joining a
running service costs a file read and one call.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from nbext._version import __version__

from . import files
from .files import ServiceFile, ServiceFileError

__all__ = [
    "Joined",
    "ServiceError",
    "ServiceFileError",
    "client_settings",
    "describe",
    "files",
    "join",
    "log_lines",
    "restart",
    "status",
    "stop",
]

START_TIMEOUT_S = 30.0
"""How long starting the service may take before it is reported as failed (it takes
about a second; a loaded machine may take several)."""
CALL_TIMEOUT_S = 5.0
"""A service that holds its lock but answers no control call within this is hung."""
_children: dict[int, subprocess.Popen[bytes]] = {}
"""Services this process started, reaped once they end (no zombie is left)."""


class ServiceError(Exception):
    """The local service cannot be used: one line that says why and what to do."""


@dataclass(frozen=True)
class Joined:
    """The running service a kernel joined, and whether this call started it."""

    file: ServiceFile
    started: bool

    @property
    def url(self) -> str:
        return self.file.url

    def describe(self) -> str:
        """``%load_ext nbext``'s word on it: started now, or running since when."""
        if self.started:
            return f"local service at {self.url} (started now; data in {self.file.db})"
        since = datetime.fromtimestamp(self.file.started_at).strftime("%Y-%m-%d %H:%M")
        return f"local service at {self.url} (running since {since})"


def client_settings(start: bool = True) -> dict[str, str]:
    """``api_key``, ``serverless_url`` and ``base_url`` of the user's service, for
    ``nbext.Client(**...)`` or the ``runpod`` SDK; starts it unless ``start`` is False."""
    joined = join(start=start)
    return {
        "api_key": joined.file.key,
        "serverless_url": f"{joined.url}/v2",
        "base_url": f"{joined.url}/v2",
    }


def join(*, start: bool = True, idle_stop: float | None = None) -> Joined:
    """The user's running service; started if there is none (unless ``start`` is False:
    then ServiceError). A file left by a dead service is removed and a new one started;
    one of another nbext version is restarted if idle, else refused in one line.

    ``idle_stop``: seconds of idleness after which a service started here stops (its
    default otherwise, or ``NBEXT_IDLE_STOP``)."""
    runtime = files.private_dir(files.runtime_dir())
    _reap()
    found = _running(runtime)
    if found is not None and found.build == files.build():
        return Joined(found, started=False)
    if not start:
        raise ServiceError("no local service runs: start one with `%runpod local start`")
    try:
        with files.starting(runtime, START_TIMEOUT_S):
            found = _running(runtime)  # another process may have started it meanwhile
            if found is not None and found.build != files.build():
                _replace_other_version(found)
                found = None
            if found is not None:
                return Joined(found, started=False)
            return Joined(_start(runtime, idle_stop), started=True)
    except TimeoutError as exc:
        raise ServiceError(f"the local service could not be started: {exc}") from None


def status() -> dict[str, Any] | None:
    """What the running service says of itself (``GET /_emulator/service``), or None."""
    found = _running(files.private_dir(files.runtime_dir()))
    return None if found is None else _call(found, "GET", "/_emulator/service")


def stop(timeout: float = 15.0) -> ServiceFile | None:
    """Stop the running service and wait for it to end; returns its file (None: none ran)."""
    runtime = files.private_dir(files.runtime_dir())
    found = _running(runtime)
    if found is None:
        return None
    _call(found, "POST", "/_emulator/service/stop")
    deadline = time.monotonic() + timeout
    while files.alive(runtime):
        if time.monotonic() > deadline:
            raise ServiceError(
                f"the local service (pid {found.pid}) did not stop within {timeout:.0f} s: "
                f"end it with `kill {found.pid}`"
            )
        time.sleep(0.02)
    _reap()
    return found


def restart() -> Joined:
    """Stop the running service (if any) and start a new one on the same data."""
    stop()
    return join()


def log_lines(count: int = 50) -> list[str]:
    """The last ``count`` lines of the service's log."""
    path = files.log_path(files.data_dir())
    if not path.exists():
        return []
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 256 * count))
        text = handle.read().decode("utf-8", "replace")
    return text.splitlines()[-count:]


def describe(info: dict[str, Any]) -> list[str]:
    """``%runpod local status``'s lines (and the command line's) from ``status()``."""
    started = datetime.fromtimestamp(info["startedAt"])
    ran = _duration(time.time() - info["startedAt"])
    idle = info.get("idleStopS") or 0
    busy = info.get("busy")
    return [
        f"local service: nbext {info['version']}, pid {info['pid']}, "
        f"running since {started:%Y-%m-%d %H:%M} ({ran})",
        f"address: {info['url']}",
        f"data: {info['db']}",
        f"log: {info['log']} (%runpod local log)",
        f"endpoints: {', '.join(info['endpoints']) or 'none'}",
        f"kernels using it: {len(info['kernels'])}",
        f"in flight: {busy}"
        if busy
        else "in flight: nothing"
        + (f"; it stops by itself after {_duration(idle)} with no call" if idle else ""),
    ]


def _running(runtime: Path) -> ServiceFile | None:
    """The live service's file; a file left by a dead one is removed (None). Its lock
    says it lives; whether it answers, the caller's first call says (a hung service is
    named with its process id, ``_call``)."""
    found = files.read(runtime)
    if not files.alive(runtime):
        if found is not None:
            with contextlib.suppress(FileNotFoundError):
                (runtime / "service.json").unlink()
        return None
    return found  # None: starting, its file is not written yet


def _start(runtime: Path, idle_stop: float | None) -> ServiceFile:
    data = files.private_dir(files.data_dir())
    log_file = files.log_path(data)
    command = [sys.executable, "-m", "nbext.emulator", "start", "--foreground"]
    if idle_stop is not None:
        command += ["--idle-stop", f"{idle_stop:g}"]
    with files.open_private(log_file) as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in the kernel, or its end, does not reach it
            cwd=data,
        )
    _children[process.pid] = process
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = files.read(runtime)
        if found is not None and found.pid == process.pid:
            return found
        if process.poll() is not None:
            last = next((line for line in reversed(log_lines(20)) if line.strip()), "")
            raise ServiceError(
                f"the local service could not start (exit code {process.returncode}): "
                f"{last.strip().removeprefix('error: ') or 'it printed nothing'}"
            )
        time.sleep(0.01)
    raise ServiceError(
        f"the local service did not start within {START_TIMEOUT_S:.0f} s; its log: {log_file}"
    )


def _replace_other_version(found: ServiceFile) -> None:
    """Stop a service of another nbext version if nothing runs on it; else say so."""
    info = _call(found, "GET", "/_emulator/service")
    others = [pid for pid in info.get("kernels", []) if pid != os.getpid()]
    if info.get("busy") or others:
        why = info.get("busy") or f"{len(others)} other kernels use it"
        other = (
            f"nbext {found.version} and this kernel has {__version__}"
            if found.version != __version__
            else f"other code of nbext {found.version} (changed since it started)"
        )
        raise ServiceError(
            f"the local service runs {other}; it is in use ({why}): run "
            "`%runpod local restart` once that is done"
        )
    stop()


def _call(found: ServiceFile, method: str, path: str) -> dict[str, Any]:
    try:
        answer = httpx.request(
            method,
            found.url + path,
            headers={"Authorization": f"Bearer {found.key}"},
            timeout=CALL_TIMEOUT_S,
            verify=False,  # plain HTTP on loopback: no certificate is ever read
        )
        answer.raise_for_status()
    except httpx.HTTPError as exc:
        raise ServiceError(
            f"the local service (pid {found.pid}) at {found.url} did not answer ({exc}): "
            f"restart it with `%runpod local restart`, or end it with `kill {found.pid}`"
        ) from None
    result: dict[str, Any] = answer.json() if answer.content else {}
    return result


def _reap() -> None:
    for pid, process in list(_children.items()):
        if process.poll() is not None:
            del _children[pid]


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min" if minutes else f"{int(seconds)} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"
