"""The service's own Python SDK (``runpod``) against a real ``EmulatorServer``.

The SDK reads ``RUNPOD_ENDPOINT_BASE_URL`` at import time (``runpod.endpoint_url_base``)
and configures the root logger when imported, so it runs in a subprocess of its own
(``sdk_agent.py``) started with that variable pointing at the emulator. The test process
keeps the emulator and its fake clock, and moves the clock while an SDK call waits.

The SDK sleeps one real second between polls in ``output(timeout)`` and ``stream()``;
those tests take a second or two by the SDK's design, not the emulator's.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nbext.emulator import Emulator, EmulatorServer, FakeClock

from .conftest import KEY, STORES, deploy_demos

AGENT = Path(__file__).with_name("sdk_agent.py")


class Agent:
    """The SDK in a subprocess: ``call(op, **args)`` sends one command and returns its answer."""

    def __init__(self, serverless_url: str, home: Path) -> None:
        self.stderr = (home / "agent.err").open("w+")
        env = {
            **os.environ,
            "RUNPOD_ENDPOINT_BASE_URL": serverless_url,
            "SDK_AGENT_API_KEY": KEY,
            "HOME": str(home),  # no ~/.runpod/config.toml of the machine's user
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(AGENT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            env=env,
        )
        self.answers: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.receive(60) == "ready"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(line)

    def send(self, op: str, **args: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> Any:
        try:
            answer = json.loads(self.answers.get(timeout=timeout))
        except queue.Empty:
            self.stderr.seek(0)
            raise AssertionError(f"the SDK did not answer in time:\n{self.stderr.read()}") from None
        if "error" in answer:
            raise SDKError(answer["error"], answer["message"])
        return answer["ok"]

    def call(self, op: str, **args: Any) -> Any:
        self.send(op, **args)
        return self.receive()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class SDKError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@pytest.fixture(scope="module", params=STORES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmulatorServer]:
    db = tmp_path_factory.mktemp("sdk") / "e.db" if request.param == "sqlite" else None
    emu = Emulator(api_key=KEY, clock=FakeClock(), db=db)
    deploy_demos(emu)
    with EmulatorServer(emu) as running:
        yield running
    emu.close()


@pytest.fixture(scope="module")
def agent(server: EmulatorServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    sdk = Agent(server.serverless_url, tmp_path_factory.mktemp("sdk-home"))
    yield sdk
    sdk.close()


@pytest.fixture
def emu(server: EmulatorServer) -> Emulator:
    """The server's emulator, with no jobs or rate-limit history left by another test."""
    server.emulator.reset()
    return server.emulator


def until(emu: Emulator, condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` on the emulator's loop (its state lives there) for up to 10 s."""
    deadline = time.monotonic() + 10
    while not emu.call_on_loop(condition):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def waiting_requests(emu: Emulator, job_id: str) -> Callable[[], bool]:
    """True once a request (``/runsync``, ``/stream``) is held open on the job."""
    return lambda: job_id in emu.jobs.jobs and bool(emu.jobs.jobs[job_id].signal._waiters)


def test_the_sdk_reads_the_base_url_from_the_environment(
    agent: Agent, server: EmulatorServer
) -> None:
    assert agent.call("base_url") == server.serverless_url


def test_run_and_status(agent: Agent, emu: Emulator) -> None:
    job_id = agent.call("run", endpoint="held", request={"input": {"x": 1}})
    assert emu.call_on_loop(lambda: emu.jobs.jobs[job_id].input) == {"x": 1}
    assert agent.call("status", job=job_id) == "IN_QUEUE"
    running = agent.call("run", endpoint="sleep", request={"seconds": 30})  # bare input
    assert agent.call("status", job=running) == "IN_PROGRESS"


def test_output_of_a_finished_job(agent: Agent, emu: Emulator) -> None:
    job_id = agent.call("run", endpoint="echo", request={"input": {"hello": "sdk"}})
    until(emu, lambda: emu.jobs.jobs[job_id].status.is_final, "the echo job")
    assert agent.call("output", job=job_id, timeout=5) == {"hello": "sdk"}
    assert agent.call("status", job=job_id) == "COMPLETED"


def test_output_waits_for_the_job_to_end(agent: Agent, emu: Emulator) -> None:
    job_id = agent.call("run", endpoint="sleep", request={"input": {"seconds": 3}})
    agent.send("output", job=job_id, timeout=10)

    def polled() -> bool:  # the SDK has asked /status at least once (the rate log says)
        return bool(emu.rate_limiter._log.get(("sleep", "status")))

    until(emu, polled, "the SDK to poll /status")
    emu.advance(3)
    assert agent.receive() == {"slept": 3}


def test_output_gives_up_after_its_timeout(agent: Agent, emu: Emulator) -> None:
    job_id = agent.call("run", endpoint="held", request={"input": {}})
    with pytest.raises(SDKError) as raised:
        agent.call("output", job=job_id, timeout=1)
    assert raised.value.kind == "TimeoutError"


def test_run_sync_returns_the_output(agent: Agent, emu: Emulator) -> None:
    assert agent.call("run_sync", endpoint="echo", request={"input": {"n": 5}}, timeout=30) == {
        "n": 5
    }


def test_run_sync_is_answered_as_soon_as_the_job_ends(agent: Agent, emu: Emulator) -> None:
    agent.send("run_sync", endpoint="sleep", request={"input": {"seconds": 4}}, timeout=30)

    def held_runsync() -> bool:
        return any(j.sync and j.signal._waiters for j in emu.jobs.jobs.values())

    until(emu, held_runsync, "the /runsync request to wait on its job")
    emu.advance(4)
    assert agent.receive() == {"slept": 4}


def test_stream_of_a_finished_job_yields_every_chunk(agent: Agent, emu: Emulator) -> None:
    text = "the quick brown fox"
    job_id = agent.call("run", endpoint="stream", request={"input": {"text": text}})
    until(emu, lambda: emu.jobs.jobs[job_id].status.is_final, "the stream job")
    outputs = agent.call("stream", job=job_id)
    assert "".join(piece for output in outputs for piece in output["text"]) == text
    assert [o["output_tokens"] for o in outputs] == [1, 2, 3, 4]


@pytest.mark.slow
def test_stream_follows_a_running_job_chunk_by_chunk(agent: Agent, emu: Emulator) -> None:
    text = "one two three"
    request = {"input": {"text": text, "delay_ms": 1000}}
    job_id = agent.call("run", endpoint="stream", request=request)
    agent.send("stream", job=job_id)
    for _ in range(3):  # each /stream call waits for the next chunk, which the clock brings
        until(emu, waiting_requests(emu, job_id), "the SDK's /stream call to wait")
        emu.advance(1)
    outputs = agent.receive()
    assert "".join(piece for output in outputs for piece in output["text"]) == text


def test_cancel(agent: Agent, emu: Emulator) -> None:
    job_id = agent.call("run", endpoint="sleep", request={"input": {"seconds": 60}})
    assert agent.call("cancel", job=job_id) == {"id": job_id, "status": "CANCELLED"}
    assert agent.call("status", job=job_id) == "CANCELLED"
    emu.advance(60)
    assert emu.call_on_loop(lambda: emu.jobs.jobs[job_id].status.value) == "CANCELLED"


def test_health(agent: Agent, emu: Emulator) -> None:
    agent.call("run", endpoint="sleep", request={"input": {"seconds": 60}})
    agent.call("run_sync", endpoint="sleep", request={"input": {"seconds": 0}}, timeout=30)
    assert agent.call("health", endpoint="sleep") == {
        "jobs": {"completed": 1, "failed": 0, "inProgress": 1, "inQueue": 0, "retried": 0},
        "workers": {
            "idle": 1,
            "running": 1,
            "initializing": 0,
            "ready": 2,
            "throttled": 0,
            "unhealthy": 0,
        },
    }


def test_purge_queue(agent: Agent, emu: Emulator) -> None:
    ids = [agent.call("run", endpoint="held", request={"input": {}}) for _ in range(3)]
    assert agent.call("purge_queue", endpoint="held") == {"removed": 3, "status": "completed"}
    assert emu.call_on_loop(lambda: [i for i in ids if i in emu.jobs.jobs]) == []


def test_a_wrong_key_is_the_sdks_unauthorized_error(agent: Agent, emu: Emulator) -> None:
    with pytest.raises(SDKError) as raised:
        agent.call("health", endpoint="echo", key="rpa_WRONG")
    assert raised.value.kind == "RuntimeError" and "401 Unauthorized" in raised.value.message
