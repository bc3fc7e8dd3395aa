"""The standalone emulator's key off the command line: from ``RUNPOD_API_KEY`` (what
the banner's ``export`` sets) or from a file, never shown whole in the banner nor
visible to other local users in ``ps``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import httpx
import pytest

from nbext.emulator.__main__ import main

from ..standalone import Standalone

KEY = "rpa_0123456789ABCDEF0123456789ABCDEF0123ABCD"


def python_emulator(*args: str, env: str = "") -> Standalone:
    """``python -m nbext.emulator --port 0 ARGS``, with ``env`` (``NAME=VALUE``) set for it."""
    command = [sys.executable, "-m", "nbext.emulator", "--port", "0", *args]
    prefix = f"env -u RUNPOD_API_KEY {env} " if env else "env -u RUNPOD_API_KEY "
    return Standalone(prefix + " ".join(shlex.quote(part) for part in command))


def answers(server: Standalone, key: str) -> int:
    url = server.exports["RUNPOD_ENDPOINT_BASE_URL"] + "/echo/health"
    return httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code


def command_line(server: Standalone) -> str:
    return Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_the_key_from_the_environment_is_used_and_masked() -> None:
    server = python_emulator(env=f"RUNPOD_API_KEY={KEY}")
    try:
        assert KEY not in server.banner
        assert "API key:    rpa_…ABCD (from RUNPOD_API_KEY)" in server.banner
        assert "RUNPOD_API_KEY" not in server.exports  # asked for, not printed
        assert "export RUNPOD_API_KEY=<the key from RUNPOD_API_KEY>" in server.banner
        assert answers(server, KEY) == 200
        assert answers(server, KEY[:-1] + "E") == 401
        assert KEY not in command_line(server)
    finally:
        server.stop()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_the_key_from_a_file_wins_over_the_environment(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    server = python_emulator("--api-key-file", str(key_file), env="RUNPOD_API_KEY=rpa_OTHER")
    try:
        assert KEY not in server.banner
        assert f"rpa_…ABCD (read from --api-key-file {key_file})" in server.banner
        assert f"export RUNPOD_API_KEY=<the key read from --api-key-file {key_file}>" in (
            server.banner
        )
        assert answers(server, KEY) == 200
        assert answers(server, "rpa_OTHER") == 401
        assert KEY not in command_line(server)
    finally:
        server.stop()


def test_without_a_key_anywhere_a_new_one_is_printed() -> None:
    server = python_emulator()
    try:
        key = server.exports["RUNPOD_API_KEY"]
        assert f"API key:    {key}\n" in server.banner
        assert answers(server, key) == 200
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read it: No such file or directory"),
        ("", "is empty: put the key in it, on one line"),
        ("  \n\n", "is empty: put the key in it, on one line"),
        ("rpa_A\nrpa_B\n", "holds more than a key"),
    ],
)
def test_a_key_file_that_holds_no_usable_key_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    expected: str,
) -> None:
    key_file = tmp_path / "key"
    if content is not None:
        key_file.write_text(content)
    assert main(["--port", "0", "--api-key-file", str(key_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --api-key-file {key_file}")
    assert expected in err and len(err.strip().splitlines()) == 1


def test_a_key_on_the_command_line_and_in_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--api-key", KEY, "--api-key-file", str(tmp_path / "key")])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
