"""``python -m nbext.emulator`` as a subprocess on ``--port 0``, the way users start it.

The process runs on the real clock (a standalone server has no one to move a fake one),
so the webhook test uses a short ``--webhook-retry-delay`` and waits with a deadline.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator.__main__ import main

from ..standalone import emulator_environment
from .conftest import Receiver

URL = re.compile(r"export RUNPOD_ENDPOINT_BASE_URL=(http://127\.0\.0\.1:\d+/v2)")
KEY_LINE = re.compile(r"API key:\s+(\S+)")


class Cli:
    """A running ``python -m nbext.emulator``; its printed lines and its addresses."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nbext.emulator", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**emulator_environment(), "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            if URL.search(line):
                break
        self.output = "\n".join(self.lines)
        match = URL.search(self.output)
        if match is None:
            self.stop()
            raise AssertionError(f"the emulator did not start:\n{self.output}\n{self.stderr}")
        self.serverless_url = match.group(1)
        self.url = self.serverless_url.removesuffix("/v2")
        key = KEY_LINE.search(self.output)
        self.printed_key = key.group(1) if key else ""
        self.stderr = ""

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, self.stderr = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, self.stderr = self.proc.communicate()
        return self.proc.returncode


@pytest.fixture
def start() -> Iterator[Any]:
    started: list[Cli] = []

    def run(*args: str, cwd: Path | None = None) -> Cli:
        cli = Cli(*args, cwd=cwd)
        started.append(cli)
        return cli

    yield run
    for cli in started:
        cli.stop()


def run_to_exit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nbext.emulator", *args],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_it_prints_the_urls_and_a_generated_key_and_serves_the_demos(start: Any) -> None:
    cli = start()
    assert re.fullmatch(r"rpa_[0-9A-F]{40}", cli.printed_key)
    assert f"listening on {cli.url}" in cli.output
    assert f"management: {cli.url}/v2 (REST v2; REST v1 at {cli.url}/v1)" in cli.output
    demos = "echo, fail, image-gen, llm, llm-lb, sleep, stream-text, text-to-speech"
    assert f"endpoints:  {demos}" in cli.output
    assert f"load-balancing endpoints: {cli.url}/lb/{{endpoint_id}}/<path>" in cli.output
    with cli.client(cli.printed_key) as http:
        answer = http.post("/v2/echo/runsync", json={"input": {"hi": 1}})
        assert answer.json()["output"] == {"hi": 1}
        # Rate limits are on by default: /purge-queue allows 2 per 10 s.
        codes = [http.post("/v2/echo/purge-queue").status_code for _ in range(3)]
        assert codes == [200, 200, 429]
    with cli.client("rpa_WRONG") as http:
        assert http.get("/v2/echo/health").status_code == 401
    assert cli.stop() == 0  # SIGTERM stops it cleanly
    assert "Traceback" not in cli.stderr


def test_api_key_endpoints_and_no_rate_limit(start: Any, tmp_path: Path) -> None:
    handler_file = tmp_path / "my_handler.py"
    handler_file.write_text(
        "def handler(job):\n    return {'reversed': job['input']['text'][::-1]}\n"
    )
    key = "rpa_0123456789ABCDEF0123456789ABCDEF01234567"
    cli = start(
        "--api-key",
        key,
        "--no-rate-limit",
        "--endpoint",
        "words=stream-text",
        "--endpoint",
        f"mine={handler_file}:handler",
    )
    assert key not in cli.output and "rpa_…4567" in cli.output
    assert "endpoints:  mine, words" in cli.output
    with cli.client(key) as http:
        answer = http.post("/v2/mine/runsync", json={"input": {"text": "abc"}})
        assert answer.json()["output"] == {"reversed": "cba"}
        answer = http.post("/v2/words/runsync", json={"input": {"text": "a b"}})
        assert [c["text"] for c in answer.json()["output"]] == [["a"], [" b"]]
        assert http.get("/v2/echo/health").status_code == 404
        assert {http.post("/v2/words/purge-queue").status_code for _ in range(5)} == {200}
        listed = {e["id"]: e for e in http.get("/_emulator/endpoints").json()}
    # the console's defaults, in v2's words
    assert listed["mine"]["workers"] == {"min": 0, "max": 3, "idleTimeout": 5.0}
    assert listed["mine"]["executionTimeoutMs"] == 600_000
    assert listed["words"]["image"] == "stream-text"


def test_scenario_gives_an_endpoint_its_troubles(start: Any) -> None:
    cli = start(
        "--endpoint",
        "cold=echo",
        "--endpoint",
        "crash=echo",
        "--endpoint",
        "warm=echo",
        "--scenario",
        "cold=cold-start:seconds=600",
        "--scenario",
        "crash=crash-loop",
    )
    assert "scenarios:  cold: cold-start (seconds=600); crash: crash-loop" in cli.output
    with cli.client(cli.printed_key) as http:
        for endpoint_id in ("cold", "crash"):
            job_id = http.post(f"/v2/{endpoint_id}/run", json={"input": {}}).json()["id"]
            assert http.get(f"/v2/{endpoint_id}/status/{job_id}").json()["status"] == "IN_QUEUE"
        assert http.get("/v2/cold/health").json()["workers"]["initializing"] == 1
        assert http.get("/v2/crash/health").json()["workers"]["unhealthy"] == 1
        answer = http.post("/v2/warm/runsync", json={"input": {"ok": 1}}).json()
        assert answer["output"] == {"ok": 1}


def test_webhook_retry_delay_sets_the_time_between_attempts(start: Any) -> None:
    receiver = Receiver()
    receiver.answers = [500]
    try:
        cli = start("--api-key", "rpa_K", "--webhook-retry-delay", "0.3")
        with cli.client("rpa_K") as http:
            http.post("/v2/echo/run", json={"input": {}, "webhook": receiver.url()})
            deadline = time.monotonic() + 10
            while len(http.get("/_emulator/webhooks").json()) < 2:
                assert time.monotonic() < deadline, "the second webhook attempt never came"
                time.sleep(0.02)
            first, second = http.get("/_emulator/webhooks").json()
    finally:
        receiver.close()
    assert (first["status_code"], second["status_code"]) == (500, 200)
    assert 0.3 <= second["at"] - first["at"] < 5


def test_the_same_db_keeps_the_generated_key_and_jobs_across_restarts(
    start: Any, tmp_path: Path
) -> None:
    db = str(tmp_path / "emulator.db")
    first = start("--db", db)
    key = first.printed_key
    with first.client(key) as http:
        job_id = http.post("/v2/echo/runsync", json={"input": {"kept": True}}).json()["id"]
    assert first.stop() == 0
    second = start("--db", db)
    assert second.printed_key == key
    with second.client(key) as http:
        assert http.get(f"/v2/echo/status/{job_id}").json()["output"] == {"kept": True}


def test_a_port_in_use_gives_a_clear_error_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = run_to_exit("--port", port)
    assert result.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_argument_exits_non_zero_before_serving() -> None:
    result = run_to_exit("--port", "0", "--endpoint", "x=no-such-image")
    assert result.returncode == 2
    assert "error: --endpoint 'x=no-such-image': unknown image" in result.stderr
    assert "listening" not in result.stdout


# The remaining refusals happen before anything is served, so ``main`` runs in process.

BAD_ARGUMENTS = [
    (["--endpoint", "no-equals-sign"], "not of the form ID=IMAGE"),
    (["--endpoint", "x=no-such-image"], "unknown image 'no-such-image'; demo images are"),
    (["--endpoint", "x=/no/such/file.py:handler"], "handler file /no/such/file.py does not"),
    (["--endpoint", "x=file.py"], "not of the form path/to/file.py:function"),
    (["--endpoint", "bad id=echo"], "must be 1-64 letters"),
    (["--endpoint", "a=echo", "--endpoint", "a=fail"], "--endpoint a is given twice"),
    (["--port", "70000"], "argument --port: 70000 is not a port number"),
    (["--port", "eighty"], "argument --port: 'eighty' is not a port number"),
    (["--webhook-retry-delay", "-1"], "--webhook-retry-delay: -1 must be >= 0"),
    (["--webhook-retry-delay", "soon"], "'soon' is not a number of seconds"),
    (["--log-level", "loud"], "invalid choice: 'loud'"),
    (["--db", "/no/such/dir/e.db"], "--db /no/such/dir/e.db: unable to open"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--scenario", "echo"], "--scenario 'echo' is not of the form ID=NAME[:KEY=VALUE,...]"),
    (["--scenario", "echo=lukewarm"], "unknown scenario 'lukewarm'; the scenarios are cold-start"),
    (["--scenario", "echo=cold-start:seconds=-2"], "seconds must be a number >= 0, got '-2'"),
    (["--scenario", "echo=flaky:rate=1"], "'rate=1' is not a parameter of it (parameters: frac"),
    (["--scenario", "nowhere=crash-loop"], "no endpoint nowhere (endpoints: echo, fail,"),
    (
        ["--scenario", "echo=crash-loop", "--scenario", "echo=flaky"],
        "--scenario echo is given twice",
    ),
]


def exit_code_of(argv: list[str]) -> int:
    """``main(argv)``'s exit status, whether it returns one or argparse exits.

    It runs in a thread so that arguments wrongly accepted fail the test instead of
    serving forever: off the main thread ``main`` cannot install its signal handler.
    """
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["code"] = main(argv)
        except SystemExit as exc:
            result["code"] = exc.code
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), f"main({argv}) is still running"
    assert "error" not in result, f"main({argv}) served instead: {result.get('error')!r}"
    code: int = result["code"]
    return code


@pytest.mark.parametrize(("args", "message"), BAD_ARGUMENTS)
def test_bad_arguments_give_a_clear_error_and_a_non_zero_exit(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code_of(["--port", "0", *args]) == 2
    out, err = capsys.readouterr()
    assert message in err
    assert "Traceback" not in err and "listening" not in out


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def other(job):\n    return 1\n", "has no function named 'handler'"),
        ("handler = 42\n", "has no function named 'handler'"),
        ("def handler(job) return 1\n", "cannot import"),
        ("raise RuntimeError('model weights missing')\n", "model weights missing"),
    ],
)
def test_a_bad_handler_file_gives_a_clear_error(
    tmp_path: Path, source: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.py"
    path.write_text(source)
    assert exit_code_of(["--port", "0", "--endpoint", f"x={path}:handler"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
