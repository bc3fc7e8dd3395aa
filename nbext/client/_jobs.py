"""Endpoint and Job handles, sync and async: each operation is written once here and
made into both twins by ``_twins``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Unpack

import httpx

from nbext.models import Health, JobResult, PurgeResult, StreamChunk

from . import _flows as flows
from ._batches import AsyncBatch, Batch, BatchState, create, found, listing
from ._calls import JobOptions, JobOptionWords, endpoint_call, segment, submission_body
from ._cost import JobCost, Spending, job_cost
from ._diagnosis import diagnose, explained
from ._errors import NbextError
from ._http import AsyncEndpointClient, Checks, EndpointClient, lb_base, queue_based
from ._map import AsyncMapResults, MapPlan, MapResults
from ._openai import Hooks, OpenAIPlan, async_openai, sync_openai
from ._phases import QUEUE_THRESHOLD, Phase
from ._phases import phases as phases_flow
from ._resources.endpoints import get as get_record
from ._resources.rest import V2
from ._transport import CONNECT_TIMEOUT
from ._twins import (
    Handle,
    Twins,
    aiterating,
    awaiting,
    blocking,
    iterating,
    local,
)

if TYPE_CHECKING:
    import openai as openai_package

    from ._client import AsyncClient, Client, _Base

DEFAULT_RUNSYNC_WAIT = 90.0
"""Seconds /runsync asks the service to hold the request (the interface's default)."""
DEFAULT_CONCURRENCY = 16
"""A map's jobs in flight: 16, one round trip each, reach /runsync's limit (200 a second)
up to an 80 ms round trip; more buys nothing and costs client CPU
(docs/performance.md#map-over-a-50-ms-link)."""


# ---- what a handle does, written once --------------------------------------------------


def _lb_base(ctx: flows.Context, endpoint_id: str) -> flows.Flow[str | None]:
    """The endpoint's load-balancing base URL (None: a queue endpoint), from its REST v2
    record, read once per client."""
    if endpoint_id not in ctx.lb_bases:
        ctx.lb_bases[endpoint_id] = lb_base((yield from get_record(ctx, V2(), endpoint_id)))
    return ctx.lb_bases[endpoint_id]


def _http(ctx: flows.Context, endpoint_id: str) -> flows.Flow[str]:
    """An ``httpx.Client`` for a load-balancing endpoint's own paths, with its base URL,
    the key and this client's timeouts; an error answer raises this client's error
    (docs/behaviour.md#load-balancing-endpoints-from-the-client). Made once per endpoint
    and closed with the client."""
    base = yield from _lb_base(ctx, endpoint_id)
    if base is None:
        raise queue_based(endpoint_id)
    return base


def _async_http(ctx: flows.Context, endpoint_id: str) -> flows.Flow[str]:
    """``http()``, as an ``httpx.AsyncClient`` (one per endpoint too)."""
    return (yield from _http(ctx, endpoint_id))


def _openai(ctx: flows.Context, endpoint_id: str, /, **options: Any) -> flows.Flow[OpenAIPlan]:
    """The ``openai`` package's client for this endpoint's OpenAI-compatible routes: on a
    load-balancing endpoint its base's ``/v1``, else the service's route (its record, read
    once per client as ``http()``'s, says which; a record that cannot be read is a queue
    endpoint's, whose route says what is wrong). URL, key and timeout (``call_timeout``)
    come from this client; ``options`` go to ``openai.OpenAI`` (``max_retries``,
    ``http_client``...). Needs ``nbext[llm]``."""
    base = None
    with contextlib.suppress(NbextError):
        base = yield from _lb_base(ctx, endpoint_id)
    return OpenAIPlan(base, ctx.call_timeout, options)


def _async_openai(
    ctx: flows.Context, endpoint_id: str, /, **options: Any
) -> flows.Flow[OpenAIPlan]:
    """``openai()``, as the package's ``AsyncOpenAI``."""
    return (yield from _openai(ctx, endpoint_id, **options))


def _run(
    ctx: flows.Context,
    endpoint_id: str,
    input: dict[str, Any],
    options: JobOptions | None = None,
    **option_words: Unpack[JobOptionWords],
) -> flows.Flow[flows.JobState]:
    """Queue a job (/run) and return its handle at once.

    ``options`` (a ``JobOptions``), or its fields as keywords (``webhook=``,
    ``execution_timeout=``, ``ttl=``, ``low_priority=``, ``s3_config=``): how the job is
    submitted. A body over 10 MB raises PayloadTooLarge, and a client past its
    ``budget_usd`` BudgetExceeded, before anything is sent.
    """
    body = submission_body(endpoint_id, "run", input, JobOptions.of(options, option_words))
    yield from ctx.admit(endpoint_id)
    return (yield from flows.submit(ctx, endpoint_id, body))


def _run_sync(
    ctx: flows.Context,
    endpoint_id: str,
    input: dict[str, Any],
    options: JobOptions | None = None,
    *,
    wait: float = DEFAULT_RUNSYNC_WAIT,
    timeout: float | None = None,
    raise_on_failure: bool = True,
    **option_words: Unpack[JobOptionWords],
) -> flows.Flow[JobResult]:
    """Run a job (/runsync) and return its result; ``options`` as ``run``'s.

    The service holds the request up to ``wait`` seconds; a job still running then is
    waited for by its id (never submitted again) until ``timeout`` (default: the
    client's ``wait_timeout``) passes, which raises Timeout.
    """
    body = submission_body(endpoint_id, "runsync", input, JobOptions.of(options, option_words))
    yield from ctx.admit(endpoint_id)
    flow = flows.run_sync(ctx, endpoint_id, body, wait, timeout, raise_on_failure)
    return (yield from explained(ctx, endpoint_id, flow))


def _job(endpoint_id: str, job_id: str) -> flows.JobState:
    """A handle on an existing job (e.g. submitted elsewhere); no request is made.

    Its ``wait`` polls /status and leaves the job's stream to whoever reads it.
    """
    return flows.JobState(endpoint_id, job_id, owns_stream=False)


def _health(ctx: flows.Context, endpoint_id: str) -> flows.Flow[Health]:
    """The endpoint's job counts and workers."""
    call = endpoint_call("health", "GET", endpoint_id)
    return (yield from flows.call_model(ctx, call, Health))


def _cost(ctx: flows.Context, endpoint_id: str, result: JobResult) -> flows.Flow[JobCost | None]:
    """What a job of this endpoint that has ended cost (a ``map``'s result, say): its
    ``output.cost`` where the service reports one, else an estimate from the catalog
    (``JobCost.source`` says which); None while the job runs, or when neither is known.

    The endpoint's price is read once per client (docs/behaviour.md#what-a-job-costs).
    """
    if not isinstance(ctx.hooks, Spending):  # a client's always are; a flow driven by hand
        return job_cost(endpoint_id, result, None)
    return (yield from ctx.hooks.cost(ctx, endpoint_id, result))


def _purge_queue(ctx: flows.Context, endpoint_id: str) -> flows.Flow[PurgeResult]:
    """Remove every queued job of the endpoint; running jobs go on."""
    call = endpoint_call("purge-queue", "POST", endpoint_id)
    return (yield from flows.call_model(ctx, call, PurgeResult))


def _map(
    endpoint_id: str,
    inputs: Iterable[dict[str, Any]],
    options: JobOptions | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    deadline: float | None = None,
    raise_on_failure: bool = False,
    **option_words: Unpack[JobOptionWords],
) -> MapPlan:
    """Run every input as a job; yield ``(index, result)`` as each finishes.

    At most ``concurrency`` jobs are in flight. Failed jobs are yielded like the rest
    (their ``status`` says so) unless ``raise_on_failure``: in a batch, one failure
    should not hide every other result. ``deadline`` is each job's, in seconds counted
    from its submission. ``options`` as ``run``'s, for every job.

    Each input goes to /runsync with a 1 s hold (with a ``deadline`` under 2 s, to
    /run), so a quick job costs one call; the service keeps such jobs 1 minute after
    they end (30 for /run), after which ``job(result.id)`` finds nothing. A submission
    whose answer was lost is yielded as ``MaybeQueued``, never sent again; a map left
    early cancels its jobs in flight (docs/behaviour.md#maps-under-faults).
    """
    options = JobOptions.of(options, option_words)
    return MapPlan(endpoint_id, inputs, concurrency, options, deadline, raise_on_failure)


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
    A job still IN_QUEUE then has its likely cause named, from the endpoint's /health
    (the Timeout's ``cause`` and ``health``).
    """
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    flow = flows.wait(ctx, state, deadline, raise_on_failure)
    return (yield from explained(ctx, state.endpoint_id, flow))


def _states(
    ctx: flows.Context, state: flows.JobState, timeout: float | None = None
) -> flows.Flow[None]:
    """Each /status answer until the job ends, the final one last (not raised on).

    Polled as ``wait`` polls: at once, then every max(50 ms, 10 % of the time waited).
    The loop's body runs once per answer, so it can redraw a progress display or stop
    for a reason of its own (``break`` ends the polling). Past ``timeout`` seconds
    (default: the client's ``wait_timeout``) raises Timeout; the job goes on.
    """
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    return (yield from flows.states(ctx, state, deadline))


def _phases(
    ctx: flows.Context,
    state: flows.JobState,
    timeout: float | None = None,
    *,
    threshold: float = QUEUE_THRESHOLD,
) -> flows.Flow[None]:
    """Like ``states``, each answer as a ``Phase``: what the job waits for, where it runs,
    and once it ends, how long it queued, cold-started and ran (``timings``).

    Once the job has waited ``threshold`` seconds, its endpoint's /health and the likely
    cause (``why_queued``) are attached (``health``, ``cause``, ``cold_start``, and an
    unhealthy worker's last log lines), read again every 5 s at most while it waits,
    never once it runs. Past ``timeout`` seconds raises Timeout (naming the likely
    cause, as ``wait``'s does); the job goes on.
    """
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    flow = phases_flow(ctx, state, deadline, threshold)
    return (yield from explained(ctx, state.endpoint_id, flow))


def _stream_chunks(
    ctx: flows.Context, state: flows.JobState, timeout: float | None = None
) -> flows.Flow[None]:
    """Like ``stream`` but each item keeps its ``metrics`` (tokens, throughput...)."""
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    return (yield from flows.stream(ctx, state, deadline))


def _stream_batches(
    ctx: flows.Context, state: flows.JobState, timeout: float | None = None
) -> flows.Flow[None]:
    """Like ``stream_chunks``, a list at a time: the whole chunks one answer of the
    service brought, never an empty list.

    For a reader that draws what arrives (a progress panel): it can draw once per
    list, and knows that when a list has been handed over, nothing more is at hand
    until the job yields again, so nothing drawn later is held back.
    """
    deadline = flows.job_deadline(ctx, state.endpoint_id, state.id, timeout)
    return (yield from flows.stream(ctx, state, deadline, batches=True))


def _stream(
    ctx: flows.Context, state: flows.JobState, timeout: float | None = None
) -> flows.Flow[None]:
    """The job's streamed outputs, in order, split chunks whole, until the job ends.

    Ends for every final state, CANCELLED included; call ``wait`` for the outcome.
    """
    return (yield from _stream_chunks(ctx, state, timeout))


def _job_cost(ctx: flows.Context, state: flows.JobState) -> flows.Flow[JobCost | None]:
    """What the job cost, once it has ended (``Endpoint.cost`` of its last state seen,
    asked for again when that one had not ended); None while it runs."""
    result = state.result
    if result is None or not result.status.is_final:
        result = yield from flows.status(ctx, state)
    return (yield from _cost(ctx, state.endpoint_id, result))


def _retry(ctx: flows.Context, state: flows.JobState) -> flows.Flow[None]:
    """Queue a FAILED or TIMED_OUT job again (same id, same input); returns this handle.

    A new run costs again: refused like a submission past the client's ``budget_usd``."""
    yield from ctx.admit(state.endpoint_id)
    yield from flows.retry_job(ctx, state)


# ---- what each emitted item is -----------------------------------------------------------


def _as_result(item: JobResult) -> JobResult:
    return item


def _as_phase(item: Phase) -> Phase:
    return item


def _as_chunk(item: StreamChunk) -> StreamChunk:
    return item


def _as_batch(item: list[StreamChunk]) -> list[StreamChunk]:
    return item


def _as_output(item: Any) -> Any:
    return item.output


# ---- the handles -------------------------------------------------------------------------


class _EndpointBase(Twins):
    _client: _Base

    def __init__(self, client: _Base, endpoint_id: str) -> None:
        segment(endpoint_id, "endpoint id")
        self._client = client
        self.id = endpoint_id

    def _openai_client(self, plan: OpenAIPlan) -> openai_package.OpenAI:
        url, hooks = self._openai_route(plan, awaited=False)
        return sync_openai(self._client.config, url, plan, hooks)

    def _async_openai_client(self, plan: OpenAIPlan) -> openai_package.AsyncOpenAI:
        url, hooks = self._openai_route(plan, awaited=True)
        return async_openai(self._client.config, url, plan, hooks)

    def _openai_route(self, plan: OpenAIPlan, awaited: bool) -> tuple[str, Hooks]:
        """The OpenAI routes' URL, and the hooks that record their requests as ``http()``'s
        are (paths after the endpoint's base: ``/openai/v1/...`` on a queue endpoint)."""
        base = plan.base or f"{self._client.serverless_url.rstrip('/')}/{self.id}"
        url = f"{base}/v1" if plan.base else f"{base}/openai/v1"
        checks = Checks(base, self.id, self._client._ctx, checked=False)
        return url, checks.hooks(awaited=awaited)

    def _lb_client(self, base: str) -> httpx.Client:
        made = self._client._lb_clients.get((self.id, False))
        if not isinstance(made, httpx.Client) or made.is_closed:
            made = EndpointClient(**self._settings(base, awaited=False))
            self._client._lb_clients[self.id, False] = made
        return made

    def _lb_async_client(self, base: str) -> httpx.AsyncClient:
        made = self._client._lb_clients.get((self.id, True))
        if not isinstance(made, httpx.AsyncClient) or made.is_closed:
            made = AsyncEndpointClient(**self._settings(base, awaited=True))
            self._client._lb_clients[self.id, True] = made
        return made

    def _settings(self, base: str, awaited: bool) -> dict[str, Any]:
        """An httpx client's arguments: each read may take the ``wait_timeout`` (a request
        may wait 2 minutes for a worker, then run 5.5); connecting, writing and waiting for
        a free connection, the ``timeout``."""
        client, ctx = self._client, self._client._ctx
        read = max(ctx.timeout, ctx.wait_timeout)
        timeout = httpx.Timeout(ctx.timeout, connect=min(ctx.timeout, CONNECT_TIMEOUT), read=read)
        return {
            "base_url": base,
            "auth": client._auth,
            "headers": {"User-Agent": client._destination().user_agent},
            "timeout": timeout,
            "event_hooks": Checks(base, self.id, ctx).hooks(awaited=awaited),
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"

    def _about(self) -> tuple[str]:
        return (self.id,)


class _JobBase(Handle):
    _state: flows.JobState

    @property
    def result(self) -> JobResult | None:
        """The last /status (or /runsync) answer seen, without asking again."""
        return self._state.result

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._state.describe()})"


class Endpoint(_EndpointBase):
    """A queue-based endpoint: submit jobs, run them synchronously, map, health, purge."""

    _client: Client

    def _handle(self, state: flows.JobState) -> Job:
        return Job(self._client, state)

    def _batch(self, plan: MapPlan) -> MapResults:
        return MapResults(self._client, plan)

    def _batch_handle(self, state: BatchState) -> Batch:
        return Batch(self._client, state)

    run = blocking(_run, then=_handle)
    run_sync = blocking(_run_sync)
    job = local(_job, then=_handle)
    cost = blocking(_cost)
    health = blocking(_health)
    diagnose = blocking(diagnose)
    purge_queue = blocking(_purge_queue)
    map = local(_map, then=_batch)
    batch = blocking(create, then=_batch_handle)
    batches = blocking(listing)
    get_batch = blocking(found, then=_batch_handle)
    http = blocking(_http, then=_EndpointBase._lb_client)
    async_http = blocking(_async_http, then=_EndpointBase._lb_async_client)
    openai = blocking(_openai, then=_EndpointBase._openai_client)
    async_openai = blocking(_async_openai, then=_EndpointBase._async_openai_client)


class Job(_JobBase):
    """One job: its status, its result, its stream; cancel and retry it."""

    def _itself(self, _: object) -> Job:
        return self

    status = blocking(_status)
    wait = blocking(_wait)
    states = iterating(_states, each=_as_result)
    phases = iterating(_phases, each=_as_phase)
    stream_chunks = iterating(_stream_chunks, each=_as_chunk)
    stream_batches = iterating(_stream_batches, each=_as_batch)
    stream = iterating(_stream, each=_as_output)
    cost = blocking(_job_cost)
    cancel = blocking(flows.cancel_job)
    retry = blocking(_retry, then=_itself)


class AsyncEndpoint(_EndpointBase):
    """``Endpoint`` for ``await``: the same methods, awaited; ``map`` is an async iterator."""

    _client: AsyncClient

    def _handle(self, state: flows.JobState) -> AsyncJob:
        return AsyncJob(self._client, state)

    def _batch(self, plan: MapPlan) -> AsyncMapResults:
        return AsyncMapResults(self._client, plan)

    def _batch_handle(self, state: BatchState) -> AsyncBatch:
        return AsyncBatch(self._client, state)

    run = awaiting(_run, then=_handle)
    run_sync = awaiting(_run_sync)
    job = local(_job, then=_handle)
    cost = awaiting(_cost)
    health = awaiting(_health)
    diagnose = awaiting(diagnose)
    purge_queue = awaiting(_purge_queue)
    map = local(_map, then=_batch)
    batch = awaiting(create, then=_batch_handle)
    batches = awaiting(listing)
    get_batch = awaiting(found, then=_batch_handle)
    http = awaiting(_http, then=_EndpointBase._lb_client)
    async_http = awaiting(_async_http, then=_EndpointBase._lb_async_client)
    openai = awaiting(_openai, then=_EndpointBase._openai_client)
    async_openai = awaiting(_async_openai, then=_EndpointBase._async_openai_client)


class AsyncJob(_JobBase):
    """``Job`` for ``await``: the same methods; its streams are async iterators."""

    def _itself(self, _: object) -> AsyncJob:
        return self

    status = awaiting(_status)
    wait = awaiting(_wait)
    states = aiterating(_states, each=_as_result)
    phases = aiterating(_phases, each=_as_phase)
    stream_chunks = aiterating(_stream_chunks, each=_as_chunk)
    stream_batches = aiterating(_stream_batches, each=_as_batch)
    stream = aiterating(_stream, each=_as_output)
    cost = awaiting(_job_cost)
    cancel = awaiting(flows.cancel_job)
    retry = awaiting(_retry, then=_itself)
