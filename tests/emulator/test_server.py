"""``EmulatorServer``: a real uvicorn on 127.0.0.1 in a daemon thread.

``start()`` must return only once requests are answered (the first request after it
never needs a retry), ``port=0`` must give a free port, ``stop()`` must join the thread.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nbext.emulator import Emulator, EmulatorServer, FakeClock
from nbext.models import RUN_BODY_LIMIT, RUNSYNC_BODY_LIMIT

from .conftest import AUTH, KEY, deploy_demos


@pytest.fixture
def emulator(store_kind: str, tmp_path: Path) -> Iterator[Emulator]:
    db = tmp_path / "server.db" if store_kind == "sqlite" else None
    emu = Emulator(api_key=KEY, clock=FakeClock(), db=db)
    deploy_demos(emu)
    yield emu
    emu.close()


@pytest.fixture
def server(emulator: Emulator) -> Iterator[EmulatorServer]:
    with EmulatorServer(emulator) as running:
        yield running


def test_start_returns_once_requests_are_answered(emulator: Emulator) -> None:
    server = EmulatorServer(emulator).start()
    try:
        response = httpx.get(f"{server.serverless_url}/echo/health", headers=AUTH, timeout=5)
        assert response.status_code == 200
    finally:
        server.stop()


def test_port_0_gives_a_free_port_on_loopback(server: EmulatorServer) -> None:
    assert server.port != 0
    assert server.url == f"http://127.0.0.1:{server.port}"
    assert server.serverless_url == f"{server.url}/v2"
    assert server.base_url == f"{server.url}/v2"  # management: REST v2, as the service
    second = Emulator(api_key=KEY)
    with EmulatorServer(second) as other:
        assert other.port != server.port
    second.close()


def test_a_port_in_use_is_refused_saying_which(server: EmulatorServer) -> None:
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{server.port}"):
        EmulatorServer(Emulator(api_key=KEY), port=server.port).start()


def test_stop_joins_the_thread_and_closes_the_port(emulator: Emulator) -> None:
    server = EmulatorServer(emulator).start()
    port = server.port
    assert server.running
    server.stop()
    assert not server.running
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_the_port_is_only_known_once_started(emulator: Emulator) -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = EmulatorServer(emulator).port


def test_repr_masks_the_key(server: EmulatorServer) -> None:
    text = repr(server)
    assert KEY not in text and "rpa_…EF42" in text and server.url in text


def test_jobs_run_and_time_moves_through_the_server(server: EmulatorServer) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as http:
        job_id = http.post("/v2/sleep/run", json={"input": {"seconds": 5}}).json()["id"]
        assert http.get(f"/v2/sleep/status/{job_id}").json()["status"] == "IN_PROGRESS"
        http.post("/_emulator/clock/advance", json={"seconds": 5})
        body = http.get(f"/v2/sleep/status/{job_id}").json()
        assert body["output"] == {"slept": 5}
        assert http.post("/v2/echo/runsync", json={"input": {"a": 1}}).json()["output"] == {"a": 1}


def test_the_notebook_thread_can_drive_the_servers_emulator(server: EmulatorServer) -> None:
    """``deploy``, ``register_image`` and ``advance`` from another thread reach the loop."""

    async def hello(job: dict[str, object]) -> object:
        return "hello"

    server.emulator.register_image("hello:1", hello)
    server.emulator.deploy("hello:1", endpoint_id="hello")
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as http:
        job_id = http.post("/v2/sleep/run", json={"input": {"seconds": 3}}).json()["id"]
        server.emulator.advance(3)
        assert http.get(f"/v2/sleep/status/{job_id}").json()["status"] == "COMPLETED"
        assert http.post("/v2/hello/runsync", json={"input": {}}).json()["output"] == "hello"


@pytest.mark.parametrize(
    ("route", "limit"), [("run", RUN_BODY_LIMIT), ("runsync", RUNSYNC_BODY_LIMIT)]
)
def test_an_oversized_body_is_refused_from_its_content_length_before_it_is_sent(
    server: EmulatorServer, route: str, limit: int
) -> None:
    """Only the headers go out; the 413 must come back without the body being read."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(
            (
                f"POST /v2/echo/{route} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {limit + 1}\r\n\r\n"
            ).encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert b"MB limit of this operation; nothing was queued" in body
    assert server.emulator.jobs.jobs == {}
