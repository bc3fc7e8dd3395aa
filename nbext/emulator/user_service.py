"""The user's local service: one emulator process per user, shared by every kernel, its
state in SQLite (docs/behaviour.md#the-local-service). Loopback only; its key is handed
over in the 0600 ``service.json``, never on a command line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

from nbext._version import __version__
from nbext.service.files import (
    ServiceFile,
    build,
    data_dir,
    log_path,
    open_private,
    private_dir,
    remove,
    runtime_dir,
    try_lock,
    write,
)

from .domain.errors import StoreFailed
from .emulator import Emulator
from .server import EmulatorServer

IDLE_STOP_DEFAULT_S = 3 * 3600.0
"""Three hours: a lunch break or a long meeting does not reach it; a machine left for
the night gets its memory and its worker processes back."""
IDLE_CHECK_S = 30.0
"""How often idleness is checked, at most (a short setting is checked more often)."""


def serve(*, idle_stop: float = IDLE_STOP_DEFAULT_S) -> int:
    """Run the user's service in this process until it is stopped (SIGTERM, SIGINT,
    ``POST /_emulator/service/stop``) or idle for ``idle_stop`` seconds (0: never).
    Returns the exit code; a service already running is a one-line error (code 1)."""
    runtime = private_dir(runtime_dir())
    data = private_dir(data_dir())
    lock = open_private(runtime / "service.lock")
    if not try_lock(lock):
        print(
            f"error: a local service already runs (its file: {runtime / 'service.json'})",
            file=sys.stderr,
        )
        return 1
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    db = data / "service.db"
    try:
        emulator = Emulator(db=db)
    except (StoreFailed, sqlite3.Error) as exc:  # a damaged file: say which, and stop
        print(f"error: {db}: {exc}", file=sys.stderr)
        lock.close()
        return 2
    server: EmulatorServer | None = None
    stop = threading.Event()
    emulator.on_stop = stop.set
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server = _listen(emulator, data / "port")
        emulator.deploy_demos()
        file = ServiceFile(
            pid=os.getpid(),
            url=server.url,
            key=emulator.api_key,
            version=__version__,
            started_at=time.time(),
            db=str(db),
            log=str(log_path(data)),
            build=build(),
        )
        emulator.about = {
            "pid": file.pid,
            "version": file.version,
            "startedAt": file.started_at,
            "db": file.db,
            "log": file.log,
            "idleStopS": idle_stop,
        }
        write(runtime, file)
        print(f"nbext local service {__version__} on {server.url}, data in {db}", flush=True)
        _wait(emulator, stop, idle_stop)
    finally:
        remove(runtime, os.getpid())
        if server is not None:
            server.stop()
        emulator.close()
        lock.close()
    return 0


def _listen(emulator: Emulator, port_file: Path) -> EmulatorServer:
    """The server started on the port of the last run if it is free, else on any: after
    a restart, a client made before it (the same key comes from the database) still
    reaches it."""
    with contextlib.suppress(OSError, ValueError):
        return EmulatorServer(emulator, port=int(port_file.read_text())).start()
    server = EmulatorServer(emulator).start()
    port_file.write_text(str(server.port))
    return server


def _wait(emulator: Emulator, stop: threading.Event, idle_stop: float) -> None:
    """Until ``stop`` is set, or the service has been idle ``idle_stop`` seconds."""
    check = min(IDLE_CHECK_S, idle_stop / 4) if idle_stop else None
    while not stop.wait(check):
        quiet = time.monotonic() - emulator.last_call
        if quiet >= idle_stop and emulator.call_on_loop(emulator.busy) is None:
            logging.getLogger("nbext.emulator").warning(
                "stopping: no call and nothing in flight for %.0f s", quiet
            )
            return


def idle_stop(given: float | None) -> float:
    """The idle period: ``--idle-stop``, else ``NBEXT_IDLE_STOP``, else three hours."""
    if given is not None:
        return given
    text = os.environ.get("NBEXT_IDLE_STOP", "").strip()
    try:
        value = float(text) if text else IDLE_STOP_DEFAULT_S
    except ValueError:
        raise ValueError(f"NBEXT_IDLE_STOP={text!r} is not a number of seconds") from None
    if not value >= 0:
        raise ValueError(f"NBEXT_IDLE_STOP={text!r} must be >= 0 seconds")
    return value
