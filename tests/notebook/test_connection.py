"""Which service the kernel talks to: %load_ext's one line, the local service (a private
emulator when the notebook hands one in), ``%runpod connect`` and ``status``, and
notebook functions deployed as endpoints."""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import nbext
from nbext.emulator import DEMOS
from nbext.notebook import Connection, NotebookError, current, deploy, set_current
from nbext.service import files
from tests.conftest import Folders

from .conftest import KEY, Notebook
from .test_job_magic import usage_error

CLOUD_KEY = "rpa_CL0UDKEY0000111122223333444455556666ABCD"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No key anywhere: not in the environment, not in ~/.runpod/config.toml."""
    for name in (
        "RUNPOD_API_KEY",
        "RUNPOD_API_BASE_URL",
        "RUNPOD_ENDPOINT_BASE_URL",
        "RUNPOD_REST_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    previous = set_current(None)
    yield tmp_path
    connection = set_current(previous)
    if connection is not None:
        connection.close()


def load_ext(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``%load_ext nbext`` in the shell; the lines it printed."""
    shell.extension_manager.loaded.discard("nbext")
    capsys.readouterr()
    shell.run_line_magic("load_ext", "nbext")
    lines = capsys.readouterr().out.splitlines()
    shell.run_line_magic("unload_ext", "nbext")
    return lines


LOCAL = re.compile(
    r"nbext: local service at http://127\.0\.0\.1:\d+ "
    r"\((started now; data in .+|running since \d{4}-\d\d-\d\d \d\d:\d\d)\)"
)


def test_load_ext_without_a_key_says_which_local_service_it_joined(
    shell: InteractiveShell, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (line,) = load_ext(shell, capsys)
    assert LOCAL.fullmatch(line), line
    (again,) = load_ext(shell, capsys)  # a second kernel, or the same after a restart
    assert LOCAL.fullmatch(again) and "running since" in again, again


def test_load_ext_with_a_key_in_the_environment(
    shell: InteractiveShell,
    clean_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    lines = load_ext(shell, capsys)
    assert lines == [
        "nbext: RunPod cloud at https://api.runpod.ai/v2, key rpa_…ABCD from RUNPOD_API_KEY"
    ]


def test_load_ext_with_the_services_config_file(
    shell: InteractiveShell, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = clean_env / ".runpod" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[default]\napi_key = "{CLOUD_KEY}"\n')
    (line,) = load_ext(shell, capsys)
    assert line.startswith("nbext: RunPod cloud at https://api.runpod.ai/v2, key rpa_…ABCD from ")
    assert str(config) in line and CLOUD_KEY not in line


def test_load_ext_with_a_bad_configuration_says_so_in_one_line(
    shell: InteractiveShell,
    clean_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNPOD_API_BASE_URL", "http://127.0.0.1:9/v1")  # meant for REST
    shell.extension_manager.loaded.discard("nbext")
    capsys.readouterr()
    result = shell.run_cell("%load_ext nbext", store_history=False)
    err = capsys.readouterr().err
    assert result.error_in_exec is not None and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line.startswith("UsageError: nbext: ") and "RUNPOD_REST_BASE_URL" in line, line
    monkeypatch.delenv("RUNPOD_API_BASE_URL")  # fixed: the extension loads
    (line,) = load_ext(shell, capsys)
    assert LOCAL.fullmatch(line), line


def test_load_ext_keeps_any_emulators_log_out_of_cells(
    shell: InteractiveShell, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A notebook's own emulator (a FakeClock one, say) logs a failed handler's traceback;
    with the extension loaded that goes nowhere near a cell's stderr, as for the embedded
    one, whether or not a command has started the embedded emulator yet."""
    logger, root = logging.getLogger("nbext.emulator"), logging.getLogger()
    saved = logger.handlers[:], root.handlers[:]
    # As in a kernel: no handler anywhere (pytest's own capture sits on the root logger),
    # so without one of ours Python's last-resort handler would print to stderr.
    logger.handlers.clear()
    root.handlers.clear()
    try:
        load_ext(shell, capsys)
        logger.error("handler of endpoint broken failed:\nTraceback ...")
        assert capsys.readouterr().err == ""
    finally:
        logger.handlers[:], root.handlers[:] = saved


def test_the_first_command_joins_the_local_service_which_outlives_the_connection(
    clean_env: Path,
) -> None:
    connection = Connection()
    assert connection.mode == "local"
    assert "joined on the first command" in "\n".join(connection.status_lines())
    try:
        service = connection.service()
        assert not connection.private and service.joined is not None
        assert service.serverless_url.startswith("http://127.0.0.1:")
        info = service.control("GET", "/_emulator/service")
        assert set(info["endpoints"]) >= set(DEMOS)
        assert info["kernels"] == [os.getpid()]  # the pids of the kernels that joined
        result = service.client.endpoint("echo").run_sync({"hello": "world"})
        assert result.output == {"hello": "world"}
        assert LOCAL.fullmatch(connection.banner())
        pid = service.joined.file.pid
    finally:
        connection.close()
    runtime = files.runtime_dir()
    assert files.alive(runtime) and files.read(runtime).pid == pid  # it runs on
    again = Connection()
    try:
        assert again.service().control("GET", "/_emulator/service")["kernels"] == [os.getpid()]
    finally:
        again.close()


def test_status(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("%runpod status")
    assert "service: the local service; joined on the first command" in capsys.readouterr().out
    nb.run('%%runpod_job echo -q\n{"a": 1}')
    nb.run("%runpod status")
    out = capsys.readouterr().out
    assert out.startswith("service: a private emulator, in this kernel\n")
    assert f"jobs URL: {nb.server.serverless_url}" in out
    assert f"management URL: {nb.server.url}/v2" in out
    assert "API key: rpa_…EF42 (generated by the local service)" in out
    assert "clock: real" in out
    assert (
        "endpoints: echo, fail, image-gen, llm, llm-lb, sleep, stream-text, text-to-speech" in out
    )
    assert "jobs submitted from this kernel: 1" in out
    assert KEY not in out


def test_connect_cloud_needs_a_key(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_error(nb, "%runpod connect cloud", capsys)
    assert message.startswith("connect: no API key configured: run `%runpod login`")
    assert usage_error(nb, "%runpod connect moon", capsys).startswith("argument target")


def test_connect_cloud_reads_a_key_set_after_start(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = Connection()
    assert connection.mode == "local"
    with pytest.raises(NotebookError, match="no API key configured"):
        connection.connect("cloud")
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    try:
        service = connection.connect("cloud")
        assert service.describe() == (
            "RunPod cloud at https://api.runpod.ai/v2 (key rpa_…ABCD from RUNPOD_API_KEY)"
        )
    finally:
        connection.close()


def test_connect_switches_services(
    shell: InteractiveShell, nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    connection = Connection(server=nb.server, api_key=CLOUD_KEY, environ={})
    assert connection.mode == "local"  # a handed emulator wins
    nb.magics.connection = connection
    try:
        nb.run("%runpod connect cloud")
        assert capsys.readouterr().out.strip() == (
            "nbext: RunPod cloud at https://api.runpod.ai/v2 (key rpa_…ABCD from argument)"
        )
        nb.run("%runpod status")
        out = capsys.readouterr().out
        assert "service: RunPod cloud" in out and "API key: rpa_…ABCD (from argument)" in out
        assert CLOUD_KEY not in out
        nb.run("def handler(job):\n    return 1")
        message = usage_error(nb, "%runpod deploy handler", capsys)
        assert "connected to the RunPod cloud" in message and "%runpod connect local" in message
        with pytest.raises(NotebookError, match="connect local"):
            deploy(print, "p", connection=connection)
        nb.run("%runpod connect local")
        assert capsys.readouterr().out.startswith("nbext: private emulator at http://127.0.0.1:")
        nb.run("%runpod status")
        assert "cloud key available: rpa_…ABCD" in capsys.readouterr().out
    finally:
        connection.close()


def test_deploy_a_notebook_function(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    def double(job: dict[str, Any]) -> dict[str, Any]:
        return {"doubled": job["input"]["x"] * 2}

    assert deploy(double, workers={"max": 2}, connection=nb.conn) == "double"
    nb.run('%%runpod_job double -o out\n{"x": 21}')
    assert nb.shell.user_ns["out"] == {"doubled": 42}

    def double_v2(job: dict[str, Any]) -> dict[str, Any]:
        return {"doubled": job["input"]["x"] * 2, "version": 2}

    deploy(double_v2, "double", workers={"max": 2}, connection=nb.conn)  # the cell re-run, edited
    nb.run('%%runpod_job double -o out\n{"x": 1}')
    assert nb.shell.user_ns["out"] == {"doubled": 2, "version": 2}
    health = nb.conn.client.endpoint("double").health()
    assert health.jobs.completed == 2  # same endpoint: its counters went on
    assert nb.emu.jobs.endpoints["double"].workers_max == 2


def test_deploy_command(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("def shout(job):\n    return job['input']['text'].upper()")
    nb.run("%runpod deploy shout --name loud --workers-max 2 --execution-timeout 30")
    assert "deployed shout as endpoint 'loud'" in capsys.readouterr().out
    endpoint = nb.emu.jobs.endpoints["loud"]
    assert endpoint.workers_max == 2 and endpoint.execution_timeout_ms == 30_000
    nb.run('%%runpod_job loud -o out\n{"text": "hey"}')
    assert nb.shell.user_ns["out"] == "HEY"
    nb.run("%runpod status")
    assert "loud" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("setup", "line", "expected"),
    [
        ("", "%runpod deploy nothing", "no 'nothing' in the notebook's namespace"),
        ("x = 3", "%runpod deploy x", "'x' is an int, not a function"),
        ("def f(job): return 1", "%runpod deploy f --name 'bad id!'", "must be 1-64 letters"),
    ],
)
def test_deploy_mistakes(
    nb: Notebook, capsys: pytest.CaptureFixture[str], setup: str, line: str, expected: str
) -> None:
    if setup:
        nb.run(setup)
    assert expected in usage_error(nb, line, capsys)


def test_deploy_from_python_checks_its_arguments(nb: Notebook) -> None:
    with pytest.raises(TypeError, match="deploy needs a function"):
        deploy(3, "x", connection=nb.conn)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pass name="):
        deploy(lambda job: 1, connection=nb.conn)


def test_nbext_exports_deploy_lazily(nb: Notebook) -> None:
    assert nbext.deploy is deploy
    assert current() is nb.conn
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = nbext.nothing  # type: ignore[attr-defined]


def test_the_key_scan_catches_a_leak(nb: Notebook) -> None:
    """The check every test of this package ends with can fail: it sees these leaks."""
    from .conftest import assert_no_key

    with pytest.raises(AssertionError, match="printed"):
        assert_no_key(nb, f"oops {KEY}")
    nb.shell.user_ns["leak"] = {"nested": [f"Bearer {KEY}"]}
    with pytest.raises(AssertionError, match="in the namespace as 'leak'"):
        assert_no_key(nb, "")
    del nb.shell.user_ns["leak"]
    nb.displays.append({"data": {"text/plain": KEY}, "update": False})
    with pytest.raises(AssertionError, match="displayed"):
        assert_no_key(nb, "")
    nb.displays.pop()


def test_a_killed_service_is_replaced_before_the_next_cell(
    shell: InteractiveShell,
    clean_env: Path,
    folders: Folders,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """kill -9 of the service between two cells: the next cell reaches a new one on the
    same data, at once, and the job done before is still there."""
    shell.extension_manager.loaded.discard("nbext")
    shell.run_line_magic("load_ext", "nbext")
    try:
        result = shell.run_cell('%%runpod_job echo -q -o before\n{"kept": 1}')
        result.raise_error()
        job_id = list(current().registry)[-1].id
        first = folders.service_file()
        os.kill(first.pid, signal.SIGKILL)
        os.waitpid(first.pid, 0)  # this process started it: reaped, so its lock is gone
        started = time.monotonic()
        shell.run_cell('%%runpod_job echo -q -o after\n{"n": 2}').raise_error()
        assert time.monotonic() - started < 10
        assert shell.user_ns["after"] == {"n": 2}
        assert folders.service_file().pid != first.pid
        kept = current().client.endpoint("echo").job(job_id).status()
        assert kept.output == {"kept": 1}
        shell.run_line_magic("runpod", "local status")
        assert f"pid {folders.service_file().pid}" in capsys.readouterr().out
    finally:
        shell.run_line_magic("unload_ext", "nbext")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_a_key_with_a_loopback_url_is_a_local_emulator_not_the_cloud(
    shell: InteractiveShell,
    clean_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    host: str,
) -> None:
    """A standalone emulator (``python -m nbext.emulator``) reached with a key and
    RUNPOD_ENDPOINT_BASE_URL: the banner and ``%runpod status`` name it as what it is."""
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", f"http://{host}:8765/v2")
    shell.extension_manager.loaded.discard("nbext")
    capsys.readouterr()
    shell.run_line_magic("load_ext", "nbext")
    try:
        shell.run_line_magic("runpod", "status")
    finally:
        shell.run_line_magic("unload_ext", "nbext")
    banner, *status = capsys.readouterr().out.splitlines()
    assert banner.startswith(f"nbext: a local emulator at http://{host}:8765/v2, key rpa_…ABCD")
    assert f"service: a local emulator at http://{host}:8765/v2" in status
    assert "cloud" not in banner + "".join(status).replace("RUNPOD_", "")


def test_runpod_local_restart_log_and_stop(
    shell: InteractiveShell,
    clean_env: Path,
    folders: Folders,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The service's controls from a cell; its own log never reaches a cell."""
    shell.extension_manager.loaded.discard("nbext")
    shell.run_line_magic("load_ext", "nbext")
    try:
        first = folders.service_file().pid
        shell.run_cell('%%runpod_job fail -q --no-raise\n{"message": "boom"}').raise_error()
        shell.run_line_magic("runpod", "local restart")
        out = capsys.readouterr()
        assert "Traceback" not in out.out + out.err  # the service's log stays in its file
        assert "started now" in out.out and folders.service_file().pid != first
        shell.run_cell('%%runpod_job echo -q -o back\n{"n": 1}').raise_error()
        assert shell.user_ns["back"] == {"n": 1}  # the kernel follows the new service
        shell.run_line_magic("runpod", "local log -n 200")
        assert "boom" in capsys.readouterr().out  # the failed handler, in the service's log
        shell.run_line_magic("runpod", "local stop")
        assert capsys.readouterr().out.startswith("stopped the local service (pid ")
        shell.run_line_magic("runpod", "local status")
        assert capsys.readouterr().out.startswith("no local service runs")
    finally:
        shell.run_line_magic("unload_ext", "nbext")
