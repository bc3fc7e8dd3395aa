"""``make lab`` as the README says: it serves JupyterLab for any user, root included.

JupyterLab refuses to run as root unless told ``--allow-root``, and root is who runs a
Docker container, a cloud VM or a CI shell; ``LAB_ARGS`` passes any other flag. The
install step is taken as done (``-o``) so the test never reinstalls the environment.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
STAMP = ".venv/.nbext-installed"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", STAMP, target, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def fake_id(tmp_path: Path, uid: int) -> dict[str, str]:
    """An environment whose ``id -u`` answers ``uid``: root and non-root on one machine."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "id"
    script.write_text(f"#!/bin/sh\necho {uid}\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_lab_allows_root_only_for_root_and_passes_lab_args(tmp_path: Path) -> None:
    as_root = dry_run("lab", "LAB_ARGS=--no-browser --port 8899", env=fake_id(tmp_path, 0))
    assert "jupyter lab --notebook-dir=notebooks --allow-root --no-browser --port 8899" in as_root
    (tmp_path / "user").mkdir()
    as_user = dry_run("lab", env=fake_id(tmp_path / "user", 1000))
    assert "jupyter lab --notebook-dir=notebooks" in as_user
    assert "--allow-root" not in as_user


def test_emulator_args_are_passed() -> None:
    assert "-m nbext.emulator --port 8001" in dry_run("emulator", "EMULATOR_ARGS=--port 8001")


def test_check_is_the_suite_without_the_browser_the_guides_binder_or_slow_tests() -> None:
    """What ``make check`` collects, asked of pytest itself (in one process, ``-n 0``)."""
    listing = "PYTEST_ARGS=-n 0 --collect-only -q -p no:cacheprovider"
    result = subprocess.run(
        ["make", "--no-print-directory", "-o", STAMP, "check", listing],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert len(items) > 1000, result.stdout[-2000:]
    files = {item.split("::")[0] for item in items}
    assert "tests/test_makefile.py" in files and "tests/client/test_jobs.py" in files
    left_out = ("tests/e2e/", "tests/binder/", "notebooks/", "tests/media/test_gallery_in")
    # the browser harness's own rules need no browser, and stay
    assert [f for f in files if f.startswith(left_out)] == ["tests/e2e/test_harness.py"]
    assert not [i for i in items if i.startswith("tests/emulator/v2/test_conformance.py")]
    assert "-n 2" in dry_run("check")  # two processes when it runs for real


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.slow
@pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "jupyter").exists(),
    reason="make lab runs .venv/bin/jupyter; this run's environment is elsewhere",
)
def test_make_lab_serves(tmp_path: Path) -> None:
    """The real command, as whoever runs the suite (root on CI and in containers)."""
    port = free_port()
    token = "nbext-make-lab-test"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    proc = subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "-o",
            STAMP,
            "lab",
            f"LAB_ARGS=--no-browser --ip=127.0.0.1 --port={port} "
            f"--ServerApp.token={token} --ServerApp.port_retries=0",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = httpx.get(
                    f"http://127.0.0.1:{port}/api/status", params={"token": token}, timeout=5
                )
                break
            except httpx.TransportError:
                time.sleep(0.5)
        assert status is not None, f"make lab did not serve (exit {proc.poll()})"
        assert status.status_code == 200
        lab = httpx.get(f"http://127.0.0.1:{port}/lab", params={"token": token}, timeout=10)
        assert lab.status_code == 200 and "JupyterLab" in lab.text
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
    assert "Running as root is not recommended" not in output
