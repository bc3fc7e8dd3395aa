"""A batch's requests through aiohttp: the senders of ``Client.map``'s workers.

A map keeps many requests in flight on one event loop, and there the CPU each request
costs bounds the batch's rate. aiohttp's pool (its C-accelerated parser, a connection
handed back without re-examining the others) costs a fraction of httpx's per request
with many in flight, so a map's workers send through one ``aiohttp.ClientSession``.
Everything else of the client keeps httpx (``_transport``): this module answers to the
same contract, held by the same tests (``tests/client/test_misbehaving_servers.py``):

- TLS verified with the same context httpx makes (certifi, or ``SSL_CERT_FILE``);
- proxies from the environment, read as httpx reads them (``LaneSenders._proxy``);
- gzip and deflate decoded, every answer capped raw and decoded (``MAX_ANSWER_BYTES``);
- redirects followed for GET only, and without the key when they leave the origin;
- aiohttp's failures raised as the httpx exceptions the flows already read
  (``_calls.transport_error`` describes them, naming the host), so nothing above a
  sender can tell which library sent.

Timeouts: connecting and each read are bounded as in httpx; aiohttp has no write
timeout, so a large body is paced under one of our own (``_paced``). One difference
remains: aiohttp caps each line of an answer's head, where h11 caps the whole head.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
import zlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
from yarl import URL

from ._calls import Call, oversized_error, redirect_error
from ._errors import ConfigError
from ._transport import (
    CONNECT_TIMEOUT,
    KEEPALIVE_EXPIRY,
    URL_CACHE,
    Destination,
    Reply,
    undecodable,
)

MAX_REDIRECTS = 20
"""As httpx's default: a GET's redirects past this are a loop."""
_READ = 65536
WRITE_PIECE = 64 * 1024
"""A request body larger than this is written piece by piece, under a write timeout
(``_paced``); a smaller one fits the socket's buffer at once."""
MAX_HEAD_LINE = 100 * 1024
"""The longest line of an answer's head: h11 (httpx) refuses a head past 100 KB; aiohttp
caps each line (8 KB by default, which a proxy's long cookie can pass)."""


def _translate(exc: BaseException, request: httpx.Request) -> httpx.TransportError:
    """aiohttp's failure as the httpx exception of the same meaning, for the flows."""
    if isinstance(exc, aiohttp.ClientResponseError):  # its str() repeats the URL
        detail = exc.message if len(exc.message) <= 200 else exc.message[:200] + "..."
    else:
        detail = str(exc) or type(exc).__name__
    kind: type[httpx.TransportError]
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        kind = httpx.ConnectTimeout
    elif isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        kind = httpx.ReadTimeout
    elif isinstance(exc, aiohttp.ClientProxyConnectionError):
        kind = httpx.ProxyError
    elif isinstance(exc, aiohttp.ClientConnectorError):
        kind = httpx.ConnectError
    elif isinstance(  # a dropped connection, a broken body, a malformed or oversized head
        exc,
        aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientResponseError,
    ):
        kind = httpx.RemoteProtocolError
    else:
        kind = httpx.ReadError
    return kind(detail, request=request)


_REDIRECTS = frozenset((301, 302, 303, 307, 308))


class _Decoder:
    """gzip, or deflate with or without its zlib wrapper (servers send both), as httpx
    decodes them; a body that is neither is httpx's ``DecodingError``, told as the httpx
    path tells it (``undecodable``)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._raw_deflate_tried = encoding == "gzip"
        bits = zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(bits)

    def decompress(self, data: bytes) -> bytes:
        try:
            decoded = self._zlib.decompress(data)
            self._raw_deflate_tried = True  # the wrapper was there: no other way to try
            return decoded
        except zlib.error as exc:
            if self._raw_deflate_tried:
                raise httpx.DecodingError(f"{self.encoding} body: {exc}") from None
        self._raw_deflate_tried = True
        self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        return self.decompress(data)

    def flush(self) -> bytes:
        try:
            return self._zlib.flush()
        except zlib.error as exc:
            raise httpx.DecodingError(f"{self.encoding} body: {exc}") from None


async def _paced(body: bytes, writing: asyncio.Timeout, timeout: float) -> AsyncIterator[bytes]:
    """``body`` handed to aiohttp a piece at a time, each within ``timeout`` of the last.

    aiohttp has no write timeout: a server that stops reading would hold the upload
    for ever. aiohttp asks for the next piece once the last one is written (the
    socket's buffer drained below its mark), so each request for a piece moves the
    deadline of ``writing`` on; after the last, the deadline goes and the read
    timeout (``sock_read``) bounds the wait for the answer. This is httpx's write
    timeout, measured a piece (64 KB) at a time rather than a socket write at a time.
    After it, aiohttp closes the connection politely: its unsent bytes stay queued until
    the server reads or drops them, or the batch's loop closes.
    """
    loop = asyncio.get_running_loop()
    view = memoryview(body)
    for start in range(0, len(body), WRITE_PIECE):
        writing.reschedule(loop.time() + timeout)
        yield bytes(view[start : start + WRITE_PIECE])
    writing.reschedule(None)


class LaneSenders:
    """The sender of a batch's workers: one aiohttp session, made on the batch's loop
    when the first worker sends (a session belongs to the loop that made it). Its pool
    hands a worker any idle connection, so the workers share one sender."""

    def __init__(self, destination: Destination) -> None:
        self._destination = destination
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[tuple[bool, str, tuple[tuple[str, str], ...]], URL] = {}
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._proxies: dict[URL, URL | None] = {}
        self._closed = False

    def new(self) -> LaneSenders:
        """A worker's sender (``_loop.Lanes``): this one, shared."""
        return self

    def _open_session(self) -> aiohttp.ClientSession:
        tls: ssl.SSLContext = httpx.create_ssl_context()  # certifi, or SSL_CERT_FILE/_DIR
        connector = aiohttp.TCPConnector(
            limit=0, ssl=tls, keepalive_timeout=KEEPALIVE_EXPIRY, enable_cleanup_closed=False
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            trust_env=False,  # proxies: ``_proxy``; never a .netrc login beside the key
            auto_decompress=False,  # decoded here, under the cap
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept", "Content-Type"),
            raise_for_status=False,
            max_line_size=MAX_HEAD_LINE,
            max_field_size=MAX_HEAD_LINE,
        )
        return self._session

    def _url(self, call: Call) -> URL:
        key = (call.management, call.path, tuple(call.params.items()))
        url = self._urls.get(key)
        if url is None:
            to = self._destination
            root = to.base_url if call.management else to.serverless_url
            url = URL(f"{root}/{call.path}", encoded=False)
            if call.params:
                url = url.update_query(call.params)
            if len(self._urls) >= URL_CACHE:
                self._urls.clear()
            self._urls[key] = url
        return url

    def _proxy(self, url: URL) -> URL | None:
        """The proxy the environment names for ``url``'s origin, as httpx reads it
        (``HTTPS_PROXY``/``HTTP_PROXY``, else ``ALL_PROXY``; ``NO_PROXY`` excepted),
        looked up once per origin: aiohttp's own lookup (``trust_env``) costs two
        thread hops a request, and would add a ``.netrc`` login beside the key."""
        origin = url.origin()
        if origin in self._proxies:
            return self._proxies[origin]
        found: URL | None = None
        host = url.raw_host or ""
        if not urllib.request.proxy_bypass(host):
            named = urllib.request.getproxies_environment()
            value = named.get(url.scheme) or named.get("all")
            if value:
                found = URL(value if "://" in value else f"http://{value}")
                if found.scheme not in ("http", "https"):
                    raise ConfigError(
                        f"the environment names a {found.scheme} proxy for {url.host}; a map "
                        "sends through aiohttp, which speaks to HTTP proxies only: unset the "
                        "variable (ALL_PROXY or *_PROXY) or set NO_PROXY for this host"
                    )
        self._proxies[origin] = found
        return found

    def _timeout(self, timeout: float) -> aiohttp.ClientTimeout:
        found = self._timeouts.get(timeout)
        if found is None:
            found = aiohttp.ClientTimeout(
                total=None, sock_connect=min(timeout, CONNECT_TIMEOUT), sock_read=timeout
            )
            if len(self._timeouts) < 64:
                self._timeouts[timeout] = found
        return found

    async def send(self, call: Call, timeout: float) -> Reply:
        if self._closed:
            raise RuntimeError("the batch is over: its connections are closed")
        session = self._session or self._open_session()
        url = self._url(call)
        headers = self._destination.headers(call)
        # One turn of the loop first: a kept-alive connection the server has closed
        # since (its FIN waiting in the socket) is seen closed and not picked for this
        # request, which, written into it, may or may not have been read; httpcore
        # asks each idle connection's socket the same before reusing it.
        await asyncio.sleep(0)
        try:
            for _ in range(MAX_REDIRECTS + 1):
                async with asyncio.timeout(None) as writing:
                    data: Any = call.body
                    if data is not None and len(data) > WRITE_PIECE:
                        headers["Content-Length"] = str(len(data))
                        data = _paced(data, writing, timeout)
                    async with session.request(
                        call.method,
                        url,
                        data=data,
                        headers=headers,
                        timeout=self._timeout(timeout),
                        proxy=self._proxy(url),
                        allow_redirects=False,
                    ) as response:
                        location = response.headers.get("Location")
                        if response.status not in _REDIRECTS or location is None:
                            return await self._whole(call, response)
                        if call.method != "GET":
                            raise redirect_error(call, await self._whole(call, response))
                target = url.join(URL(location))
                if target.origin() != url.origin():  # as httpx: the key stays with its origin
                    headers.pop("Authorization", None)
                url = target
        except aiohttp.ClientError as exc:
            raise _translate(exc, httpx.Request(call.method, str(url))) from None
        except TimeoutError as exc:
            if writing.expired():
                raise httpx.WriteTimeout(
                    f"the server read nothing of the request for {timeout:g} s",
                    request=httpx.Request(call.method, str(url)),
                ) from None
            raise _translate(exc, httpx.Request(call.method, str(url))) from None
        raise redirect_error(call, None)

    async def _whole(self, call: Call, response: aiohttp.ClientResponse) -> Reply:
        limit = self._destination.max_answer_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise oversized_error(call, limit, f"announced {int(declared)} bytes")
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        decoder: _Decoder | None = None
        if encoding in ("gzip", "deflate"):
            decoder = _Decoder(encoding)
        chunks: list[bytes] = []
        raw = decoded = 0
        content = response.content
        try:
            while True:
                chunk = await content.read(_READ)
                if not chunk:
                    break
                raw += len(chunk)
                if raw > limit:
                    raise oversized_error(call=call, limit=limit, what="as sent")
                if decoder is not None:
                    chunk = decoder.decompress(chunk)
                decoded += len(chunk)
                if decoded > limit:
                    raise oversized_error(call=call, limit=limit, what="decoded")
                chunks.append(chunk)
            if decoder is not None:
                tail = decoder.flush()
                decoded += len(tail)
                if decoded > limit:
                    raise oversized_error(call=call, limit=limit, what="decoded")
                chunks.append(tail)
        except httpx.DecodingError as exc:
            raise undecodable(exc, httpx.Request(call.method, str(response.url))) from None
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return Reply(
            response.status,
            response.reason or "",
            httpx.Headers(list(response.raw_headers)),
            body,
            response.charset,
        )

    async def aclose(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()
