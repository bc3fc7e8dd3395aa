"""Real worker scripts, using the official ``runpod`` package, against a real emulator.

Each test serves an ``Emulator`` on 127.0.0.1 with ``EmulatorServer`` and deploys one of
the scripts in ``scripts/`` with ``deploy_worker``: the script runs unmodified in its own
process, as on the service. Waiting is always a bounded poll of a condition (``until``),
never a sleep for time; the bounds are generous, since a worker's cold start (importing
the SDK) takes seconds on a loaded machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from nbext.emulator import Emulator, EmulatorServer

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
SCRIPTS = Path(__file__).parent / "scripts"
COLD_START_S = 60.0
"""Bound for a worker to start and finish a first job (far above what it takes)."""

T = TypeVar("T")


def until(condition: Callable[[], T], timeout: float = COLD_START_S, what: str = "") -> T:
    """Poll ``condition`` until it returns something truthy, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
        time.sleep(0.02)


@contextlib.contextmanager
def standalone(
    *args: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m nbext.emulator --port 0 ARGS`` (with ``env``, else this process's):
    the process and its URL once it listens; stopped with SIGTERM (then SIGKILL) after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=None if env is None else dict(env),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        yield proc, line.split("listening on ")[1].strip()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Served:
    """A running emulator and a client for its endpoints."""

    def __init__(self, emulator: Emulator, server: EmulatorServer) -> None:
        self.emulator = emulator
        self.server = server
        self.http = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120
        )
        self.deployed: list[str] = []

    def deploy(self, script: str, **kw: Any) -> str:
        endpoint_id = self.emulator.deploy_worker(SCRIPTS / script, **kw)
        self.deployed.append(endpoint_id)
        return endpoint_id

    def run(self, endpoint: str, data: dict[str, Any], **extra: Any) -> str:
        r = self.http.post(f"/v2/{endpoint}/run", json={"input": data, **extra})
        assert r.status_code == 200, r.text
        job_id: str = r.json()["id"]
        return job_id

    def status(self, endpoint: str, job_id: str) -> dict[str, Any]:
        r = self.http.get(f"/v2/{endpoint}/status/{job_id}")
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def final(self, endpoint: str, job_id: str, timeout: float = COLD_START_S) -> dict[str, Any]:
        """The job's result once it ended (``/status-sync`` waits on the emulator)."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.http.get(f"/v2/{endpoint}/status-sync/{job_id}", params={"wait": 5000})
            assert r.status_code == 200, r.text
            body: dict[str, Any] = r.json()
            if body["status"] not in ("IN_QUEUE", "IN_PROGRESS"):
                return body
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} did not end within {timeout} s: {body}")

    def health(self, endpoint: str) -> dict[str, Any]:
        body: dict[str, Any] = self.http.get(f"/v2/{endpoint}/health").json()
        return body

    def pids(self) -> list[int]:
        """The worker processes of the endpoints this test deployed."""
        supervisor = self.emulator._supervisor
        if supervisor is None:
            return []
        return [pid for ep in self.deployed for pid in supervisor.pids(ep)]


def _serve() -> tuple[Emulator, EmulatorServer]:
    emulator = Emulator(api_key=KEY, rate_limit=False, demo_images=False)
    return emulator, EmulatorServer(emulator).start()


@pytest.fixture(scope="module")
def shared_server() -> Iterator[tuple[Emulator, EmulatorServer]]:
    """One emulator for a module's tests: stopping one waits for its workers to exit
    (the SDK takes about a second), so tests share it and each removes its endpoints."""
    emulator, server = _serve()
    try:
        yield emulator, server
    finally:
        server.stop()
        emulator.close()


@pytest.fixture
def served(shared_server: tuple[Emulator, EmulatorServer]) -> Iterator[Served]:
    """The shared emulator; the test's endpoints are deleted after it, which stops their
    workers while the next test goes on."""
    emulator, server = shared_server
    served = Served(emulator, server)
    try:
        yield served
    finally:
        for endpoint_id in served.deployed:
            emulator.undeploy(endpoint_id)


@pytest.fixture
def own_server() -> Iterator[Served]:
    """An emulator of the test's own, for tests that stop it."""
    emulator, server = _serve()
    try:
        yield Served(emulator, server)
    finally:
        server.stop()
        emulator.close()
