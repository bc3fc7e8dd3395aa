"""How a ``Call`` reaches the service: the client's own connections, or httpx.

By default both clients send through their own keep-alive connections (``_sockets``,
``_aio``), which cost a tenth of what httpx costs per request; that is what lets a
batch run thousands of jobs a second. httpx is used instead when it is asked for or
needed: a caller's ``http_client=`` or ``transport=`` (tests, mocks, in-process apps),
and a proxy configured in the environment (``HTTPS_PROXY``...), which httpx honours and
the client's own connections do not attempt to.

Either way a sender returns an object with the reading surface of ``httpx.Response``
(``_calls.Answer``) and raises httpx's transport exceptions, so the flows cannot tell
the two apart.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar
from urllib.parse import urlencode, urlsplit

import httpx

from ._aio import AioPool
from ._calls import Answer, Call
from ._sockets import SocketPool
from ._wire import ACCEPT_ENCODING, Origin, encode_request

CONNECT_TIMEOUT = 10.0
"""Longest wait for a connection to open, however long the request may take."""


def uses_proxy(url: str) -> bool:
    """Whether the environment routes ``url`` through a proxy (then httpx carries it)."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


@dataclass(frozen=True)
class Roots:
    """Where calls go: jobs under ``serverless_url``, management calls under ``base_url``."""

    jobs: Origin
    management: Origin

    def of(self, call: Call) -> Origin:
        return self.management if call.management else self.jobs


def native_roots(serverless_url: str, base_url: str) -> Roots | None:
    """The client's own connections can serve both URLs; None means httpx must."""
    try:
        roots = Roots(Origin.parse(serverless_url), Origin.parse(base_url))
    except ValueError:
        return None  # httpx then reports the odd URL in its own words
    if uses_proxy(serverless_url) or uses_proxy(base_url):
        return None
    return roots


class SyncSender(Protocol):
    def send(self, call: Call, timeout: float) -> Answer: ...

    def close(self) -> None: ...


class AsyncSender(Protocol):
    async def send(self, call: Call, timeout: float) -> Answer: ...

    async def aclose(self) -> None: ...


def _target(origin: Origin, call: Call) -> str:
    target = f"{origin.prefix}/{call.path}"
    return f"{target}?{urlencode(call.params)}" if call.params else target


def _encode(origin: Origin, call: Call, user_agent: str, authorization: str) -> bytes:
    headers = [
        ("Accept", "application/json"),
        ("Accept-Encoding", ACCEPT_ENCODING),
        ("User-Agent", user_agent),
        ("Authorization", authorization),
    ]
    if call.body is not None:
        headers.append(("Content-Type", "application/json"))
    target = _target(origin, call)
    return encode_request(call.method, target, origin.host_header, headers, call.body)


class NativeSender:
    """``Client``'s own connections. The Authorization header is written per request."""

    def __init__(self, roots: Roots, user_agent: str, authorization: Callable[[], str]) -> None:
        self.roots = roots
        self.pool = SocketPool()
        self._user_agent = user_agent
        self._authorization = authorization

    def send(self, call: Call, timeout: float) -> Answer:
        origin = self.roots.of(call)
        data = _encode(origin, call, self._user_agent, self._authorization())
        connect = min(timeout, CONNECT_TIMEOUT)
        return self.pool.request(origin, data, timeout, connect, call.method == "HEAD")

    def asynchronous(self) -> AsyncNativeSender:
        """The same destinations and headers, for a loop (a sync batch's own connections)."""
        return AsyncNativeSender(self.roots, self._user_agent, self._authorization)

    def close(self) -> None:
        self.pool.close()


class AsyncNativeSender:
    """``AsyncClient``'s own connections, on the loop that awaits them."""

    def __init__(self, roots: Roots, user_agent: str, authorization: Callable[[], str]) -> None:
        self.roots = roots
        self.pool = AioPool()
        self._user_agent = user_agent
        self._authorization = authorization

    async def send(self, call: Call, timeout: float) -> Answer:
        origin = self.roots.of(call)
        data = _encode(origin, call, self._user_agent, self._authorization())
        connect = min(timeout, CONNECT_TIMEOUT)
        return await self.pool.request(origin, data, timeout, connect, call.method == "HEAD")

    async def aclose(self) -> None:
        await self.pool.aclose()


@dataclass(frozen=True)
class Urls:
    """The two roots as URLs, for httpx."""

    serverless_url: str
    base_url: str


def _build(
    http: httpx.Client | httpx.AsyncClient,
    urls: Urls,
    call: Call,
    timeout: float,
    user_agent: str,
    authorization: str,
) -> httpx.Request:
    headers = {
        "Accept": "application/json",
        "User-Agent": user_agent,
        "Authorization": authorization,
    }
    if call.body is not None:
        headers["Content-Type"] = "application/json"
    root = urls.base_url if call.management else urls.serverless_url
    return http.build_request(
        call.method,
        f"{root}/{call.path}",
        params=dict(call.params) or None,
        content=call.body,
        headers=headers,
        timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
    )


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)


class _HttpxSenderBase(Generic[HttpT]):
    """What both httpx senders hold: the caller's (or our own) httpx client, and how to
    address and sign each call; it is closed with ours only if we made it."""

    def __init__(
        self,
        http: HttpT,
        owns: bool,
        urls: Urls,
        user_agent: str,
        authorization: Callable[[], str],
    ) -> None:
        self.http: HttpT = http
        self._owns = owns
        self._urls = urls
        self._user_agent = user_agent
        self._authorization = authorization


class HttpxSender(_HttpxSenderBase[httpx.Client]):
    """Through an ``httpx.Client``; closed with the client only if the client made it."""

    def send(self, call: Call, timeout: float) -> Answer:
        request = _build(
            self.http, self._urls, call, timeout, self._user_agent, self._authorization()
        )
        return self.http.send(request)

    def close(self) -> None:
        if self._owns:
            self.http.close()


class AsyncHttpxSender(_HttpxSenderBase[httpx.AsyncClient]):
    """Through an ``httpx.AsyncClient``."""

    async def send(self, call: Call, timeout: float) -> Answer:
        request = _build(
            self.http, self._urls, call, timeout, self._user_agent, self._authorization()
        )
        try:
            # In-process transports (httpx.ASGITransport) ignore httpx's timeouts.
            async with asyncio.timeout(timeout + 0.05):
                return await self.http.send(request)
        except TimeoutError:
            pass
        raise httpx.ReadTimeout(f"no answer within {timeout:g} s")

    async def aclose(self) -> None:
        if self._owns:
            await self.http.aclose()
