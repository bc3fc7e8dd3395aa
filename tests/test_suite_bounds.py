"""The suite cannot hang: a test that never ends fails with its name and stack, and the
run goes on, even when the run was started with SIGINT ignored (``nohup``, CI runners).

The inner run uses this project's own pytest configuration (``-c pyproject.toml``) with
only the limit lowered, so a change to the configured mechanism is what this catches.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HANGS = """
import threading


def test_waits_forever():
    threading.Event().wait()  # nothing ever sets it


def test_after_it():
    assert True
"""


def test_the_configured_limit_leaves_room_for_the_slowest_test() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    limit = options["ini_options"]["timeout"]
    assert 120 <= limit <= 600, limit  # the slowest legitimate test takes about a minute


def test_a_hung_test_fails_with_its_name_and_stack_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text(HANGS)
    config = ["-c", str(ROOT / "pyproject.toml"), "-o", "timeout=2", "--rootdir", str(tmp_path)]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *config, "-p", "no:cacheprovider", "-q", "test_hangs.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 1 passed" in out, out
    assert "FAILED test_hangs.py::test_waits_forever - Failed: Timeout" in out, out
    assert "threading.Event().wait()" in out, out  # where it hung, from its stack


def test_every_slow_entry_names_a_test_that_exists() -> None:
    """A renamed test drops out of ``SLOW`` silently and lands in ``make check``'s time;
    so each entry must name a module, or a test defined in it."""
    from tests.conftest import SLOW

    stale = []
    for entry in SLOW:
        module, _, name = entry.partition("::")
        path = ROOT / module
        if not path.is_file() or (name and f"def {name}(" not in path.read_text()):
            stale.append(entry)
    assert stale == []
