"""Where the user's local service lives on disk, and the one file that finds it
(docs/behaviour.md#the-local-service): ``service.lock`` is held for the service's life,
so a stale file is told from a live one without trusting a reused process id. Only the
standard library: a kernel finds its service without importing the emulator.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

FORMAT = 1
"""Version of ``service.json``'s layout."""


class ServiceFileError(Exception):
    """A folder or file of the service that is not the user's own, or unreadable: one line."""


def data_dir() -> Path:
    if os.environ.get("NBEXT_DATA_DIR"):
        return Path(os.environ["NBEXT_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "nbext"


def runtime_dir() -> Path:
    if os.environ.get("NBEXT_RUNTIME_DIR"):
        return Path(os.environ["NBEXT_RUNTIME_DIR"])
    if os.environ.get("XDG_RUNTIME_DIR") and Path(os.environ["XDG_RUNTIME_DIR"]).is_dir():
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "nbext"
    return data_dir() / "runtime"


def private_dir(path: Path) -> Path:
    """``path`` made if missing, 0700; refused if another user owns it (their service)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise ServiceFileError(
            f"{path} belongs to another user (uid {info.st_uid}): set NBEXT_RUNTIME_DIR and "
            "NBEXT_DATA_DIR to folders of your own"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


@dataclass(frozen=True)
class ServiceFile:
    """What ``service.json`` says of the running service."""

    pid: int
    url: str
    """``http://127.0.0.1:PORT``: jobs and management under ``/v2``."""
    key: str
    version: str
    started_at: float
    """Unix time the service started."""
    db: str
    log: str
    build: str = ""
    """``build()`` of the nbext that started it."""
    format: int = FORMAT


@functools.cache
def build() -> str:
    """A fingerprint of this nbext's code (its files' names, sizes and times): a service
    started from other code (an upgrade, an edited checkout) is told apart from one of
    this code even when both say the same version."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(package)} {info.st_size} {info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def service_file(folder: Path) -> Path:
    return folder / "service.json"


def read(folder: Path) -> ServiceFile | None:
    """The service file in ``folder``, or None when there is none or it is half written
    (a service writes it atomically, so that is one from a format we do not know)."""
    path = service_file(folder)
    try:
        info = path.stat()
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if info.st_uid != os.getuid():
        raise ServiceFileError(f"{path} belongs to another user (uid {info.st_uid})")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        return ServiceFile(**data)
    except TypeError:
        return None


def write(folder: Path, service: ServiceFile) -> None:
    """Replace ``service.json`` at once (0600 from its first byte): a reader sees the old
    file or the new one, never half of either."""
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".service-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp's mode is 0600
            json.dump(asdict(service), out)
        os.replace(temporary, service_file(folder))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def remove(folder: Path, pid: int) -> None:
    """Remove ``service.json`` if it still names ``pid`` (a newer service's is kept)."""
    current = read(folder)
    if current is not None and current.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            service_file(folder).unlink()


def open_private(path: Path) -> IO[Any]:
    """``path`` opened for appending (made 0600 if new; a log, a lock)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")


def try_lock(handle: IO[Any]) -> bool:
    """Take ``handle``'s exclusive lock if it is free; False when a process holds it.

    The kernel drops such a lock with the process, whatever ends it (kill -9, a crash),
    which is what makes it the proof that a service is alive."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def alive(folder: Path) -> bool:
    """Whether a service holds ``service.lock`` in ``folder`` right now."""
    path = folder / "service.lock"
    if not path.exists():
        return False
    with open_private(path) as handle:
        return not try_lock(handle)


@contextlib.contextmanager
def starting(folder: Path, timeout: float) -> Iterator[None]:
    """Hold ``start.lock``: whoever starts a service does it alone, and the others wait
    for it (at most ``timeout`` seconds: TimeoutError) and then join what it started."""
    deadline = time.monotonic() + timeout
    with open_private(folder / "start.lock") as handle:
        while not try_lock(handle):
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"another process has been starting the service for {timeout:.0f} s"
                )
            time.sleep(0.02)
        yield


def log_path(folder: Path) -> Path:
    """The service's log, in its data folder: what it prints, and its workers' errors."""
    return folder / "service.log"
