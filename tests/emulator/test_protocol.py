"""The server's HTTP protocol over raw sockets: deadlines, the connection cap, and what
must keep working with them (``100 Continue``, pipelining).

Before the deadline, a request never finished (half its headers, a body that never
ends) held its connection open for good; thousands of them piled up. The deadline is
the loop's real time, so these tests give the server a short one and wait, bounded, for
the socket to close, never a fixed sleep.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from nbext.client import Client, NbextError
from nbext.emulator import Emulator, EmulatorServer

from .conftest import KEY, deploy_demos

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(api_key=KEY)
    deploy_demos(emu)
    with EmulatorServer(emu, request_timeout=0.5, max_connections=8) as running:
        yield running
    emu.close()


def read_response(sock: socket.socket, buffer: bytes = b"") -> tuple[bytes, bytes, bytes]:
    """One response (head, body) off a keep-alive socket, and what came after it."""
    while b"\r\n\r\n" not in buffer:
        buffer += receive(sock)
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        rest += receive(sock)
    return head, rest[:length], rest[length:]


def receive(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    assert data, "the server closed the connection"
    return data


def post(path: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    ).encode()


def test_100_continue_reaches_a_client_that_waits_for_it(server: EmulatorServer) -> None:
    body = json.dumps({"input": {"n": 1}}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(post("/v2/echo/runsync", body, "Expect: 100-continue\r\n"))
        interim = b""
        while b"\r\n\r\n" not in interim:
            interim += receive(sock)
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        head, answer, _ = read_response(sock, interim.partition(b"\r\n\r\n")[2])
    assert head.startswith(b"HTTP/1.1 200")
    assert json.loads(answer)["output"] == {"n": 1}


def test_keep_alive_answers_pipelined_requests_in_order(server: EmulatorServer) -> None:
    bodies = [json.dumps({"input": {"n": i}}).encode() for i in range(5)]
    big = json.dumps({"input": {"blob": "y" * (128 * 1024)}}).encode()
    requests = [post("/v2/echo/runsync", b) + b for b in [*bodies, big]]
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"".join(requests))
        rest = b""
        outputs = []
        for _ in requests:
            head, answer, rest = read_response(sock, rest)
            assert head.startswith(b"HTTP/1.1 200"), head
            outputs.append(json.loads(answer)["output"])
    assert outputs[:5] == [{"n": i} for i in range(5)]
    assert outputs[5] == {"blob": "y" * (128 * 1024)}


def closed_within(sock: socket.socket, seconds: float) -> bytes:
    """Everything the server sent before closing ``sock``; fails if it stays open."""
    sock.settimeout(seconds)
    got = b""
    try:
        while data := sock.recv(65536):
            got += data
    except TimeoutError:
        raise AssertionError(f"still open after {seconds} s; got {got!r}") from None
    except ConnectionResetError:
        pass
    return got


@pytest.mark.parametrize(
    "partial",
    [
        b"",  # connected, and silent
        b"POST /v2/echo/runsync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le",  # half the headers
    ],
)
def test_a_request_not_sent_whole_in_time_gets_408(server: EmulatorServer, partial: bytes) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(partial)
        answer = closed_within(sock, 10)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout"), answer
    assert b"not sent whole within 0.5 s" in answer


def test_a_body_that_never_ends_closes_its_connection(server: EmulatorServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(post("/v2/echo/run", b"x" * 100) + b'{"input": {')
        closed_within(sock, 10)
    assert http_get(server, "/v2/echo/requests").startswith(b"HTTP/1.1 200"), (
        "the server stopped answering"
    )


def test_the_deadline_is_per_request_on_a_keep_alive_connection(server: EmulatorServer) -> None:
    body = json.dumps({"input": {"n": 1}}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        for _ in range(3):  # each whole request is answered; a fresh deadline for the next
            sock.sendall(post("/v2/echo/runsync", body) + body)
            head, answer, _ = read_response(sock)
            assert head.startswith(b"HTTP/1.1 200") and json.loads(answer)["output"] == {"n": 1}


def test_connections_over_the_cap_are_refused_at_once_with_a_503(server: EmulatorServer) -> None:
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
    try:
        # every one of the 8 is served (the 8th proves the cap is not off by one)
        body = json.dumps({"input": {}}).encode()
        held[-1].sendall(post("/v2/echo/runsync", body) + body)
        assert read_response(held[-1])[0].startswith(b"HTTP/1.1 200")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
            answer = closed_within(extra, 10)  # sending nothing: answered, then closed
        assert answer.startswith(b"HTTP/1.1 503 ")
        assert b"the emulator refused this connection: it serves at most 8 at once" in answer
        jobs = len(server.emulator.jobs.jobs)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
            extra.sendall(post("/v2/echo/run", body) + body)  # its request: read, not run
            head, answer, _ = read_response(extra)
        assert head.startswith(b"HTTP/1.1 503 ") and b"connection: close" in head
        assert json.loads(answer)["error"].endswith("the request was not run")
        assert len(server.emulator.jobs.jobs) == jobs
    finally:
        for sock in held:
            sock.close()
    # once they are gone, new connections are served again
    deadline = 50
    while deadline and not http_get(server, "/v2/echo/health").startswith(b"HTTP/1.1 200"):
        deadline -= 1
    assert deadline, "new connections were not served after the others closed"


def test_the_kernels_call_says_the_emulator_refused_the_connection(
    server: EmulatorServer,
) -> None:
    """A local process holds every connection: a submission fails saying so, not that
    the job may have been queued (the emulator answered; it never read the request)."""
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
    try:
        client = Client(KEY, base_url=server.base_url, serverless_url=server.serverless_url)
        with client, pytest.raises(NbextError) as caught:
            client.endpoint("echo").run({"n": 1})
        message = str(caught.value)
        assert "503 on " in message and "the emulator refused this connection" in message
        assert "may have been queued" not in message
    finally:
        for sock in held:
            sock.close()


def http_get(server: EmulatorServer, path: str) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            return closed_within(sock, 10)
    except OSError:
        return b""
