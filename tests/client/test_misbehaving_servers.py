"""The client against servers that misbehave, on every path it sends by.

The emulator only ever answers politely; these servers do what real servers, proxies
and networks also do: chunk, compress, close, stall, reset, redirect, send a huge head
or an endless body, speak TLS with a certificate nobody vouches for. Every test runs on
each path a request can take, and holds them to the same result:

- ``sync``: ``Client``, blocking, on the caller's thread;
- ``async``: ``AsyncClient`` on the test's loop;
- ``map``: ``Client.map``, whose batch runs on a private event loop of its own (only
  for /runsync, the one call a map makes when its jobs end at once).
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from nbext.client import (
    APIError,
    AsyncClient,
    Client,
    ConfigError,
    ConnectionError,
    MaybeQueued,
    RateLimited,
    Timeout,
)

from .conftest import KEY
from .selfsigned import write_self_signed

pytestmark = pytest.mark.anyio

DONE = b'{"id":"j1","status":"COMPLETED","output":{"n":1}}'
"""A /runsync or /status answer: the job ended, its output in the answer."""
HEALTH = b'{"jobs":{"completed":3},"workers":{}}'
QUEUED = b'{"id":"j1","status":"IN_QUEUE"}'


# ---- the servers ----------------------------------------------------------------------------


class Conversation:
    """One connection, from the server's side: read a request, answer it any way at all."""

    def __init__(self, sock: socket.socket, server: RawServer) -> None:
        self.sock = sock
        self.server = server
        self.buffer = b""

    def read_request(self, read_size: int = 65536, pause: float = 0.0) -> bytes | None:
        """The next request, whole; None when the client closed. ``pause`` between reads
        (a slow reader)."""
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buffer += data
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = [self.buffer[:length]]
        got = len(body[0])
        self.buffer = self.buffer[length:]
        while got < length:
            if pause:
                time.sleep(pause)
            data = self.sock.recv(min(read_size, length - got))
            if not data:
                return None
            body.append(data)
            got += len(data)
        request = head + b"\r\n\r\n" + b"".join(body)
        self.server.requests.append(request)
        return request

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reset(self) -> None:
        """Abort the connection: the client sees a reset, not a polite close."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


Handler = Callable[[Conversation], None]


def answer(body: bytes = DONE, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def answering(*replies: bytes) -> Handler:
    """Answer the requests of every connection with ``replies`` in turn (the last one
    repeated), keeping the connection alive."""

    def handle(conv: Conversation) -> None:
        while conv.read_request() is not None:
            n = len(conv.server.requests)
            conv.send(replies[min(n, len(replies)) - 1])

    return handle


class RawServer:
    """A TCP server on 127.0.0.1; each connection is handled by ``handler`` in a thread."""

    def __init__(
        self, handler: Handler, tls: ssl.SSLContext | None = None, rcvbuf: int | None = None
    ) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []
        self.release = threading.Event()
        """Set when the test ends: whatever hangs lets go."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        if rcvbuf is not None:  # inherited by the connections it accepts
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

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
        try:
            self.handler(Conversation(sock, self))
        except OSError:
            pass
        finally:
            sock.close()

    def close(self) -> None:
        self.release.set()
        self._listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def start(
        handler: Handler, tls: ssl.SSLContext | None = None, rcvbuf: int | None = None
    ) -> RawServer:
        server = RawServer(handler, tls, rcvbuf)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(autouse=True)
def no_proxy_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own proxy settings must not route these loopback servers."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


# ---- the paths ------------------------------------------------------------------------------

PATHS = ["sync", "async", "map"]


def client_kw(url: str, **kw: Any) -> dict[str, Any]:
    return {"serverless_url": url + "/v2", "max_retries": 0, "timeout": 2.0, **kw}


async def on(path: str, url: str, method: str, *args: Any, **kw: Any) -> Any:
    """``client.endpoint("e").<method>(*args)`` with a fresh client, on ``path``.

    On the ``map`` path the method must be ``run_sync``: the input goes through
    ``map`` (whose batch sends /runsync from its own loop) and its result comes back.
    """
    settings = client_kw(url, **kw)
    if path == "async":
        async with AsyncClient(KEY, **settings) as client:
            return await getattr(client.endpoint("e"), method)(*args)

    def blocking() -> Any:
        with Client(KEY, **settings) as client:
            endpoint = client.endpoint("e")
            if path == "sync":
                return getattr(endpoint, method)(*args)
            assert method == "run_sync", "a map only sends /runsync"
            [(_, result)] = list(endpoint.map(args, raise_on_failure=True))
            if isinstance(result, MaybeQueued):  # a map goes on, holding the submission's error
                raise result.error
            return result

    return await anyio.to_thread.run_sync(blocking)


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    """The paths for calls a map never makes (GET, /run)."""
    return str(request.param)


# ---- bodies ---------------------------------------------------------------------------------


def chunked(body: bytes, size: int = 7) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    framed = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + framed + b"0\r\n\r\n"


async def test_a_chunked_answer_is_read(serve: Any, path: str) -> None:
    server = serve(answering(chunked(DONE)))
    assert (await on(path, server.url, "run_sync", {"x": 1})).output == {"n": 1}


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_answer_is_decoded(serve: Any, path: str, encoding: str) -> None:
    packed = gzip.compress(DONE) if encoding == "gzip" else zlib.compress(DONE)
    server = serve(answering(answer(packed, f"Content-Encoding: {encoding}")))
    assert (await on(path, server.url, "run_sync", {"x": 1})).output == {"n": 1}
    assert b"accept-encoding: gzip, deflate" in server.requests[0].lower()


async def test_a_raw_deflate_answer_is_decoded(serve: Any, path: str) -> None:
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)  # deflate without its zlib wrapper
    body = raw.compress(DONE) + raw.flush()
    server = serve(answering(answer(body, "Content-Encoding: deflate")))
    assert (await on(path, server.url, "run_sync", {"x": 1})).output == {"n": 1}


async def test_a_body_that_is_not_its_encoding_fails_alike_on_every_path(
    serve: Any, path: str
) -> None:
    server = serve(answering(answer(b"not gzip at all", "Content-Encoding: gzip")))
    with pytest.raises(ConnectionError) as info:
        await on(path, server.url, "run_sync", {"x": 1})
    message = str(info.value)
    assert "does not decode as its Content-Encoding says" in message, message
    assert "127.0.0.1" in message and "\n" not in message


async def test_an_answer_delimited_by_the_close_is_read(serve: Any, path: str) -> None:
    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None:
            conv.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + DONE)

    server = serve(handle)
    assert (await on(path, server.url, "run_sync", {"x": 1})).output == {"n": 1}


async def test_an_answer_past_the_cap_is_refused_before_it_is_read(serve: Any, path: str) -> None:
    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None:
            conv.send(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{")
            conv.server.release.wait(10)

    server = serve(handle)
    with pytest.raises(APIError, match=r"over the client's \d+ MB limit \(announced"):
        await on(path, server.url, "run_sync", {"x": 1})


async def test_a_gzip_bomb_stops_at_the_cap(serve: Any, path: str) -> None:
    bomb = gzip.compress(b"\0" * (300 * 1024 * 1024), compresslevel=9)  # ~300 KB on the wire
    server = serve(answering(answer(bomb, "Content-Encoding: gzip")))
    with pytest.raises(APIError, match=r"over the client's \d+ MB limit \(decoded\)"):
        await on(path, server.url, "run_sync", {"x": 1})


# ---- connections ------------------------------------------------------------------------------


def once_per_connection(reply: bytes, closed: threading.Event) -> Handler:
    """Answer one request a connection with ``reply``, then hang up and set ``closed``."""

    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None:
            conv.send(reply)
        conv.sock.close()
        closed.set()

    return handle


async def test_a_keepalive_connection_the_server_closed_is_not_reused(
    serve: Any, kind: str
) -> None:
    closed = threading.Event()
    server = serve(once_per_connection(answer(QUEUED), closed))
    settings = client_kw(server.url)

    async def twice() -> list[str]:
        if kind == "async":
            async with AsyncClient(KEY, **settings) as client:
                first = await client.endpoint("e").run({"x": 1})
                await anyio.to_thread.run_sync(closed.wait, 5)
                second = await client.endpoint("e").run({"x": 2})
        else:
            with Client(KEY, **settings) as sync:
                first = await anyio.to_thread.run_sync(sync.endpoint("e").run, {"x": 1})
                await anyio.to_thread.run_sync(closed.wait, 5)
                second = await anyio.to_thread.run_sync(sync.endpoint("e").run, {"x": 2})
        return [first.id, second.id]

    assert await twice() == ["j1", "j1"]  # no /run lost or doubted on a dead connection
    assert len(server.requests) == 2 and server.connections == 2


async def test_a_run_whose_answer_never_came_is_not_sent_again(serve: Any, kind: str) -> None:
    server = serve(lambda conv: conv.read_request() and None)  # reads the /run, hangs up
    with pytest.raises(ConnectionError) as info:
        await on(kind, server.url, "run", {"x": 1}, max_retries=3)
    assert info.value.maybe_sent and "not sent again" in str(info.value)
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.startswith(b"POST /v2/e/run HTTP/1.1\r\n")
    assert f"Bearer {KEY}".encode() in request
    assert request.endswith(b'\r\n\r\n{"input":{"x":1}}')
    assert KEY not in str(info.value) and KEY not in repr(info.value)


async def test_an_idempotent_call_is_retried_on_a_new_connection(serve: Any, kind: str) -> None:
    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None and len(conv.server.requests) > 1:
            conv.send(answer(HEALTH))

    server = serve(handle)
    health = await on(kind, server.url, "health", max_retries=1)
    assert health.jobs.completed == 3
    assert len(server.requests) == 2 and server.connections == 2


async def test_a_reset_in_the_middle_of_the_body_is_a_connection_error(
    serve: Any, path: str
) -> None:
    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None:
            conv.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + DONE[:10])
            time.sleep(0.05)  # the server's behaviour: the head is out before the reset
            conv.reset()

    server = serve(handle)
    with pytest.raises(ConnectionError) as info:
        await on(path, server.url, "run_sync", {"x": 1}, max_retries=3)
    assert info.value.maybe_sent and len(server.requests) == 1  # a submission: not re-sent
    assert f"127.0.0.1:{server.port}" in str(info.value)


async def test_a_refused_connection_names_the_host_and_sent_nothing(path: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nobody listens there now
    with pytest.raises(ConnectionError) as info:
        await on(path, f"http://127.0.0.1:{port}", "run_sync", {"x": 1})
    assert f"to 127.0.0.1:{port}" in str(info.value) and not info.value.maybe_sent


async def test_a_name_that_does_not_resolve_is_named(kind: str) -> None:
    with pytest.raises(ConnectionError) as info:
        await on(kind, "http://no-such-host.invalid", "health", call_timeout=10)
    assert "to no-such-host.invalid" in str(info.value)
    assert "\n" not in str(info.value)


# ---- time -----------------------------------------------------------------------------------


def hang(conv: Conversation) -> None:
    if conv.read_request() is not None:
        conv.server.release.wait(10)


async def test_a_silent_server_is_a_timeout_naming_the_call(serve: Any, path: str) -> None:
    server = serve(hang)
    with pytest.raises(Timeout) as info:
        await on(path, server.url, "run_sync", {"x": 1}, timeout=0.3, wait_timeout=0.3)
    assert "runsync" in str(info.value) and KEY not in str(info.value)


async def test_retries_never_outlast_the_call_timeout(serve: Any, kind: str) -> None:
    server = serve(hang)
    started = time.monotonic()
    with pytest.raises(Timeout):
        await on(kind, server.url, "health", timeout=0.3, call_timeout=1.0, max_retries=50)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 0.25 + 1.0  # the deadline, its grace, and a loaded machine
    assert 2 <= len(server.requests) <= 5


async def test_a_retry_after_past_the_deadline_raises_at_once(serve: Any, kind: str) -> None:
    limited = answer(b'{"error":"slow down"}', "Retry-After: 100000", status="429 Too Many")
    server = serve(answering(limited))
    started = time.monotonic()
    with pytest.raises(RateLimited) as info:
        await on(kind, server.url, "health", max_retries=5)
    assert info.value.retry_after == 100000 and len(server.requests) == 1
    assert time.monotonic() - started < 2.0  # told, not slept on


async def test_a_slow_writer_is_waited_for_while_bytes_keep_coming(serve: Any, path: str) -> None:
    def handle(conv: Conversation) -> None:
        if conv.read_request() is not None:
            whole = answer(DONE)
            for i in range(0, len(whole), len(whole) // 6 + 1):
                conv.send(whole[i : i + len(whole) // 6 + 1])
                time.sleep(0.15)  # the server's pace: 1 s in all, each gap under the timeout

    server = serve(handle)
    result = await on(path, server.url, "run_sync", {"x": 1}, timeout=0.5)
    assert result.output == {"n": 1}


async def test_a_slow_reader_gets_the_whole_upload(serve: Any, path: str) -> None:
    # An 18 MB /runsync read 64 KB per 10 ms (the server's receive buffer kept small):
    # the exchange takes over twice `timeout`, and succeeds, since the server never
    # stops reading for `timeout` (a bound on the whole upload would fail it).
    def handle(conv: Conversation) -> None:
        if conv.read_request(read_size=64 * 1024, pause=0.01) is not None:
            conv.send(answer(DONE))

    server = serve(handle, rcvbuf=64 * 1024)
    blob = "x" * (18 * 1024 * 1024)
    started = time.monotonic()
    result = await on(path, server.url, "run_sync", {"blob": blob}, timeout=1.2)
    assert result.output == {"n": 1} and len(server.requests[0]) > 18 * 1024 * 1024
    assert time.monotonic() - started > 2 * 1.2


async def test_a_reader_that_never_reads_is_a_write_timeout(serve: Any, path: str) -> None:
    server = serve(lambda conv: conv.server.release.wait(10))
    with pytest.raises(Timeout) as info:
        method = "run_sync" if path == "map" else "run"  # the call each path submits by
        await on(path, server.url, method, {"blob": "x" * (8 * 1024 * 1024)}, timeout=0.5)
    assert "WriteTimeout" in str(info.value) and "not sent again" in str(info.value)


# ---- heads and redirects ----------------------------------------------------------------------


async def test_a_large_head_in_one_read_is_held_to_the_same_cap(serve: Any, path: str) -> None:
    big = answer(DONE, "X-Padding: " + "a" * (70 * 1024))  # under httpx's 100 KB
    huge = answer(DONE, "X-Padding: " + "a" * (200 * 1024))
    server = serve(answering(big))
    assert (await on(path, server.url, "run_sync", {"x": 1})).output == {"n": 1}
    server = serve(answering(huge))
    with pytest.raises(ConnectionError, match="RemoteProtocolError"):
        await on(path, server.url, "run_sync", {"x": 1})


async def test_a_get_follows_a_redirect_without_the_key_leaving_the_origin(
    serve: Any, kind: str
) -> None:
    elsewhere = serve(answering(answer(HEALTH)))
    here = serve(
        answering(
            answer(b"", "Location: /v2/e2/health", status="307 Temporary Redirect"),
            answer(b"", f"Location: {elsewhere.url}/v2/e/health", status="302 Found"),
        )
    )
    assert (await on(kind, here.url, "health")).jobs.completed == 3
    assert here.requests[1].startswith(b"GET /v2/e2/health ")
    assert f"Bearer {KEY}".encode() in here.requests[1]  # same origin: still signed
    assert f"Bearer {KEY}".encode() not in elsewhere.requests[0]  # another origin: not


async def test_a_map_follows_a_get_redirect_without_the_key_leaving_the_origin(
    serve: Any,
) -> None:
    # A job that outlives the /runsync hold is waited for with GETs, which a map's
    # senders follow as the client's do.
    elsewhere = serve(answering(answer(DONE)))

    def handle(conv: Conversation) -> None:
        while (request := conv.read_request()) is not None:
            line = request.partition(b"\r\n")[0]
            if line.startswith(b"POST"):
                conv.send(answer(QUEUED))
            else:
                path = line.split(b" ")[1].decode()
                conv.send(answer(b"", f"Location: {elsewhere.url}{path}", status="307 Moved"))

    here = serve(handle)
    assert (await on("map", here.url, "run_sync", {"x": 1})).output == {"n": 1}
    assert here.requests[1].startswith(b"GET /v2/e/")
    assert all(f"Bearer {KEY}".encode() in request for request in here.requests)
    assert elsewhere.requests and all(
        f"Bearer {KEY}".encode() not in request for request in elsewhere.requests
    )


async def test_a_post_redirect_is_refused_naming_the_location(serve: Any, path: str) -> None:
    moved = answer(b"", "Location: https://elsewhere.example/v2/e/runsync", status="308 X")
    server = serve(answering(moved))
    with pytest.raises(APIError) as info:
        await on(path, server.url, "run_sync", {"x": 1})
    assert "https://elsewhere.example/v2/e/runsync" in str(info.value)
    assert info.value.status == 308 and len(server.requests) == 1


async def test_endless_redirects_end(serve: Any, kind: str) -> None:
    server = serve(answering(answer(b"", "Location: /v2/e/health", status="302 Found")))
    with pytest.raises(APIError, match="too many redirects"):
        await on(kind, server.url, "health")


# ---- the key in a header ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (KEY[:20] + "\r\nX-Smuggled: 1" + KEY[20:], "a line break"),
        (KEY[:20] + "\n" + KEY[20:], "a line break"),
        (KEY[:20] + "é" + KEY[20:], "outside ASCII"),
        (KEY[:20] + "\u2603" + KEY[20:], "outside ASCII"),
        (KEY[:20] + "\x00" + KEY[20:], "a control character"),
    ],
)
async def test_a_key_http_cannot_carry_is_refused_before_anything_is_sent(
    serve: Any, kind: str, key: str, problem: str
) -> None:
    server = serve(answering(answer(HEALTH)))
    cls = AsyncClient if kind == "async" else Client
    with pytest.raises(ConfigError) as info:
        cls(key, serverless_url=server.url + "/v2")
    message = str(info.value)
    assert problem in message and "\n" not in message
    assert KEY[:20] not in message and KEY[20:] not in message
    assert server.connections == 0


# ---- TLS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_server(serve: Any, certificate: tuple[Path, Path]) -> RawServer:
    cert, key = certificate
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    server: RawServer = serve(answering(answer(DONE)), tls=server_side)
    return server


async def test_tls_with_a_certificate_trusted_through_ssl_cert_file(
    tls_server: RawServer,
    certificate: tuple[Path, Path],
    path: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    assert (await on(path, tls_server.url, "run_sync", {"x": 1})).output == {"n": 1}


async def test_tls_with_an_untrusted_certificate_is_refused(
    tls_server: RawServer, path: str
) -> None:
    with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED") as info:
        await on(path, tls_server.url, "run_sync", {"x": 1})
    assert not info.value.maybe_sent and tls_server.requests == []


# ---- proxies --------------------------------------------------------------------------------


class ForwardProxy(RawServer):
    """A tiny HTTP forward proxy: each absolute-form request is relayed to its origin."""

    def __init__(self) -> None:
        self.targets: list[bytes] = []
        super().__init__(self._relay)

    def _relay(self, conv: Conversation) -> None:
        while (request := conv.read_request()) is not None:
            line, _, rest = request.partition(b"\r\n")
            method, target, version = line.split(b" ")
            self.targets.append(target)
            authority, _, path = target.removeprefix(b"http://").partition(b"/")
            host, _, port = authority.partition(b":")
            with socket.create_connection((host.decode(), int(port or 80))) as upstream:
                upstream.sendall(b" ".join([method, b"/" + path, version]) + b"\r\n" + rest)
                upstream.shutdown(socket.SHUT_WR)
                while data := upstream.recv(65536):
                    conv.send(data)
            return  # the upstream answer ended with its connection: so does ours


async def test_a_proxy_from_the_environment_carries_the_calls(
    serve: Any, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = serve(answering(answer(DONE, "Connection: close")))
    proxy = ForwardProxy()
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert (await on(path, origin.url, "run_sync", {"x": 1})).output == {"n": 1}
    finally:
        proxy.close()
    [target] = proxy.targets  # the absolute form: the request went through the proxy
    assert target.startswith(f"{origin.url}/v2/e/runsync?wait=".encode())
    assert len(origin.requests) == 1


async def test_a_socks_proxy_without_socksio_is_one_clear_line(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import socksio  # noqa: F401

        pytest.skip("socksio is installed here: the proxy would be used")
    except ImportError:
        pass
    monkeypatch.setenv("ALL_PROXY", "socks5://user:pw@127.0.0.1:1080")
    cls = AsyncClient if kind == "async" else Client
    with pytest.raises(ConfigError) as info:
        cls(KEY, serverless_url="http://127.0.0.1:9/v2")
    assert "socksio" in str(info.value) and "pw" not in str(info.value)


# ---- a map's connections (its httpx pool, kept across inputs) ------------------------------


async def test_a_map_opens_a_new_connection_when_the_server_closed_the_last(serve: Any) -> None:
    closed = threading.Event()
    server = serve(once_per_connection(answer(DONE), closed))

    def inputs() -> Iterator[dict[str, int]]:
        for i in range(3):
            yield {"x": i}
            assert closed.wait(5)
            closed.clear()
            time.sleep(0.05)  # the hang-up reaches the client before the next input

    def blocking() -> list[int]:
        with Client(KEY, **client_kw(server.url)) as client:
            results = client.endpoint("e").map(inputs(), concurrency=1, raise_on_failure=True)
            return [index for index, _ in results]

    assert await anyio.to_thread.run_sync(blocking) == [0, 1, 2]  # nothing lost or doubted
    assert len(server.requests) == 3 and server.connections == 3


async def test_a_map_keeps_its_connections_alive(serve: Any) -> None:
    server = serve(answering(answer(DONE)))

    def blocking() -> int:
        with Client(KEY, **client_kw(server.url)) as client:
            inputs = ({"x": i} for i in range(40))
            return len(list(client.endpoint("e").map(inputs, concurrency=4)))

    assert await anyio.to_thread.run_sync(blocking) == 40
    assert len(server.requests) == 40 and server.connections <= 4


async def test_an_async_map_sends_through_the_clients_own_pool(serve: Any) -> None:
    server = serve(answering(answer(DONE)))
    async with AsyncClient(KEY, **client_kw(server.url)) as client:
        endpoint = client.endpoint("e")
        await endpoint.run_sync({"x": 0})
        results = [r async for r in endpoint.map([{"x": 1}, {"x": 2}], concurrency=1)]
    assert server.connections == 1  # the run_sync's connection served the map too
    assert sorted(index for index, _ in results) == [0, 1]
    assert all(result.output == {"n": 1} for _, result in results)
    [first, *_] = server.requests
    assert first.startswith(b"POST /v2/e/runsync?wait=")
    assert f"Bearer {KEY}".encode() in first and b"Accept-Encoding: gzip, deflate" in first


# ---- the client's own life ------------------------------------------------------------------


async def test_a_closed_client_says_so_at_once(serve: Any, kind: str) -> None:
    server = serve(answering(answer(HEALTH)))
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
    uvloop = pytest.importorskip("uvloop")
    server = serve(answering(answer(HEALTH)))

    async def twice() -> list[int]:
        async with AsyncClient(KEY, serverless_url=server.url + "/v2") as client:
            return [(await client.endpoint("e").health()).jobs.completed for _ in range(2)]

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert runner.run(twice()) == [3, 3]
    assert server.connections == 1


def test_an_async_client_serves_one_loop_after_another(serve: Any) -> None:
    # asyncio.run twice with one client (a script calling two async helpers): the first
    # loop's connections cannot serve the second, which gets connections of its own.
    server = serve(answering(answer(HEALTH)))
    client = AsyncClient(KEY, serverless_url=server.url + "/v2")

    async def health() -> int:
        return int((await client.endpoint("e").health()).jobs.completed)

    assert asyncio.run(health()) == 3
    assert asyncio.run(health()) == 3
    assert server.connections == 2
    asyncio.run(client.aclose())
