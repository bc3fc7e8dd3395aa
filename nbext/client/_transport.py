"""How a ``Call`` reaches the service: httpx, for both clients and their maps alike.

What this adds to httpx: docs/architecture.md#a-job-call-through-the-client. Failures stay
httpx's transport exceptions, which the flows retry on and describe without chaining."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx
from httpx_sse import EventSource, ServerSentEvent

from ._calls import Call, Reply, oversized_error, redirect_error
from ._errors import ConfigError

log = logging.getLogger("nbext.client")

CONNECT_TIMEOUT = 10.0
"""Longest wait for a connection to open, however long the request may take."""
KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept for reuse: less than the 5 s after which many
servers (uvicorn's default) drop idle connections, so a request is not written into
a connection the server is closing at that very moment (for /run, a request that may or
may not have been read is exactly the doubt the client must not create)."""
LIMITS = httpx.Limits(
    max_connections=256, max_keepalive_connections=256, keepalive_expiry=KEEPALIVE_EXPIRY
)
"""Wide enough for a caller's own concurrency; every connection may be kept."""
MAX_ANSWER_BYTES = 256 * 1024 * 1024
"""The largest answer the client reads, raw or decoded. The service's largest answers
carry a job's output (a /runsync or /status answer with images or audio in it, whose
input alone may be 20 MB), far below this; past it the server is broken or hostile."""

STARTED = "nbext_started"
"""The request extension holding when the request was made (``perf_counter``)."""
_HEADER_VALUE = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")
"""What the client sends in a header: visible ASCII, single spaces or tabs inside."""


def check_header_value(value: str, what: str) -> None:
    """Refuse a header value HTTP cannot carry, saying what is wrong but never the value
    (h11's own complaint would quote the key)."""
    if _HEADER_VALUE.fullmatch(value):
        return
    for position, char in enumerate(value, 1):
        if char in "\r\n":
            problem = "a line break"
        elif ord(char) > 0x7E:
            problem = "a character outside ASCII"
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            problem = "a control character"
        else:
            continue
        raise ConfigError(
            f"{what} contains {problem} (character {position}), which an HTTP header cannot "
            "carry; nothing was sent"
        )
    raise ConfigError(f"{what} is not a valid HTTP header value; nothing was sent")


class _Capped:
    """Counts an answer's bytes as they arrive; past the cap, the call's error."""

    __slots__ = ("call", "chunks", "decoded", "limit", "response")

    def __init__(self, call: Call, response: httpx.Response, limit: int) -> None:
        self.call, self.response, self.limit = call, response, limit
        self.chunks: list[bytes] = []
        self.decoded = 0
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise oversized_error(call, limit, f"announced {int(declared)} bytes")

    def add(self, chunk: bytes) -> None:
        self.decoded += len(chunk)
        if self.decoded > self.limit:
            raise oversized_error(call=self.call, limit=self.limit, what="decoded")
        if self.response.num_bytes_downloaded > self.limit:
            raise oversized_error(call=self.call, limit=self.limit, what="as sent")
        self.chunks.append(chunk)

    def reply(self) -> Reply:
        """The answer, read and closed; a debug line says what, its status, how long."""
        response = self.response
        if log.isEnabledFor(logging.DEBUG):  # describing the call costs more than its reply
            took = (time.perf_counter() - response.request.extensions[STARTED]) * 1000
            log.debug("%s -> %d in %.1f ms", self.call.describe(), response.status_code, took)
        content = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        return Reply(
            response.status_code,
            response.reason_phrase,
            response.headers,
            content,
            response.charset_encoding,
        )


def _is_event_stream(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return response.status_code < 300 and kind == "text/event-stream"


class EventStream:
    """An open Server-Sent Events answer of a ``Client``, read one event at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self.status_code = response.status_code
        self.response = response
        self._events = EventSource(response).iter_sse()

    def next(self) -> ServerSentEvent | None:
        return next(self._events, None)

    def close(self) -> None:
        self.response.close()


_CLOSING: set[asyncio.Task[None]] = set()
"""Closings in progress (the loop keeps only weak references to its tasks)."""


class AsyncEventStream:
    """An open Server-Sent Events answer of an ``AsyncClient``; ``close`` (a flow's
    cleanup cannot await) schedules the closing on the running loop, if any."""

    def __init__(self, response: httpx.Response, bound: float | None) -> None:
        self.status_code = response.status_code
        self.response = response
        self._events = EventSource(response).aiter_sse()
        self._bound = bound

    async def next(self) -> ServerSentEvent | None:
        try:
            if self._bound is None:
                return await anext(self._events)
            async with asyncio.timeout(self._bound):
                return await anext(self._events)
        except StopAsyncIteration:
            return None
        except TimeoutError:
            pass
        raise httpx.ReadTimeout(f"no event within {self._bound:g} s")

    async def _aclose(self) -> None:
        await self._events.aclose()
        await self.response.aclose()

    def close(self) -> None:
        try:
            task = asyncio.get_running_loop().create_task(self._aclose())
        except RuntimeError:
            return
        _CLOSING.add(task)
        task.add_done_callback(_CLOSING.discard)


@dataclass(frozen=True)
class Destination:
    """Where calls go and how they are signed: shared by a client's senders."""

    serverless_url: str
    base_url: str
    user_agent: str
    authorization: Callable[[], str]

    def headers(self, call: Call) -> dict[str, str]:
        """What every request says of itself, signed with the key, plus the call's own."""
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "User-Agent": self.user_agent,
            "Authorization": self.authorization(),
        }
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        if call.headers:
            headers.update(call.headers)
        return headers


def undecodable(exc: httpx.DecodingError, request: httpx.Request) -> httpx.RemoteProtocolError:
    """A body that does not decode as its ``Content-Encoding`` says: a broken protocol,
    so a transport failure like a reset mid-body (re-sent only where that is harmless)."""
    return httpx.RemoteProtocolError(
        f"the answer's body does not decode as its Content-Encoding says ({exc})",
        request=request,
    )


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
T = TypeVar("T")


class _Sender(Generic[HttpT]):
    """What both senders hold: an httpx client (closed with ours only if we made it),
    and how to address and sign each call."""

    def __init__(self, http: HttpT, owns: bool, destination: Destination) -> None:
        self.http: HttpT = http
        self.destination = destination
        self._owns = owns

    def _request(self, call: Call, timeout: float) -> httpx.Request:
        headers = self.destination.headers(call)
        limits = httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT))  # per operation
        # The caller's client (not ours) adds its own headers and cookies to each request.
        build = httpx.Request if self._owns else self.http.build_request
        return build(
            call.method,
            self._url(call),
            content=call.body,
            headers=headers,
            extensions={"timeout": limits.as_dict(), STARTED: time.perf_counter()},
        )

    def _url(self, call: Call) -> httpx.URL:
        """A management call carries its query in its path (``params`` is empty)."""
        root = self.destination.base_url if call.management else self.destination.serverless_url
        url = httpx.URL(f"{root}/{call.path}")
        return url.copy_merge_params(call.params) if call.params else url


class Sender(_Sender[httpx.Client]):
    """``Client``'s requests, through an ``httpx.Client``."""

    def send(self, call: Call, timeout: float) -> Reply:
        return self._whole(call, self._open(call, timeout))

    def listen(self, call: Call, idle: float) -> Reply | EventStream:
        response = self._open(call, idle)
        return EventStream(response) if _is_event_stream(response) else self._whole(call, response)

    def _open(self, call: Call, timeout: float) -> httpx.Response:
        request = self._request(call, timeout)
        follow = call.method == "GET"
        try:
            return self.http.send(request, stream=True, follow_redirects=follow)
        except httpx.TooManyRedirects:
            raise redirect_error(call, None) from None

    def _whole(self, call: Call, response: httpx.Response) -> Reply:
        try:
            capped = _Capped(call, response, MAX_ANSWER_BYTES)
            for chunk in response.iter_bytes():
                capped.add(chunk)
        except httpx.DecodingError as exc:
            raise undecodable(exc, response.request) from None
        finally:
            response.close()
        return capped.reply()

    def close(self) -> None:
        if self._owns:
            self.http.close()


class AsyncSender(_Sender[httpx.AsyncClient]):
    """``AsyncClient``'s requests, through an ``httpx.AsyncClient``.

    ``bounded``: the caller's transport may ignore httpx's timeouts (``ASGITransport``
    does), so the whole exchange is bounded too. An httpx client of our own making is
    replaced when the loop changes (its connections belong to the loop that opened them).
    """

    def __init__(
        self, http: httpx.AsyncClient, owns: bool, destination: Destination, bounded: bool
    ) -> None:
        super().__init__(http, owns, destination)
        self._bounded = bounded
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _adopt_loop(self) -> None:
        if self._loop is asyncio.get_running_loop():
            return
        if self._closed:
            raise RuntimeError("the client is closed: make a new one to send more requests")
        if self._loop is not None and self._owns and not self._bounded:
            # the old loop's connections cannot serve this one
            self.http = own_http(httpx.AsyncClient, None)
        self._loop = asyncio.get_running_loop()

    async def _within(self, seconds: float, step: Awaitable[T]) -> T:
        """``step``, bounded as a whole when the transport may ignore httpx's timeouts."""
        if not self._bounded:
            return await step
        try:
            async with asyncio.timeout(seconds + 0.05):
                return await step
        except TimeoutError:
            pass
        raise httpx.ReadTimeout(f"no answer within {seconds:g} s")

    async def send(self, call: Call, timeout: float) -> Reply:
        self._adopt_loop()
        return await self._within(timeout, self._exchange(call, timeout))

    async def _exchange(self, call: Call, timeout: float) -> Reply:
        return await self._whole(call, await self._open(call, timeout))

    async def _open(self, call: Call, timeout: float) -> httpx.Response:
        request = self._request(call, timeout)
        follow = call.method == "GET"
        try:
            return await self.http.send(request, stream=True, follow_redirects=follow)
        except httpx.TooManyRedirects:
            raise redirect_error(call, None) from None

    async def _whole(self, call: Call, response: httpx.Response) -> Reply:
        try:
            capped = _Capped(call, response, MAX_ANSWER_BYTES)
            async for chunk in response.aiter_bytes():
                capped.add(chunk)
        except httpx.DecodingError as exc:
            raise undecodable(exc, response.request) from None
        finally:
            await response.aclose()
        return capped.reply()

    async def listen(self, call: Call, idle: float) -> Reply | AsyncEventStream:
        self._adopt_loop()
        response = await self._within(idle, self._open(call, idle))
        if _is_event_stream(response):
            return AsyncEventStream(response, idle if self._bounded else None)
        return await self._whole(call, response)

    async def aclose(self) -> None:
        self._closed = True
        if not self._owns:
            return
        if self._loop is not None and self._loop is not asyncio.get_running_loop():
            return  # its connections went with the loop they belonged to
        await self.http.aclose()


def own_http(kind: type[HttpT], transport: Any) -> HttpT:
    """The httpx client a client makes for itself, with proxies from the environment
    (httpx's ImportError for a SOCKS proxy without socksio made one line to act on)."""
    try:
        return kind(transport=transport, limits=LIMITS)
    except ImportError as exc:
        if "socksio" not in str(exc):
            raise ConfigError(f"the HTTP stack could not be set up: {exc}") from None
        raise ConfigError(
            "the environment names a SOCKS proxy (ALL_PROXY or *_PROXY), which needs the "
            "'socksio' package: pip install 'httpx[socks]', or unset the variable"
        ) from None
