"""``Client`` and ``AsyncClient``: configuration, one connection pool, and a driver each.

The two classes differ only in their driver (how a flow's effects are performed); what
they send and how they read answers is in ``_calls`` and ``_flows``, and how it reaches
the service (the client's own keep-alive connections, or httpx) in ``_transport``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
import random
import time
from collections.abc import AsyncGenerator, Generator
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

import httpx

from ._config import ClientConfig, Secret, load_config
from ._drive import drive, log_answer
from ._flows import Context, Effect, Emit, Flow, Send, Sleep
from ._jobs import AsyncEndpoint, Endpoint
from ._resources import AsyncManagement, SyncManagement
from ._retry import RetryPolicy
from ._transport import (
    AsyncHttpxSender,
    AsyncNativeSender,
    AsyncSender,
    HttpxSender,
    NativeSender,
    Roots,
    SyncSender,
    Urls,
    native_roots,
)

log = logging.getLogger("nbext.client")
T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for an answer to a call the service should answer at once."""
DEFAULT_WAIT_TIMEOUT = 900.0
"""Default deadline of ``wait``, ``stream`` and ``run_sync``: the default execution
timeout (10 min) plus 5 min for queueing. Pass ``timeout=`` for longer jobs."""
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)
"""When httpx carries the requests: wide enough for ``map(concurrency=...)``."""


def _user_agent() -> str:
    try:
        return f"nbext/{importlib.metadata.version('nbext')}"
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "nbext"


USER_AGENT = _user_agent()


class SyncClock(Protocol):
    """Time as the sync client sees it; tests substitute a simulated one.

    Sleeps are to an instant, not for a duration: a pause decided at ``t`` ends at
    ``t + d`` however late the sleeper gets to it.
    """

    def now(self) -> float: ...

    def sleep_until(self, instant: float) -> None: ...


class AsyncClock(Protocol):
    """Time as the async client sees it; see ``SyncClock``."""

    def now(self) -> float: ...

    async def sleep_until(self, instant: float) -> None: ...


class _MonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, instant: float) -> None:
        time.sleep(max(0.0, instant - time.monotonic()))


class _AsyncMonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep_until(self, instant: float) -> None:
        await asyncio.sleep(max(0.0, instant - time.monotonic()))


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer KEY``, added per request so the key is in no client's headers.

    The clients put ``header()`` straight into each request (cheaper than httpx's auth
    flow); as an ``httpx.Auth`` it also serves callers who build their own requests.
    """

    def __init__(self, secret: Secret) -> None:
        self._secret = secret

    def header(self) -> str:
        """The header's value, built per request (never stored where a repr could show it)."""
        return f"Bearer {self._secret.reveal()}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self.header()
        yield request

    def __repr__(self) -> str:
        return f"BearerAuth({self._secret.masked!r})"


class _Base:
    """Settings and the flow context shared by both clients."""

    _ctx: Context

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        serverless_url: str | None,
        timeout: float,
        max_retries: int | None,
        wait_timeout: float,
        retry_policy: RetryPolicy | None,
        config_file: str | os.PathLike[str] | None,
        now: Any,
    ) -> None:
        self.config: ClientConfig = load_config(
            api_key,
            base_url=base_url,
            serverless_url=serverless_url,
            config_file=config_file,
            require_key=True,
        )
        assert self.config.api_key is not None
        policy = retry_policy or RetryPolicy()
        if max_retries is not None:
            policy = RetryPolicy(
                max_retries=max_retries,
                base_delay=policy.base_delay,
                max_delay=policy.max_delay,
                max_retry_after=policy.max_retry_after,
            )
        self.retry_policy = policy
        self._auth = BearerAuth(self.config.api_key)
        self._ctx = Context(
            policy=policy,
            secret=self.config.api_key,
            key_source=self.config.key_source,
            timeout=float(timeout),
            wait_timeout=float(wait_timeout),
            now=now,
            rand=random.random,
        )

    @property
    def serverless_url(self) -> str:
        return self.config.serverless_url

    @property
    def base_url(self) -> str:
        return self.config.base_url

    @property
    def masked_key(self) -> str:
        assert self.config.api_key is not None
        return self.config.api_key.masked

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(serverless_url={self.serverless_url!r}, "
            f"base_url={self.base_url!r}, api_key={self.masked_key!r})"
        )

    def _urls(self) -> Urls:
        return Urls(self.serverless_url, self.base_url)

    def _native_roots(self, substitute: object) -> Roots | None:
        """Where the client's own connections go; None when httpx must carry the calls.

        httpx carries them when the caller substitutes the HTTP layer, or when the
        environment configures a proxy for either URL (see ``_transport``).
        """
        if substitute is not None:
            return None
        return native_roots(self.serverless_url, self.base_url)


class Client(_Base, SyncManagement):
    """The service, blocking. Thread-safe; one connection pool.

    Jobs through ``client.endpoint(id)``; the management interface through
    ``client.templates``, ``pods``, ``endpoints``, ``network_volumes``,
    ``registry_auths`` and ``billing`` (calls under ``base_url``).

    ``api_key``, ``base_url`` and ``serverless_url`` fall back to ``RUNPOD_API_KEY``,
    ``RUNPOD_REST_BASE_URL``, ``RUNPOD_ENDPOINT_BASE_URL``, then ``~/.runpod/config.toml``,
    then the real service. ``timeout`` bounds one plain request; ``wait_timeout`` is the
    default deadline of waits and streams.

    Requests go through the client's own keep-alive connections (``_transport`` says
    why); ``transport`` or ``http_client`` hand them to httpx instead (tests, custom
    HTTP stacks), as does a proxy set in the environment. A given ``http_client`` is
    not closed by ``close()``. A ``map`` runs on its own event loop with connections of
    its own, closed when it ends.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        serverless_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        retry_policy: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        config_file: str | os.PathLike[str] | None = None,
        clock: SyncClock | None = None,
    ) -> None:
        self._clock: SyncClock = clock or _MonotonicClock()
        self._real_time = clock is None
        """Waits are plain sleeps on the monotonic clock (a batch may sleep on its loop)."""
        super().__init__(
            api_key,
            base_url,
            serverless_url,
            timeout,
            max_retries,
            wait_timeout,
            retry_policy,
            config_file,
            self._clock.now,
        )
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client= or transport=, not both")
        self._http: httpx.Client | None = None
        self._sender: SyncSender
        roots = self._native_roots(http_client or transport)
        if roots is not None:
            self._sender = NativeSender(roots, USER_AGENT, self._auth.header)
        else:
            self._http = http_client or httpx.Client(transport=transport, limits=LIMITS)
            self._sender = HttpxSender(
                self._http, http_client is None, self._urls(), USER_AGENT, self._auth.header
            )

    def endpoint(self, endpoint_id: str) -> Endpoint:
        """The queue-based endpoint ``endpoint_id`` (no request is made)."""
        return Endpoint(self, endpoint_id)

    def close(self) -> None:
        self._sender.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ---- the driver ----------------------------------------------------------------------

    def _perform(self, effect: Effect) -> Any:
        if isinstance(effect, Sleep):
            self._clock.sleep_until(effect.until)
            return None
        if isinstance(effect, Send):
            if not log.isEnabledFor(logging.DEBUG):
                return self._sender.send(effect.call, effect.timeout)
            started = time.perf_counter()
            response = self._sender.send(effect.call, effect.timeout)
            log_answer(effect, response.status_code, started)
            return response
        raise TypeError(f"unexpected effect {effect!r}")

    def _run(self, flow: Flow[T]) -> T:
        """Perform ``flow``'s effects until it returns."""
        steps = self._steps(flow)
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
        steps.close()
        raise TypeError("a flow run to completion must not emit")

    def _iterate(self, flow: Flow[None]) -> Generator[Any, None, None]:
        """Perform ``flow``'s effects, yielding what it emits."""
        yield from self._steps(flow)

    def _steps(self, flow: Flow[T]) -> Generator[Any, None, T]:
        value: Any = None
        error: httpx.TransportError | None = None
        try:
            while True:
                try:
                    effect = flow.send(value) if error is None else flow.throw(error)
                except StopIteration as done:
                    result: T = done.value
                    return result
                value, error = None, None
                if isinstance(effect, Emit):
                    yield effect.value
                    continue
                try:
                    value = self._perform(effect)
                except httpx.TransportError as exc:
                    error = exc
        finally:
            flow.close()


class AsyncClient(_Base, AsyncManagement):
    """The service for ``await``: ``Client``'s twin, method for method (resources too).

    Runs on asyncio (the kernel's loop in a notebook); one connection pool.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        serverless_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        retry_policy: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        config_file: str | os.PathLike[str] | None = None,
        clock: AsyncClock | None = None,
    ) -> None:
        self._clock: AsyncClock = clock or _AsyncMonotonicClock()
        super().__init__(
            api_key,
            base_url,
            serverless_url,
            timeout,
            max_retries,
            wait_timeout,
            retry_policy,
            config_file,
            self._clock.now,
        )
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client= or transport=, not both")
        self._http: httpx.AsyncClient | None = None
        self._sender: AsyncSender
        roots = self._native_roots(http_client or transport)
        if roots is not None:
            self._sender = AsyncNativeSender(roots, USER_AGENT, self._auth.header)
        else:
            self._http = http_client or httpx.AsyncClient(transport=transport, limits=LIMITS)
            self._sender = AsyncHttpxSender(
                self._http, http_client is None, self._urls(), USER_AGENT, self._auth.header
            )

    def endpoint(self, endpoint_id: str) -> AsyncEndpoint:
        """The queue-based endpoint ``endpoint_id`` (no request is made)."""
        return AsyncEndpoint(self, endpoint_id)

    async def aclose(self) -> None:
        await self._sender.aclose()

    close = aclose

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ---- the driver ----------------------------------------------------------------------

    async def _perform(self, effect: Effect) -> Any:
        if isinstance(effect, Sleep):
            await self._clock.sleep_until(effect.until)
            return None
        if isinstance(effect, Send):
            if not log.isEnabledFor(logging.DEBUG):
                return await self._sender.send(effect.call, effect.timeout)
            started = time.perf_counter()
            response = await self._sender.send(effect.call, effect.timeout)
            log_answer(effect, response.status_code, started)
            return response
        raise TypeError(f"unexpected effect {effect!r}")

    async def _run(self, flow: Flow[T]) -> T:
        """Perform ``flow``'s effects until it returns."""
        return await drive(flow, self._perform)

    async def _iterate(self, flow: Flow[None]) -> AsyncGenerator[Any, None]:
        """Perform ``flow``'s effects, yielding what it emits."""
        value: Any = None
        error: httpx.TransportError | None = None
        try:
            while True:
                try:
                    effect = flow.send(value) if error is None else flow.throw(error)
                except StopIteration:
                    return
                value, error = None, None
                if isinstance(effect, Emit):
                    yield effect.value
                    continue
                try:
                    value = await self._perform(effect)
                except httpx.TransportError as exc:
                    error = exc
        finally:
            flow.close()
