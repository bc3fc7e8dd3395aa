"""The clients' own connections against real sockets: reuse, closes, timeouts, TLS, proxies.

The emulator only ever answers politely; these servers do what real servers and networks
also do: drop idle connections, answer nothing, answer late, speak TLS.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from nbext.client import AsyncClient, Client, ConnectionError, Timeout
from nbext.client._aio import AioPool
from nbext.client._sockets import SocketPool
from nbext.client._wire import Origin, encode_request

from .conftest import KEY

pytestmark = pytest.mark.anyio

OK = b'{"id":"j1","status":"IN_QUEUE"}'
HANG = b"hang"
"""Script answer: read the request, answer nothing until released."""
CLOSE = b"close"
"""Script answer, after the bytes: close the connection without a word."""
Reply = bytes | tuple[bytes, bytes] | None
Script = Callable[[int, bytes], Reply]
"""(request number, request bytes) -> the answer; None closes without one."""


def answer(body: bytes = OK, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class RawServer:
    """A TCP server on 127.0.0.1 answering each request as ``script`` says."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []
        self.closed = threading.Event()
        """Set each time the server closed a connection on its own."""
        self.release = threading.Event()
        """Set to let requests that hang go on (and the server stop)."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def origin(self) -> Origin:
        return Origin.parse(self.url + "/v2")

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True)
            except OSError:
                sock.close()
                return
        with sock:
            self._converse(sock)
        self.closed.set()

    def _converse(self, sock: socket.socket) -> None:
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                data = sock.recv(65536)
                if not data:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buffer) < length:
                buffer += sock.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + buffer[:length])
            buffer = buffer[length:]
            reply = self.script(len(self.requests), self.requests[-1])
            if reply is None:
                return
            if reply == HANG:
                self.release.wait(10)
                return
            if isinstance(reply, tuple):
                sock.sendall(reply[0])
                return
            sock.sendall(reply)

    def close(self) -> None:
        self.release.set()
        self._listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def start(script: Script, tls: ssl.SSLContext | None = None) -> RawServer:
        server = RawServer(script, tls)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def get(origin: Origin, path: str = "/v2/e/status/j1") -> bytes:
    return encode_request("GET", path, origin.host_header, [("Accept", "application/json")], None)


async def call(pool: SocketPool | AioPool, origin: Origin, data: bytes, timeout: float) -> Any:
    """One request through either pool (the sync one from a worker thread)."""
    if isinstance(pool, AioPool):
        return await pool.request(origin, data, timeout, timeout, False)
    return await anyio.to_thread.run_sync(pool.request, origin, data, timeout, timeout, False)


@pytest.fixture(params=["sync", "async"])
def pool(request: pytest.FixtureRequest) -> SocketPool | AioPool:
    return SocketPool() if request.param == "sync" else AioPool()


async def test_a_connection_carries_request_after_request(serve: Any, pool: Any) -> None:
    server = serve(lambda n, req: answer())
    for _ in range(3):
        reply = await call(pool, server.origin, get(server.origin), 5.0)
        assert reply.status_code == 200 and reply.json()["id"] == "j1"
    assert server.connections == 1 and len(server.requests) == 3
    assert server.requests[0].startswith(b"GET /v2/e/status/j1 HTTP/1.1\r\nHost: 127.0.0.1:")
    assert pool.open_connections == 1


async def test_connection_close_is_honoured(serve: Any, pool: Any) -> None:
    server = serve(lambda n, req: answer(OK, "Connection: close"))
    for _ in range(3):
        assert (await call(pool, server.origin, get(server.origin), 5.0)).status_code == 200
    assert server.connections == 3
    assert pool.open_connections == 0


async def test_an_idle_connection_the_server_dropped_is_replaced(serve: Any, pool: Any) -> None:
    # The server answers, then drops the connection without a word (as an idle timeout
    # does); the next request must go on a new connection, not fail on the dead one.
    server = serve(lambda n, req: (answer(), CLOSE))
    for _ in range(3):
        server.closed.clear()
        assert (await call(pool, server.origin, get(server.origin), 5.0)).status_code == 200
        assert await anyio.to_thread.run_sync(server.closed.wait, 5)
    assert server.connections == 3 and len(server.requests) == 3


async def test_a_connection_idle_too_long_is_not_reused(serve: Any) -> None:
    server = serve(lambda n, req: answer())
    pool = SocketPool(keepalive_expiry=0.0)
    for _ in range(2):
        await call(pool, server.origin, get(server.origin), 5.0)
    assert server.connections == 2


async def test_silence_is_a_read_timeout(serve: Any, pool: Any) -> None:
    server = serve(lambda n, req: HANG)
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        await call(pool, server.origin, get(server.origin), 0.2)
    assert 0.15 <= time.monotonic() - started < 2.0
    assert pool.open_connections == 0  # a connection in an unknown state is not kept


async def test_a_slow_answer_is_no_timeout_while_bytes_keep_coming(pool: Any) -> None:
    # The timeout bounds silence, not the whole answer (as httpx's read timeout): three
    # pieces 0.12 s apart take 0.36 s in all, under a 0.25 s timeout.
    whole = answer()
    listener = socket.create_server(("127.0.0.1", 0))
    origin = Origin.parse(f"http://127.0.0.1:{listener.getsockname()[1]}/v2")

    def dribble() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            for piece in (whole[:20], whole[20:40], whole[40:]):
                time.sleep(0.12)  # the server's pace, not the test's clock
                conn.sendall(piece)

    threading.Thread(target=dribble, daemon=True).start()
    try:
        started = time.monotonic()
        reply = await call(pool, origin, get(origin), 0.25)
        assert reply.status_code == 200 and time.monotonic() - started >= 0.3
    finally:
        listener.close()


async def test_a_refused_connection_certainly_sent_nothing(pool: Any) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    origin = Origin.parse(f"http://127.0.0.1:{port}/v2")
    with pytest.raises(httpx.ConnectError):
        await call(pool, origin, get(origin), 1.0)
    assert pool.open_connections == 0


async def test_a_close_without_answer_is_a_protocol_error(serve: Any, pool: Any) -> None:
    server = serve(lambda n, req: None)
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        await call(pool, server.origin, get(server.origin), 5.0)


async def test_a_full_pool_waits_then_says_so(serve: Any, pool: Any) -> None:
    server = serve(lambda n, req: HANG if n == 1 else answer())
    pool.max_connections = 1
    first = asyncio.ensure_future(call(pool, server.origin, get(server.origin), 5.0))
    await until(lambda: len(server.requests) == 1)  # the only connection is busy
    with pytest.raises(httpx.PoolTimeout):
        await call(pool, server.origin, get(server.origin), 0.2)
    server.release.set()
    with pytest.raises(httpx.HTTPError):
        await first  # the server hung up on the first request
    assert pool.open_connections == 0
    assert (await call(pool, server.origin, get(server.origin), 5.0)).status_code == 200


async def until(condition: Callable[[], bool]) -> None:
    """Wait (up to 5 s of real time) for something another thread or the loop does."""
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await anyio.sleep(0.001)


# ---- through the clients ------------------------------------------------------------------


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def client_call(kind: str, url: str, method: str, *args: Any, **client_kw: Any) -> Any:
    """``client.endpoint("e").<method>(*args)`` with a fresh client of ``kind``."""
    kw = {"serverless_url": url + "/v2", "max_retries": 0, "timeout": 2.0, **client_kw}
    if kind == "async":
        async with AsyncClient(KEY, **kw) as client:
            assert client._http is None  # the client's own connections
            return await getattr(client.endpoint("e"), method)(*args)

    def sync() -> Any:
        with Client(KEY, **kw) as client:
            assert client._http is None
            return getattr(client.endpoint("e"), method)(*args)

    return await anyio.to_thread.run_sync(sync)


async def test_a_run_whose_answer_never_came_is_not_sent_again(serve: Any, kind: str) -> None:
    server = serve(lambda n, req: None)  # reads the /run, closes without a word
    with pytest.raises(ConnectionError) as info:
        await client_call(kind, server.url, "run", {"x": 1})
    assert info.value.maybe_sent and "not sent again" in str(info.value)
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.startswith(b"POST /v2/e/run HTTP/1.1\r\n")
    assert f"Authorization: Bearer {KEY}".encode() in request
    assert request.endswith(b'\r\n\r\n{"input":{"x":1}}')
    assert KEY not in str(info.value) and KEY not in repr(info.value)


async def test_an_idempotent_call_is_retried_on_a_new_connection(serve: Any, kind: str) -> None:
    body = b'{"jobs":{"completed":3},"workers":{}}'
    server = serve(lambda n, req: None if n == 1 else answer(body))
    health = await client_call(kind, server.url, "health", max_retries=1)
    assert health.jobs.completed == 3
    assert len(server.requests) == 2 and server.connections == 2


async def test_a_silent_server_is_a_timeout_naming_the_call(serve: Any, kind: str) -> None:
    server = serve(lambda n, req: HANG)
    with pytest.raises(Timeout) as info:
        await client_call(kind, server.url, "health", timeout=0.2)
    assert "GET e/health" in str(info.value) and KEY not in str(info.value)


def test_a_proxy_in_the_environment_hands_the_calls_to_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    with Client(KEY, serverless_url="http://127.0.0.1:9/v2") as client:
        assert client._http is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    with Client(KEY, serverless_url="http://127.0.0.1:9/v2") as client:
        assert client._http is not None  # httpx honours the proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client(KEY, serverless_url="http://127.0.0.1:9/v2") as client:
        assert client._http is None


# ---- TLS --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl tool)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_tls_is_verified_and_spoken(serve: Any, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    server = serve(lambda n, req: answer(), tls=server_side)
    trusting = ssl.create_default_context(cafile=str(cert))
    for pool in (SocketPool(ssl_context=trusting), AioPool(ssl_context=trusting)):
        for _ in range(2):
            reply = await call(pool, server.origin, get(server.origin), 5.0)
            assert reply.status_code == 200
    assert server.connections == 2  # one per pool, kept alive
    for pool in (SocketPool(), AioPool()):  # certifi's authorities do not know it
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await call(pool, server.origin, get(server.origin), 5.0)


def test_an_async_client_serves_one_loop_after_another(serve: Any) -> None:
    # asyncio.run twice with one client (a script calling two async helpers): the first
    # loop's connections cannot serve the second, and must not count against it.
    body = b'{"jobs":{"completed":1},"workers":{}}'
    server = serve(lambda n, req: answer(body))
    client = AsyncClient(KEY, serverless_url=server.url + "/v2")
    pool = client._sender.pool
    pool.max_connections = 1

    async def health() -> int:
        return int((await client.endpoint("e").health()).jobs.completed)

    assert asyncio.run(health()) == 1
    assert asyncio.run(health()) == 1  # no PoolTimeout from the first loop's connection
    assert server.connections == 2 and pool.open_connections == 1
    asyncio.run(client.aclose())


async def test_a_closed_client_says_so_at_once(serve: Any, kind: str) -> None:
    server = serve(lambda n, req: answer(b'{"jobs":{},"workers":{}}'))
    if kind == "async":
        client: Any = AsyncClient(KEY, serverless_url=server.url + "/v2")
        await client.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await client.endpoint("e").health()
    else:
        sync = Client(KEY, serverless_url=server.url + "/v2")
        sync.close()
        with pytest.raises(RuntimeError, match="closed"):
            sync.endpoint("e").health()
    assert server.requests == []


def test_an_async_client_runs_on_uvloop(serve: Any) -> None:
    # uvloop's transports are not asyncio.Transport instances; the connections must not
    # care (notebooks and services run on uvloop, and so does a sync client's batch).
    uvloop = pytest.importorskip("uvloop")
    body = b'{"jobs":{"completed":2},"workers":{}}'
    server = serve(lambda n, req: answer(body))

    async def twice() -> list[int]:
        async with AsyncClient(KEY, serverless_url=server.url + "/v2") as client:
            return [(await client.endpoint("e").health()).jobs.completed for _ in range(2)]

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert runner.run(twice()) == [2, 2]
    assert server.connections == 1
