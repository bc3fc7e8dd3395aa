"""Worker scripts as processes: start them, keep their logs, restart them, stop them all.

A worker is a process group, signalled whole: the SDK starts a heartbeat process of its
own (docs/workers.md#processes-and-the-endpoints-settings).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import functools
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..domain.balancer import Balancer
from ..domain.remote_workers import RemoteWorker, RemoteWorkers
from ..domain.worker_output import LINE_BYTES, WorkerOutput
from .environment import worker_environment

log = logging.getLogger("nbext.emulator.workers")

POLL_S = 0.1
"""How often processes are checked for an exit."""
GRACE_S = 3.0
"""Seconds a stopped worker has to exit after SIGTERM before its group gets SIGKILL."""
SKIP_BYTES = 65_536
"""Piece size in which the part of a long line past ``LINE_BYTES`` is read and dropped."""
PING_INTERVAL_MS = 1000
"""The SDK counts its ping interval in whole seconds: one second is the shortest."""
PROBE_STARTING_S = 0.2
"""How often a load-balancing worker's health path is polled until it is ready: a
request waiting through its cold start is routed within this much of its first 200."""
PROBE_READY_S = 1.0
"""How often once it is ready (or unhealthy): a change is seen within a second."""
PROBE_TIMEOUT_S = 2.0
"""A health answer slower than this counts as none yet."""
SERVER_AFTER_S = 5.0
"""A queue worker's process that listens on a TCP port and has not called the emulator
this long after it started is an HTTP server deployed without ``load_balancer``: the
SDK calls within a second or two."""


@dataclass(frozen=True)
class WorkerScript:
    """What a pool's processes run: a script, with an interpreter."""

    path: Path
    python: str = field(default_factory=lambda: sys.executable)
    env: tuple[tuple[str, str], ...] = ()
    """The endpoint's environment variables (as a template's ``env``): with the few the
    worker needs to run, the only ones it gets besides the protocol's."""
    load_balancer: bool = False
    """An HTTP server on ``PORT`` (a load-balancing endpoint's), not a job-taking worker."""
    args: tuple[str, ...] = ()
    """Its launch arguments (a container's command's, after the script)."""


PREFIX_SITE = str(Path(__file__).with_name("prefix_site"))
"""First on a load-balancing worker's ``PYTHONPATH``: its ``sitecustomize`` has uvicorn
honour ``X-Forwarded-Prefix``, so an app's ``/docs`` works under ``/lb/ID/``."""

OFFLINE = {"RUNPOD_SKIP_AUTO_SYSTEM_CHECKS": "true"}
"""Defaults a worker gets unless its endpoint's ``env`` says otherwise: the SDK's fitness
checks reach a public DNS server at start, and offline it exits before it takes a job
(docs/workers.md#the-workers-environment)."""


def worker_env(base_url: str, endpoint_id: str, worker: RemoteWorker) -> dict[str, str]:
    """The variables that put the ``runpod`` SDK in worker mode against the emulator."""
    api = f"{base_url}/v2/{endpoint_id}"
    query = "?gpu=emulated"
    return {
        "RUNPOD_WEBHOOK_GET_JOB": f"{api}/job-take/$ID{query}",
        "RUNPOD_WEBHOOK_POST_OUTPUT": f"{api}/job-done/$RUNPOD_POD_ID/$ID{query}",
        "RUNPOD_WEBHOOK_POST_STREAM": f"{api}/job-stream/$RUNPOD_POD_ID/$ID{query}",
        "RUNPOD_WEBHOOK_PING": f"{api}/ping/$RUNPOD_POD_ID",
        "RUNPOD_PING_INTERVAL": str(PING_INTERVAL_MS),
        "RUNPOD_AI_API_KEY": worker.key,
        "RUNPOD_SKIP_GPU_CHECK": "true",
        **_identity(endpoint_id, worker),
    }


def _identity(endpoint_id: str, worker: RemoteWorker) -> dict[str, str]:
    """What every worker is told of itself, a queue one's and a load-balancing one's."""
    return {
        "RUNPOD_POD_ID": worker.id,
        "RUNPOD_POD_HOSTNAME": worker.id,
        "RUNPOD_ENDPOINT_ID": endpoint_id,
        "PYTHONUNBUFFERED": "1",
    }


def lb_worker_env(
    endpoint_id: str, worker: RemoteWorker, endpoint_env: dict[str, str]
) -> dict[str, str]:
    """A load-balancing worker's variables (docs/workers.md#load-balancing-workers): no job
    protocol and no key, since it takes no jobs. Every worker of the machine shares its
    ports, so the emulator chooses them (a free one each)."""
    worker.port = _free_port()
    separate = endpoint_env.get("PORT_HEALTH", endpoint_env.get("PORT"))
    worker.health_port = _free_port() if separate != endpoint_env.get("PORT") else worker.port
    return {
        "PORT": str(worker.port),
        "PORT_HEALTH": str(worker.health_port),
        "HEALTH_CHECK_PATH": endpoint_env.get("HEALTH_CHECK_PATH") or "/ping",
        **_identity(endpoint_id, worker),
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def probe(port: int, path: str) -> int | None:
    """The status ``GET path`` answers on 127.0.0.1:``port``; None: nothing listens, or
    no answer within ``PROBE_TIMEOUT_S``."""
    writer = None
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
            )
            line = await reader.readline()
        parts = line.split()
        return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 502
    except (OSError, TimeoutError):
        return None
    finally:
        if writer is not None:
            writer.close()


def listening_port(pid: int) -> int | None:
    """A TCP port process ``pid`` listens on: its socket descriptors found among the
    listening sockets of ``/proc/PID/net/tcp``, ``tcp6`` (Linux); None: none, or no
    ``/proc`` to tell by."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:  # another system, or it exited (a descriptor closed while read)
        return None
    inodes = {link[8:-1] for link in links if link.startswith("socket:[")}
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/net/{table}") as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    return int(fields[1].rpartition(":")[2], 16)
    return None


@dataclass(eq=False)
class _Process:
    worker: RemoteWorker
    popen: subprocess.Popen[bytes]
    kill_at: float | None = None
    probe_at: float = 0.0
    """When its health path is polled next (a load-balancing worker's)."""
    probing: bool = False
    started: float = field(default_factory=time.monotonic)


class Supervisor:
    """The processes of every worker-script endpoint of one emulator."""

    def __init__(
        self,
        workers: RemoteWorkers,
        base_url: Callable[[], str],
        managed_env: Callable[[str], dict[str, str]],
        balancer: Balancer,
    ) -> None:
        self.workers = workers
        self.balancer = balancer
        self.base_url = base_url
        """The emulator's server, read at each launch: one started anew may listen elsewhere."""
        self.managed_env = managed_env
        """An endpoint's ``env`` as the management interface has it (its template's
        included), read at each launch: a change reaches the processes started after."""
        self.scripts: dict[str, WorkerScript] = {}
        self.logs = workers.output
        self._procs: dict[str, _Process] = {}
        self._failed: list[RemoteWorker] = []
        self._task: asyncio.Task[None] | None = None
        _live.add(self)

    def add(self, endpoint_id: str, script: WorkerScript) -> None:
        """Serve ``endpoint_id`` with ``script``; call on the emulator's loop. A server
        (a load-balancing endpoint's) is routed to by the balancer, told its health path."""
        self.scripts[endpoint_id] = script
        if script.load_balancer:
            env = {**self.managed_env(endpoint_id), **dict(script.env)}
            self.balancer.add(endpoint_id, env.get("HEALTH_CHECK_PATH"))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())
        body = self.balancer if script.load_balancer else None
        self.workers.add_pool(endpoint_id, self, body)

    # ---- Launcher --------------------------------------------------------------------

    def launch(self, worker: RemoteWorker) -> None:
        endpoint_id = worker.endpoint_id
        script = self.scripts[endpoint_id]
        endpoint_env = {**OFFLINE, **self.managed_env(endpoint_id), **dict(script.env)}
        if script.load_balancer:
            protocol = lb_worker_env(endpoint_id, worker, endpoint_env)
        else:
            protocol = worker_env(self.base_url(), endpoint_id, worker)
        env = worker_environment(os.environ, script.python, endpoint_env, protocol)
        if script.load_balancer:  # uvicorn told the /lb/ID/ prefix (prefix_site/)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [PREFIX_SITE, env.get("PYTHONPATH")]))
        command = [script.python, str(script.path), *script.args]
        self.logs.write(endpoint_id, worker.id, f"--- starting {shlex.join(command)}", "system")
        try:
            popen = subprocess.Popen(
                command,
                cwd=script.path.parent,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            self.logs.write(endpoint_id, worker.id, f"--- cannot start: {exc}", "system")
            log.error("worker %s of %s cannot start: %s", worker.id, endpoint_id, exc)
            self._failed.append(worker)  # reported as an exit by the next pass
            return
        self._procs[worker.id] = _Process(worker, popen)
        threading.Thread(
            target=_pump,
            args=(popen, self.logs, endpoint_id, worker.id),
            name=f"nbext-log-{worker.id}",
            daemon=True,
        ).start()

    def terminate(self, worker: RemoteWorker) -> None:
        proc = self._procs.get(worker.id)
        if proc is None or proc.kill_at is not None:
            return
        _signal_group(proc.popen, signal.SIGTERM)
        proc.kill_at = time.monotonic() + GRACE_S

    # ---- watching --------------------------------------------------------------------

    async def _watch(self) -> None:
        while True:
            try:
                self.check()
            except Exception:  # never let one bad pass stop supervision
                log.exception("worker supervision failed")
            await asyncio.sleep(POLL_S)

    def check(self) -> None:
        """One pass: report exits, kill overdue processes, drop removed endpoints' pools."""
        now = time.monotonic()
        failed, self._failed = self._failed, []
        for worker in failed:
            self._exited(worker, "could not be started")
        for worker_id, proc in list(self._procs.items()):
            code = proc.popen.poll()
            if code is None:
                if proc.kill_at is not None and now >= proc.kill_at:
                    _signal_group(proc.popen, signal.SIGKILL)
                elif (port := proc.worker.health_port) is None:  # a queue worker
                    if proc.worker.contacted_at is None and now >= max(
                        proc.probe_at, proc.started + SERVER_AFTER_S
                    ):
                        self._serves_http(proc, now)
                elif not proc.probing and now >= proc.probe_at:
                    proc.probing = True
                    asyncio.get_running_loop().create_task(self._probe(proc, port))
                continue
            _signal_group(proc.popen, signal.SIGKILL)  # its heartbeat process, if left
            del self._procs[worker_id]
            self._exited(proc.worker, _exit_text(code))
        self.workers.reconcile()

    async def _probe(self, proc: _Process, port: int) -> None:
        """Poll a load-balancing worker's health path once and tell the balancer."""
        worker = proc.worker
        path = self.balancer.endpoints[worker.endpoint_id].health_path
        try:
            status = await probe(port, path)
            if proc.kill_at is None:
                self.balancer.health(worker, status, path)
            pace = PROBE_READY_S if worker.domain.ready else PROBE_STARTING_S
            proc.probe_at = time.monotonic() + pace
        finally:
            proc.probing = False

    def _serves_http(self, proc: _Process, now: float) -> None:
        """A queue worker that never called but listens is a server: say how to deploy it."""
        worker = proc.worker
        proc.probe_at = now + PROBE_READY_S
        if (port := listening_port(proc.popen.pid)) is None:
            return
        proc.probe_at = float("inf")  # told once
        why = (
            f"it serves HTTP on port {port} and never asks for a job: an HTTP server is "
            "deployed as a load-balancing endpoint (%runpod deploy --load-balancer, "
            'nbext.deploy(..., type="LOAD_BALANCER"), --lb-worker)'
        )
        self.logs.write(worker.endpoint_id, worker.id, f"--- {why}", "system")
        self.workers.start_failed(worker, why)

    def _exited(self, worker: RemoteWorker, how: str) -> None:
        self.logs.write(worker.endpoint_id, worker.id, f"--- exited ({how})", "system")
        if not worker.stopping:
            log.warning("worker %s of %s exited (%s)", worker.id, worker.endpoint_id, how)
        self.workers.exited(worker, how)

    def stop_all(self, timeout: float = GRACE_S) -> None:
        """Stop every worker process and wait for them (from any thread)."""
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed already
                task.get_loop().call_soon_threadsafe(task.cancel)
        procs = list(self._procs.values())
        for proc in procs:
            _signal_group(proc.popen, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(max(0.0, deadline - time.monotonic()))
            _signal_group(proc.popen, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(1.0)

    def pids(self, endpoint_id: str | None = None) -> list[int]:
        """Process ids of the running workers (of one endpoint, when given)."""
        return [
            p.popen.pid
            for p in self._procs.values()
            if endpoint_id is None or p.worker.endpoint_id == endpoint_id
        ]


def _parent_death_signal() -> Callable[[], None] | None:
    """On Linux, what the child runs before the script: ask for SIGTERM when the thread
    that started it ends, so that a kernel or emulator killed outright (no ``atexit``)
    leaves no worker behind polling a server that is gone. libc is loaded here, in the
    parent: between fork and exec the child must take no lock (no import, no loading)."""
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return functools.partial(prctl, 1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG: 1


_die_with_parent = _parent_death_signal()


def _pump(
    popen: subprocess.Popen[bytes], output: WorkerOutput, endpoint_id: str, worker_id: str
) -> None:
    assert popen.stdout is not None
    with popen.stdout:
        for kept, cut in read_lines(popen.stdout):
            output.write(endpoint_id, worker_id, kept.decode("utf-8", "replace"), cut=cut)


def read_lines(stream: IO[bytes]) -> Iterator[tuple[bytes, int]]:
    """Each line of ``stream`` (without its newline) as its first ``LINE_BYTES`` and the
    count of bytes after them, which are read in pieces and dropped: a 200 MB line never
    sits whole in the emulator's memory, as iterating over the pipe would put it."""
    while True:
        raw = stream.readline(LINE_BYTES + 1)
        if not raw:
            return
        if raw.endswith(b"\n"):
            yield raw[:-1], 0
            continue
        if len(raw) <= LINE_BYTES:  # the last line, without a newline
            yield raw, 0
            return
        cut = len(raw) - LINE_BYTES
        while piece := stream.readline(SKIP_BYTES):
            if piece.endswith(b"\n"):
                cut += len(piece) - 1
                break
            cut += len(piece)
        yield raw[:LINE_BYTES], cut


def _signal_group(popen: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, sig)  # start_new_session: its group id is its pid


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


_live: weakref.WeakSet[Supervisor] = weakref.WeakSet()


@atexit.register
def _stop_everything() -> None:
    """No worker outlives the interpreter that started it."""
    for supervisor in list(_live):
        supervisor.stop_all(timeout=1.0)
