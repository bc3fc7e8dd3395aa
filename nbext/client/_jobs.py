"""Endpoint and Job handles, sync and async: thin shells that build flows and drive them.

Everything a handle does is a flow from ``_flows`` run by its client's driver. The
methods that only run a flow are written once, as operations, and made into the sync
and async twins (``blocking``/``awaiting``); the rest differ in shape between the two
(a handle to return, an iterator or an async one) and are written twice, thinly.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from nbext.models import CancelResult, Health, JobResult, PurgeResult, S3Config, StreamChunk

from . import _flows as flows
from ._calls import Seconds, endpoint_call, job_call, segment, submission_body
from ._map import MapPlan, map_async, map_sync
from ._resources.twins import adopt, name_methods

if TYPE_CHECKING:
    from ._client import AsyncClient, Client

DEFAULT_RUNSYNC_WAIT = 90.0
"""Seconds /runsync asks the service to hold the request (the interface's default)."""
DEFAULT_CONCURRENCY = 32
P = ParamSpec("P")
T = TypeVar("T")


def _body(
    endpoint_id: str,
    operation: str,
    input: Any,
    webhook: str | None,
    execution_timeout: Seconds | None,
    ttl: Seconds | None,
    low_priority: bool,
    s3_config: S3Config | Mapping[str, Any] | None,
) -> bytes:
    """Options of /run and /runsync, checked and encoded locally before any send."""
    return submission_body(
        endpoint_id,
        operation,
        input,
        webhook=webhook,
        execution_timeout=execution_timeout,
        ttl=ttl,
        low_priority=low_priority,
        s3_config=s3_config,
    )


# ---- what a handle does, written once --------------------------------------------------
# Each operation takes the client's flow context and what the handle is about (its
# endpoint's id, or its job's state), then the caller's arguments. ``blocking`` and
# ``awaiting`` make the sync and async methods from it, with its signature and
# docstring, as the management resources' twins are made (``_resources/twins``).


def _run_sync(
    ctx: flows.Context,
    endpoint_id: str,
    input: dict[str, Any],
    *,
    wait: float = DEFAULT_RUNSYNC_WAIT,
    timeout: float | None = None,
    raise_on_failure: bool = True,
    webhook: str | None = None,
    execution_timeout: Seconds | None = None,
    ttl: Seconds | None = None,
    low_priority: bool = False,
    s3_config: S3Config | Mapping[str, Any] | None = None,
) -> flows.Flow[JobResult]:
    """Run a job (/runsync) and return its result.

    The service holds the request up to ``wait`` seconds; a job still running then is
    waited for by its id (never submitted again) until ``timeout`` (default: the
    client's ``wait_timeout``) passes, which raises Timeout.
    """
    body = _body(
        endpoint_id, "runsync", input, webhook, execution_timeout, ttl, low_priority, s3_config
    )
    flow = flows.run_sync(ctx, endpoint_id, body, wait, timeout, raise_on_failure)
    _, result = yield from flow
    return result


def _health(ctx: flows.Context, endpoint_id: str) -> flows.Flow[Health]:
    """The endpoint's job counts and workers."""
    call = endpoint_call("health", "GET", endpoint_id)
    return (yield from flows.call_model(ctx, call, Health))


def _purge_queue(ctx: flows.Context, endpoint_id: str) -> flows.Flow[PurgeResult]:
    """Remove every queued job of the endpoint; running jobs go on."""
    call = endpoint_call("purge-queue", "POST", endpoint_id)
    return (yield from flows.call_model(ctx, call, PurgeResult))


def _status(ctx: flows.Context, state: flows.JobState) -> flows.Flow[JobResult]:
    """The job's current /status answer."""
    return (yield from flows.status(ctx, state))


def _wait(
    ctx: flows.Context,
    state: flows.JobState,
    timeout: float | None = None,
    *,
    raise_on_failure: bool = True,
) -> flows.Flow[JobResult]:
    """Wait until the job ends; return its result.

    FAILED, TIMED_OUT and CANCELLED raise JobFailed, JobTimedOut, JobCancelled
    (carrying the result) unless ``raise_on_failure=False``. Past ``timeout``
    seconds (default: the client's ``wait_timeout``) raises Timeout; the job goes on.
    """
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    return (yield from flows.wait(ctx, state, deadline, raise_on_failure))


def _cancel(ctx: flows.Context, state: flows.JobState) -> flows.Flow[CancelResult]:
    """Cancel the job (Conflict if it already ended other than CANCELLED)."""
    call = job_call("cancel", "POST", state.endpoint_id, state.id)
    answer = yield from flows.call_model(ctx, call, CancelResult)
    ctx.seen(JobResult(id=state.id, status=answer.status))
    return answer


class _Handle(Protocol):
    _client: Any

    def _subject(self) -> Any: ...


def blocking(
    operation: Callable[Concatenate[flows.Context, Any, P], flows.Flow[T]],
) -> Callable[Concatenate[Any, P], T]:
    """A sync handle method running ``operation``'s flow to completion."""

    def method(self: _Handle, /, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        result: T = client._run(operation(client._ctx, self._subject(), *args, **kwargs))
        return result

    adopt(method, operation, awaited=False, leading=2)
    return method


def awaiting(
    operation: Callable[Concatenate[flows.Context, Any, P], flows.Flow[T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """An async handle method awaiting ``operation``'s flow."""

    async def method(self: _Handle, /, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        result: T = await client._run(operation(client._ctx, self._subject(), *args, **kwargs))
        return result

    adopt(method, operation, awaited=True, leading=2)
    return method


class _EndpointBase:
    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        name_methods(cls)

    def __init__(self, endpoint_id: str) -> None:
        segment(endpoint_id, "endpoint id")
        self.id = endpoint_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"

    def _subject(self) -> str:
        return self.id

    def _map_plan(
        self,
        inputs: Iterable[dict[str, Any]],
        concurrency: int,
        timeout: float | None,
        raise_on_failure: bool,
        webhook: str | None,
        execution_timeout: Seconds | None,
        ttl: Seconds | None,
        low_priority: bool,
        s3_config: S3Config | Mapping[str, Any] | None,
    ) -> MapPlan:
        """What ``map`` runs, sync or async; each body is checked as its input is taken."""

        def make_body(value: Any, operation: str) -> bytes:
            return _body(
                self.id, operation, value, webhook, execution_timeout, ttl, low_priority, s3_config
            )

        return MapPlan(self.id, inputs, concurrency, make_body, timeout, raise_on_failure)


class _JobBase:
    _state: flows.JobState

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        name_methods(cls)

    @property
    def id(self) -> str:
        return self._state.id

    @property
    def endpoint_id(self) -> str:
        return self._state.endpoint_id

    @property
    def result(self) -> JobResult | None:
        """The last /status (or /runsync) answer seen, without asking again."""
        return self._state.result

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._state.describe()})"

    def _subject(self) -> flows.JobState:
        return self._state

    def _stream_flow(
        self, ctx: flows.Context, timeout: float | None, batches: bool = False
    ) -> flows.Flow[None]:
        deadline = flows.job_deadline(ctx, self.endpoint_id, self.id, timeout)
        return flows.stream(ctx, self._state, deadline, batches=batches)


# ---- sync --------------------------------------------------------------------------------


class Endpoint(_EndpointBase):
    """A queue-based endpoint: submit jobs, run them synchronously, map, health, purge."""

    def __init__(self, client: Client, endpoint_id: str) -> None:
        super().__init__(endpoint_id)
        self._client = client

    def run(
        self,
        input: dict[str, Any],
        *,
        webhook: str | None = None,
        execution_timeout: Seconds | None = None,
        ttl: Seconds | None = None,
        low_priority: bool = False,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> Job:
        """Queue a job (/run) and return its handle at once.

        ``execution_timeout`` and ``ttl`` are seconds (or timedeltas). A body over 10 MB
        raises PayloadTooLarge before anything is sent.
        """
        body = _body(
            self.id, "run", input, webhook, execution_timeout, ttl, low_priority, s3_config
        )
        return Job(self._client, self._client._run(flows.submit(self._client._ctx, self.id, body)))

    run_sync = blocking(_run_sync)

    def job(self, job_id: str) -> Job:
        """A handle on an existing job (e.g. submitted elsewhere); no request is made.

        Its ``wait`` polls /status and leaves the job's stream to whoever reads it.
        """
        return Job(self._client, flows.JobState(self.id, job_id, owns_stream=False))

    health = blocking(_health)
    purge_queue = blocking(_purge_queue)

    def map(
        self,
        inputs: Iterable[dict[str, Any]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float | None = None,
        raise_on_failure: bool = False,
        webhook: str | None = None,
        execution_timeout: Seconds | None = None,
        ttl: Seconds | None = None,
        low_priority: bool = False,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> Iterator[tuple[int, JobResult]]:
        """Run every input as a job; yield ``(index, result)`` as each finishes.

        At most ``concurrency`` jobs are in flight. Failed jobs are yielded like the rest
        (their ``status`` says so) unless ``raise_on_failure``: in a batch, one failure
        should not hide every other result. ``timeout`` is each job's deadline, counted
        from its submission.

        Each input goes to /runsync with a 1 s hold, so a quick job costs one call and
        its result arrives in the answer; a longer one is then waited for by its id.
        Such jobs are kept by the service for 1 minute after they end (30 for /run):
        the result is in hand, but ``job(result.id)`` finds nothing after that. With a
        ``timeout`` under 2 s, inputs go to /run instead. A 429 is paced and sent
        again; a submission whose answer was lost never is (it could run twice): the
        map raises instead.
        """
        plan = self._map_plan(
            inputs,
            concurrency,
            timeout,
            raise_on_failure,
            webhook,
            execution_timeout,
            ttl,
            low_priority,
            s3_config,
        )
        return map_sync(self._client, plan)


class Job(_JobBase):
    """One job: its status, its result, its stream; cancel and retry it."""

    def __init__(self, client: Client, state: flows.JobState) -> None:
        self._client = client
        self._state = state

    status = blocking(_status)
    wait = blocking(_wait)

    def stream_chunks(self, timeout: float | None = None) -> Generator[StreamChunk, None, None]:
        """Like ``stream`` but each item keeps its ``metrics`` (tokens, throughput...)."""
        return self._client._iterate(self._stream_flow(self._client._ctx, timeout))

    def stream_batches(
        self, timeout: float | None = None
    ) -> Generator[list[StreamChunk], None, None]:
        """Like ``stream_chunks``, a list at a time: the whole chunks one answer of the
        service brought, never an empty list.

        For a reader that draws what arrives (a progress panel): it can draw once per
        list, and knows that when a list has been handed over, nothing more is at hand
        until the job yields again, so nothing drawn later is held back.
        """
        return self._client._iterate(self._stream_flow(self._client._ctx, timeout, True))

    def stream(self, timeout: float | None = None) -> Iterator[Any]:
        """The job's streamed outputs, in order, split chunks whole, until the job ends.

        Ends for every final state, CANCELLED included; call ``wait`` for the outcome.
        """
        chunks = self.stream_chunks(timeout)
        try:
            for chunk in chunks:
                yield chunk.output
        finally:
            chunks.close()

    cancel = blocking(_cancel)

    def retry(self) -> Job:
        """Queue a FAILED or TIMED_OUT job again (same id, same input); returns this handle."""
        self._client._run(flows.retry_job(self._client._ctx, self._state))
        return self


# ---- async -------------------------------------------------------------------------------


class AsyncEndpoint(_EndpointBase):
    """``Endpoint`` for ``await``: the same methods, awaited."""

    def __init__(self, client: AsyncClient, endpoint_id: str) -> None:
        super().__init__(endpoint_id)
        self._client = client

    async def run(
        self,
        input: dict[str, Any],
        *,
        webhook: str | None = None,
        execution_timeout: Seconds | None = None,
        ttl: Seconds | None = None,
        low_priority: bool = False,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> AsyncJob:
        """Queue a job (/run) and return its handle at once. See ``Endpoint.run``."""
        body = _body(
            self.id, "run", input, webhook, execution_timeout, ttl, low_priority, s3_config
        )
        state = await self._client._run(flows.submit(self._client._ctx, self.id, body))
        return AsyncJob(self._client, state)

    run_sync = awaiting(_run_sync)

    def job(self, job_id: str) -> AsyncJob:
        """A handle on an existing job; see ``Endpoint.job``."""
        return AsyncJob(self._client, flows.JobState(self.id, job_id, owns_stream=False))

    health = awaiting(_health)
    purge_queue = awaiting(_purge_queue)

    def map(
        self,
        inputs: Iterable[dict[str, Any]],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float | None = None,
        raise_on_failure: bool = False,
        webhook: str | None = None,
        execution_timeout: Seconds | None = None,
        ttl: Seconds | None = None,
        low_priority: bool = False,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[tuple[int, JobResult]]:
        """``async for index, result in endpoint.map(...)``. See ``Endpoint.map``."""
        plan = self._map_plan(
            inputs,
            concurrency,
            timeout,
            raise_on_failure,
            webhook,
            execution_timeout,
            ttl,
            low_priority,
            s3_config,
        )
        return map_async(self._client, plan)


class AsyncJob(_JobBase):
    """``Job`` for ``await``: the same methods; ``stream`` is an async iterator."""

    def __init__(self, client: AsyncClient, state: flows.JobState) -> None:
        self._client = client
        self._state = state

    status = awaiting(_status)
    wait = awaiting(_wait)

    def stream_chunks(self, timeout: float | None = None) -> AsyncGenerator[StreamChunk, None]:
        return self._client._iterate(self._stream_flow(self._client._ctx, timeout))

    def stream_batches(
        self, timeout: float | None = None
    ) -> AsyncGenerator[list[StreamChunk], None]:
        """``async for batch in job.stream_batches()``. See ``Job.stream_batches``."""
        return self._client._iterate(self._stream_flow(self._client._ctx, timeout, True))

    async def stream(self, timeout: float | None = None) -> AsyncIterator[Any]:
        """``async for output in job.stream()``. See ``Job.stream``."""
        chunks = self.stream_chunks(timeout)
        try:
            async for chunk in chunks:
                yield chunk.output
        finally:
            await chunks.aclose()

    cancel = awaiting(_cancel)

    async def retry(self) -> AsyncJob:
        await self._client._run(flows.retry_job(self._client._ctx, self._state))
        return self
