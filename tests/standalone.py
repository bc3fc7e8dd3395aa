"""The standalone emulator as a user runs it: a command, its banner, its ``export`` lines.

Shared by the banner tests and the README tests: both start ``python -m nbext.emulator``
in a subprocess, read the whole banner, and run scripts in a shell after the printed
``export`` lines, in an environment with no other ``RUNPOD_*`` variable and an empty
HOME (so no ``~/.runpod/config.toml``): exactly what a user pastes, and nothing more.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

EXPORT = re.compile(r"^\s*export (RUNPOD_\w+)=(\S+)$")
BANNER_END = "Ctrl-C stops"


class Standalone:
    """A running emulator server started by ``command`` (a shell command line)."""

    def __init__(self, command: str, *, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            ["sh", "-c", f"exec {command}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**emulator_environment(), "PYTHONUNBUFFERED": "1"},
        )
        assert self.proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith(BANNER_END):
                break
        self.banner = "\n".join(lines)
        self.export_lines = [line.strip() for line in lines if EXPORT.match(line)]
        self.exports = dict(m.groups() for line in lines if (m := EXPORT.match(line)))
        if "RUNPOD_REST_BASE_URL" not in self.exports:
            _, err = self.stop()
            raise AssertionError(f"no full banner from {command}:\n{self.banner}\n{err}")

    @classmethod
    def module(cls, *args: str) -> Standalone:
        """``python -m nbext.emulator --port 0 ARGS`` with this test run's Python."""
        return cls(" ".join([sys.executable, "-m", "nbext.emulator", "--port", "0", *args]))

    def stop(self) -> tuple[str, str]:
        """SIGTERM, as a service manager stops it; returns what it printed after."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.communicate()


def emulator_environment() -> dict[str, str]:
    """This process's environment without ``RUNPOD_API_KEY``, which the emulator would
    take as its key (a developer's own, say): each test says which key it starts with."""
    return {name: value for name, value in os.environ.items() if name != "RUNPOD_API_KEY"}


def clean_environment(home: Path) -> dict[str, str]:
    """This process's environment without RUNPOD_* or proxies, HOME an empty directory."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RUNPOD_")
        and name.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    }
    env["HOME"] = str(home)
    return env


def run_in_shell(
    export_lines: Sequence[str],
    command: str,
    *,
    home: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """``command`` run by ``sh`` after ``export_lines``, as pasted; its stdout."""
    result = subprocess.run(
        ["sh", "-c", "\n".join([*export_lines, command])],
        env={**clean_environment(home), **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def run_python_after(
    export_lines: Sequence[str], script: str, *, home: Path, cwd: Path | None = None
) -> str:
    """``script`` run by this test run's Python in a shell after ``export_lines``."""
    command = f'exec "{sys.executable}" -c "$SCRIPT"  # {script.strip().splitlines()[0]}'
    return run_in_shell(export_lines, command, home=home, cwd=cwd, env={"SCRIPT": script})
