"""``Client`` and ``AsyncClient``: configuration, one connection pool, and a driver each
(they differ only in the driver: docs/architecture.md#a-job-call-through-the-client)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any, Literal, Protocol, Self, TypedDict, TypeVar, Unpack

import httpx

from nbext._version import __version__
from nbext.models import JobResult

from ._config import ClientConfig, Secret, load_config
from ._cost import Budget, Prices, Spending
from ._drive import Steps, aiterate, arun, iterate, run
from ._flows import DEFAULT_CALL_TIMEOUT, Context, Effect, Flow, Listen, NextEvent, Send, Sleep
from ._jobs import AsyncEndpoint, Endpoint
from ._recording import Pricer, Recording
from ._resources import AsyncManagement, SyncManagement
from ._resources.rest import V2
from ._retry import RetryPolicy
from ._transport import (
    AsyncSender,
    Destination,
    Sender,
    check_header_value,
    own_http,
)

T = TypeVar("T")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for an answer to a call the service should answer at once."""
DEFAULT_WAIT_TIMEOUT = 900.0
"""Default deadline of ``wait``, ``stream`` and ``run_sync``: the default execution
timeout (10 min) plus 5 min for queueing. Pass ``timeout=`` for longer jobs."""


USER_AGENT = f"nbext/{__version__}"


class ClientSettings(TypedDict, total=False):
    """The settings both clients take by keyword, described on ``Client``."""

    base_url: str | None
    serverless_url: str | None
    timeout: float
    call_timeout: float | None
    max_retries: int | None
    wait_timeout: float
    retry_policy: RetryPolicy | None
    config_file: str | os.PathLike[str] | None
    budget_usd: float | None


class SyncClock(Protocol):
    """Time as the sync client sees it; tests substitute a simulated one. Sleeps are to
    an instant (``_flows.Sleep`` says why)."""

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

    The clients call ``header()`` (cheaper than httpx's auth flow); as an ``httpx.Auth``
    it also serves callers who build their own requests."""

    def __init__(self, secret: Secret) -> None:
        self._secret = secret

    def header(self) -> str:
        """Built per request, never stored where a repr could show it."""
        return f"Bearer {self._secret.reveal()}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self.header()
        yield request

    def __repr__(self) -> str:
        return f"BearerAuth({self._secret.masked!r})"


class _Base:
    """Settings and the flow context shared by both clients."""

    _ctx: Context
    _clock: SyncClock | AsyncClock
    _sender: Sender | AsyncSender

    def __init__(
        self,
        api_key: str | None,
        now: Any,
        *,
        base_url: str | None = None,
        serverless_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        call_timeout: float | None = None,
        max_retries: int | None = None,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        retry_policy: RetryPolicy | None = None,
        config_file: str | os.PathLike[str] | None = None,
        budget_usd: float | None = None,
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
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.retry_policy = policy
        self._auth = BearerAuth(self.config.api_key)
        source = f" (from {self.config.key_source})" if self.config.key_source else ""
        check_header_value(self.config.api_key.reveal(), f"the API key{source}")
        if call_timeout is None:
            call_timeout = max(DEFAULT_CALL_TIMEOUT, float(timeout))
        if not call_timeout > 0:
            raise ValueError(f"call_timeout must be > 0 seconds, got {call_timeout}")
        self._ctx = Context(
            policy=policy,
            secret=self.config.api_key,
            key_source=self.config.key_source,
            timeout=float(timeout),
            wait_timeout=float(wait_timeout),
            now=now,
            rand=random.random,
            call_timeout=float(call_timeout),
        )
        self._api = V2()
        self._spending = Spending(Budget(budget_usd), Prices(self._api))
        self._ctx.hooks = self._spending
        self._lb_clients: dict[tuple[str, bool], httpx.Client | httpx.AsyncClient] = {}
        """Each endpoint's ``http()`` (False) and ``async_http()`` (True), made once and
        reused: one connection pool per endpoint, as httpx advises."""

    @property
    def budget(self) -> Budget:
        """What the jobs this client started have cost, and its cap (``budget.budget_usd``).

        Assign another client's to count both against one cap (the notebook's blocking and
        async clients do). docs/behaviour.md#budget.
        """
        return self._spending.budget

    @budget.setter
    def budget(self, budget: Budget) -> None:
        if not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget (another client's .budget), got {budget!r}")
        self._spending.budget = budget

    def on_job_result(self, listener: Callable[[JobResult], None]) -> Callable[[], None]:
        """Call ``listener`` with every job state this client reads, whatever asked
        (``status``, ``wait``, a submission, each result of ``map``...); returns the
        unsubscribe function. It runs on the caller's thread, inside the call; one that
        raises is logged (logger ``nbext.client``) and the call goes on.
        """
        self._ctx.listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._ctx.listeners:
                self._ctx.listeners.remove(listener)

        return unsubscribe

    def record(self, path: str | os.PathLike[str]) -> Recording:
        """Record the jobs this client submits until ``stop()`` (or the ``with`` block's
        end) writes them to ``path``, a JSON Lines file the emulator replays
        (``python -m nbext.emulator --replay PATH``; docs/behaviour.md#recordings)."""
        host = httpx.URL(self.serverless_url).host
        service: Literal["cloud", "local"] = "local" if host in LOOPBACK else "cloud"
        assert self.config.api_key is not None
        self._ctx.recording = Recording(path, service, self.config.api_key, self._pricer())
        return self._ctx.recording

    def _pricer(self) -> Pricer | None:
        """How a recording prices the calls the service did not (a blocking client's)."""
        return None

    @property
    def recording(self) -> Recording | None:
        """The recording this client's jobs go to while it records; assign another
        client's to record both into one file (the notebook's clients do)."""
        recording = self._ctx.recording
        return recording if recording is not None and recording.recording else None

    @recording.setter
    def recording(self, recording: Recording | None) -> None:
        self._ctx.recording = recording

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

    def _perform(self, effect: Effect) -> Any:
        """Perform ``effect``: its value, or (an ``AsyncClient``'s) the awaitable giving it."""
        if isinstance(effect, Sleep):
            return self._clock.sleep_until(effect.until)
        if isinstance(effect, Send):
            return self._sender.send(effect.call, effect.timeout)
        if isinstance(effect, NextEvent):
            return effect.stream.next()
        if isinstance(effect, Listen):
            return self._sender.listen(effect.call, effect.idle)
        raise TypeError(f"unexpected effect {effect!r}")

    def _destination(self) -> Destination:
        return Destination(self.serverless_url, self.base_url, USER_AGENT, self._auth.header)


class Client(_Base, SyncManagement):
    """The service, blocking. Thread-safe; one connection pool.

    Jobs through ``client.endpoint(id)``; the management interface through
    ``client.templates``, ``pods``, ``endpoints``, ``network_volumes``,
    ``registry_auths`` and ``billing`` (calls under ``base_url``).

    ``api_key``, ``base_url`` and ``serverless_url`` fall back to ``RUNPOD_API_KEY``,
    ``RUNPOD_REST_BASE_URL``, ``RUNPOD_ENDPOINT_BASE_URL``, then ``~/.runpod/config.toml``,
    then the real service. The management interface is REST v2 (the service retired v1
    on 2026-11-15; a ``base_url`` ending in ``/v1`` is refused).

    Time limits, each in seconds:

    - ``timeout`` bounds each operation of a request: connecting (at most 10 s), each
      write, each read, a wait for a free connection (httpx's per-operation timeouts; a
      slow upload or a long answer is fine while bytes keep moving).
    - ``call_timeout`` bounds a whole call, retries and their pauses included (by
      default the larger of 120 s and ``timeout``): a call that has not succeeded by
      then raises what stopped it, or ``Timeout``. A 429 whose Retry-After would end
      past it raises ``RateLimited`` at once, carrying the wait in ``retry_after``.
    - ``wait_timeout`` is the default deadline of waits, streams and ``run_sync``,
      which take the place of ``call_timeout`` for them.

    ``budget_usd`` caps what the jobs this client starts may cost (dollars; None, the
    default, for no cap): past it a submission raises ``BudgetExceeded`` before it is
    sent, and a map stops and cancels its jobs in flight (``client.budget`` says what was
    spent; docs/behaviour.md#budget).

    Requests go through httpx, with proxies and CA certificates from the environment
    (``HTTPS_PROXY``, ``SSL_CERT_FILE``...); ``http_client`` (not closed by ``close()``)
    or ``transport`` substitute the HTTP layer (tests, custom stacks). A ``map`` runs its
    jobs from threads of its own, through this client's connection pool.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: SyncClock | None = None,
        **settings: Unpack[ClientSettings],
    ) -> None:
        self._clock: SyncClock = clock or _MonotonicClock()
        self._real_time = clock is None
        """Waits are plain sleeps on the monotonic clock (a map's workers cut theirs short
        when the map is left)."""
        super().__init__(api_key, self._clock.now, **settings)
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client= or transport=, not both")
        self._http = http_client or own_http(httpx.Client, transport)
        self._sender: Sender = Sender(self._http, http_client is None, self._destination())

    def endpoint(self, endpoint_id: str) -> Endpoint:
        """The queue-based endpoint ``endpoint_id`` (no request is made)."""
        return Endpoint(self, endpoint_id)

    def close(self) -> None:
        """Close the connections, and every endpoint's ``http()`` (an ``async_http()``
        needs its loop: close it with ``async with``)."""
        for made in self._lb_clients.values():
            if isinstance(made, httpx.Client):
                made.close()
        self._sender.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the driver ----------------------------------------------------------------------

    def _pricer(self) -> Pricer:
        def cost(endpoint_id: str, result: JobResult) -> float | None:
            found = self._run(self._spending.cost(self._ctx, endpoint_id, result))
            return found.usd if found is not None else None

        return cost

    def _run(self, flow: Flow[T]) -> T:
        """Perform ``flow``'s effects until it returns."""
        return run(flow, self._perform)

    def _iterate(self, flow: Flow[None]) -> Generator[Any, None, None]:
        """Perform ``flow``'s effects, yielding what it emits."""
        return iterate(Steps(flow), self._perform)


class AsyncClient(_Base, AsyncManagement):
    """The service for ``await``: ``Client``'s twin, method for method (resources too).

    Runs on asyncio (the kernel's loop in a notebook); one connection pool.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: AsyncClock | None = None,
        **settings: Unpack[ClientSettings],
    ) -> None:
        self._clock: AsyncClock = clock or _AsyncMonotonicClock()
        super().__init__(api_key, self._clock.now, **settings)
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client= or transport=, not both")
        native = http_client is None and transport is None
        self._http = http_client or own_http(httpx.AsyncClient, transport)
        self._sender: AsyncSender = AsyncSender(
            self._http, http_client is None, self._destination(), bounded=not native
        )

    def endpoint(self, endpoint_id: str) -> AsyncEndpoint:
        """The queue-based endpoint ``endpoint_id`` (no request is made)."""
        return AsyncEndpoint(self, endpoint_id)

    async def aclose(self) -> None:
        """Close the connections, and every endpoint's ``http()`` and ``async_http()``."""
        for made in self._lb_clients.values():
            await made.aclose() if isinstance(made, httpx.AsyncClient) else made.close()
        await self._sender.aclose()

    close = aclose

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- the driver ----------------------------------------------------------------------

    async def _perform(self, effect: Effect) -> Any:
        return await super()._perform(effect)

    async def _run(self, flow: Flow[T]) -> T:
        return await arun(flow, self._perform)

    def _iterate(self, flow: Flow[None]) -> AsyncGenerator[Any, None]:
        return aiterate(Steps(flow), self._perform)
