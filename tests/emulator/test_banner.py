"""The standalone emulator's banner: its ``export`` lines, pasted into a shell as printed.

With those lines and nothing else in the environment (no ``RUNPOD_*``, an empty HOME),
a script using ``nbext.Client()`` and one using runpod-python's ``runpod.Endpoint`` run
unchanged against the emulator, management calls included. Both scripts run in a
shell in a subprocess, after the printed lines, so what is tested is what a user pastes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

EXPORT = re.compile(r"^\s*export (RUNPOD_\w+)=(\S+)$")


class Standalone:
    """``python -m nbext.emulator --port 0 ARGS``, its whole banner read."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nbext.emulator", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C stops"):
                break
        self.banner = "\n".join(lines)
        self.export_lines = [line.strip() for line in lines if EXPORT.match(line)]
        self.exports = dict(m.groups() for line in lines if (m := EXPORT.match(line)))
        if "RUNPOD_REST_BASE_URL" not in self.exports:
            self.stop()
            raise AssertionError(f"no full banner:\n{self.banner}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def standalone() -> Iterator[Standalone]:
    server = Standalone()
    yield server
    server.stop()


def run_after_exports(export_lines: list[str], script: str, home: Path) -> str:
    """``script`` run by Python in a shell that first ran ``export_lines``, as pasted."""
    clean = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RUNPOD_")
        and name.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    }
    clean["HOME"] = str(home)  # no ~/.runpod/config.toml to fall back on
    shell = "\n".join([*export_lines, f'exec "{sys.executable}" -c "$SCRIPT"'])
    result = subprocess.run(
        ["sh", "-c", shell],
        env={**clean, "SCRIPT": script},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_banner_exports_the_key_and_both_interfaces(standalone: Standalone) -> None:
    exports = standalone.exports
    assert set(exports) == {
        "RUNPOD_API_KEY",
        "RUNPOD_ENDPOINT_BASE_URL",
        "RUNPOD_REST_BASE_URL",
    }
    assert re.fullmatch(r"rpa_[0-9A-F]{40}", exports["RUNPOD_API_KEY"])
    base = re.fullmatch(r"(http://127\.0\.0\.1:\d+)/v2", exports["RUNPOD_ENDPOINT_BASE_URL"])
    assert base is not None
    assert exports["RUNPOD_REST_BASE_URL"] == base.group(1) + "/v1"
    assert "RUNPOD_API_BASE_URL" not in standalone.banner  # the SDK's GraphQL host


def test_nbext_client_runs_unchanged_on_the_exports(standalone: Standalone, tmp_path: Path) -> None:
    script = """
from nbext import Client
with Client() as client:
    print(client.endpoint("echo").run_sync({"hello": "world"}).output)
    template = client.templates.create(name="from-banner", image_name="example/image:1.0")
    print(template.name)
"""
    out = run_after_exports(standalone.export_lines, script, tmp_path)
    assert out.splitlines() == ["{'hello': 'world'}", "from-banner"]
    # the template is on this emulator, not anywhere else
    exports = standalone.exports
    with httpx.Client(
        headers={"Authorization": f"Bearer {exports['RUNPOD_API_KEY']}"}, timeout=10
    ) as http:
        names = [t["name"] for t in http.get(exports["RUNPOD_REST_BASE_URL"] + "/templates").json()]
    assert "from-banner" in names


def test_the_service_sdk_runs_unchanged_on_the_exports(
    standalone: Standalone, tmp_path: Path
) -> None:
    """The SDK's own idiom: the key from the environment, the job URL read on import."""
    script = """
import os
import runpod
runpod.api_key = os.getenv("RUNPOD_API_KEY")
endpoint = runpod.Endpoint("echo")
print(endpoint.run_sync({"hello": "world"}))
print(endpoint.run({"n": 1}).output(timeout=30))
"""
    out = run_after_exports(standalone.export_lines, script, tmp_path)
    assert out.splitlines()[-2:] == ["{'hello': 'world'}", "{'n': 1}"]


def test_a_given_key_is_never_printed() -> None:
    key = "rpa_0123456789ABCDEF0123456789ABCDEF01234567"
    server = Standalone("--api-key", key)
    try:
        assert key not in server.banner
        assert "API key:    rpa_…4567" in server.banner
        assert "RUNPOD_API_KEY" not in server.exports  # asked for, no value to misuse
        assert "export RUNPOD_API_KEY=<the key given with --api-key>" in server.banner
    finally:
        server.stop()
