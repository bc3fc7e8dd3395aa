"""Each answer in one write: the held response head, and everything that must still work.

The transport is tested against a recording ``asyncio.Transport`` on a real loop (what
was written, in which calls, in which order); the protocol against a real
``EmulatorServer`` over raw sockets, where a head with nothing after it (``100
Continue``) must still go out on its own.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from nbext.emulator import Emulator, EmulatorServer
from nbext.emulator.protocol import JOIN_LIMIT, OneWriteTransport

from .conftest import KEY, deploy_demos

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class Recorder(asyncio.Transport):
    """An asyncio transport that keeps what it is asked to send, call by call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.calls.append(("write", bytes(data)))

    def writelines(self, list_of_data: Any) -> None:
        self.calls.append(("writelines", [bytes(d) for d in list_of_data]))

    def close(self) -> None:
        self.closed = True
        self.calls.append(("close", None))

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5)}.get(name, default)

    def sent(self) -> bytes:
        out = b""
        for kind, data in self.calls:
            if kind == "write":
                out += data
            elif kind == "writelines":
                out += b"".join(data)
        return out


def transport() -> tuple[Recorder, OneWriteTransport]:
    recorder = Recorder()
    return recorder, OneWriteTransport(recorder, asyncio.get_running_loop())


@pytest.mark.anyio
async def test_a_head_and_its_small_body_go_out_in_one_write() -> None:
    recorder, wrapped = transport()
    wrapped.write(HEAD)
    assert recorder.calls == []  # held for the body
    wrapped.write(memoryview(b"{}"))
    assert recorder.calls == [("write", HEAD + b"{}")]
    await asyncio.sleep(0)  # the scheduled flush finds nothing held
    assert recorder.calls == [("write", HEAD + b"{}")]


@pytest.mark.anyio
async def test_a_big_body_is_not_copied_onto_its_head() -> None:
    recorder, wrapped = transport()
    body = b"x" * (JOIN_LIMIT + 1)
    wrapped.write(HEAD)
    wrapped.write(body)
    assert recorder.calls == [("writelines", [HEAD, body])]


@pytest.mark.anyio
async def test_a_head_with_nothing_after_it_goes_out_on_the_next_turn() -> None:
    recorder, wrapped = transport()
    wrapped.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert recorder.calls == []
    await asyncio.sleep(0)
    assert recorder.calls == [("write", b"HTTP/1.1 100 Continue\r\n\r\n")]
    wrapped.write(b"later body")  # not a head: straight through
    assert recorder.calls[-1] == ("write", b"later body")


@pytest.mark.anyio
async def test_closing_sends_a_held_head_first() -> None:
    recorder, wrapped = transport()
    wrapped.write(HEAD)
    wrapped.close()
    assert recorder.calls == [("write", HEAD), ("close", None)]
    assert recorder.closed


@pytest.mark.anyio
async def test_order_is_kept_across_heads_and_bodies() -> None:
    recorder, wrapped = transport()
    for i in range(3):
        wrapped.write(HEAD)
        wrapped.write(b"%02d" % i)
    wrapped.write(b"HTTP/1.1 204 No Content\r\n\r\n")
    await asyncio.sleep(0)
    assert recorder.sent() == b"".join(HEAD + b"%02d" % i for i in range(3)) + (
        b"HTTP/1.1 204 No Content\r\n\r\n"
    )


@pytest.mark.anyio
async def test_everything_else_is_the_wrapped_transports_own() -> None:
    _, wrapped = transport()
    assert wrapped.get_extra_info("peername") == ("127.0.0.1", 5)
    assert not wrapped.is_closing()
    wrapped.close()
    assert wrapped.is_closing()


# ---- the protocol in a real server ---------------------------------------------------------


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(api_key=KEY)
    deploy_demos(emu)
    with EmulatorServer(emu) as running:
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
    big = json.dumps({"input": {"blob": "y" * (JOIN_LIMIT * 2)}}).encode()
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
    assert outputs[5] == {"blob": "y" * (JOIN_LIMIT * 2)}
