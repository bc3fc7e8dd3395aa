"""What the client does, written once for sync and async: generators of effects
(docs/architecture.md#flows-drivers-and-twins)."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import httpx
from pydantic import BaseModel

from nbext.models import (
    STREAM_WAIT_DEFAULT_MS,
    AcceptedJob,
    CancelResult,
    JobResult,
    JobStatus,
    StreamChunk,
    StreamResponse,
)

from ._calls import (
    Answer,
    Call,
    endpoint_call,
    error_from_response,
    job_call,
    model_of,
    redirect_error,
    runsync_call,
    stream_call,
    transport_error,
    unanswered_note,
)
from ._config import Secret
from ._errors import (
    APIError,
    ChunksMissing,
    Conflict,
    NbextError,
    RateLimited,
    Timeout,
    outcome_error,
)
from ._recording import Recording
from ._retry import RetryPolicy, may_retry_status, may_retry_transport, never_sent
from ._stream import Reassembler, StreamLedger, StreamProtocolError

log = logging.getLogger("nbext.client")
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MIN_POLL = 0.05
"""The shortest pause between two /status polls (and the finest end-of-job resolution)."""
POLL_FRACTION = 0.1
"""Polls are spaced by this fraction of the time waited so far: cheap on long jobs."""
MAX_POLL = 15.0
STREAM_HOLD = STREAM_WAIT_DEFAULT_MS / 1000
"""How long one /stream long-poll asks the service to hold the request."""
STREAM_SPACING = 0.02
"""Least time between two /stream calls that both returned chunks: a burst of chunks is
fetched in one answer instead of one request each, keeping a fast producer's reader under
the /stream rate limit, while a chunk still reaches the caller within milliseconds."""
HOLD_MARGIN = 5.0
"""Extra read time granted beyond what the service may hold a request (network slack)."""
DEADLINE_MARGIN = 0.25
"""How far past a deadline a request may run before the client gives up on it."""
DEFAULT_CALL_TIMEOUT = 120.0
"""Default bound on one call, its retries and their pauses included (``call_timeout``)."""
STREAM_LEAD = 0.1
"""A /stream long-poll asks the service to answer this long before the wait's deadline."""
STREAM_GRACE = 1.0
"""How far past a deadline the client still listens for a /stream answer, whose chunks
are lost if given up on (docs/architecture.md#flows-drivers-and-twins)."""


# ---- effects ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """Send ``call``; give up reading after ``timeout`` seconds. Result: ``_calls.Answer``."""

    call: Call
    timeout: float


@dataclass(frozen=True)
class Sleep:
    """Pause until ``until`` on the context's clock: an instant, not a duration, so a
    driver that reaches the effect late (a busy thread, a shared clock) does not oversleep."""

    until: float


def pause(ctx: Context, seconds: float) -> Sleep:
    return Sleep(ctx.now() + seconds)


@dataclass(frozen=True)
class Emit:
    """A value for the consumer of a streaming flow (a job's chunks, a log's lines)."""

    value: object


@dataclass(frozen=True)
class Listen:
    """Open ``call``'s answer as Server-Sent Events, each read allowed ``idle`` seconds of
    silence. Result: an open ``EventStream``, else (an error, not a stream) an ``Answer``."""

    call: Call
    idle: float


@dataclass(frozen=True)
class NextEvent:
    """The next event of an open ``EventStream`` (an httpx-sse ``ServerSentEvent``), None
    at its end. A silence longer than its ``idle`` is an ``httpx.ReadTimeout``."""

    stream: Any


Effect = Send | Sleep | Emit | Listen | NextEvent
Flow = Generator[Effect, Any, T]


class JobHooks(Protocol):
    """The client's budget (``_cost.Spending``) as the flows see it
    (docs/architecture.md#cost-and-budget): told of jobs, asked before a submission."""

    def started(self, endpoint_id: str, job_id: str) -> None: ...

    def seen(self, result: JobResult) -> None: ...

    def admit(self, ctx: Context, endpoint_id: str) -> Flow[None]:
        """Raises to refuse a submission to ``endpoint_id`` (it may ask the service first)."""


@dataclass
class Context:
    """What every flow needs from its client."""

    policy: RetryPolicy
    secret: Secret | None
    key_source: str | None
    timeout: float
    wait_timeout: float
    now: Callable[[], float]
    rand: Callable[[], float]
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    """The deadline of a call that has none of its own (a wait's), retries included."""
    listeners: list[Callable[[JobResult], None]] = field(default_factory=list)
    """Told every job state the client reads (``on_job_result``), on the caller's thread."""
    hooks: JobHooks | None = None
    recording: Recording | None = None
    """Told of each submission, state and stream chunk while it records (``record``)."""
    lb_bases: dict[str, str | None] = field(default_factory=dict)
    """Each endpoint's load-balancing base URL as its record gave it (None: a queue
    endpoint): read once per client, by ``http()`` and ``openai()`` alike."""

    def started(
        self, endpoint_id: str, job_id: str, call: Call | None = None, sent_at: float = 0.0
    ) -> None:
        """The client submitted ``job_id`` with ``call``, sent at ``sent_at`` (no call: it
        queued the job again)."""
        if self.hooks is not None:
            self.hooks.started(endpoint_id, job_id)
        if self.recording is not None and call is not None:
            self.recording.submitted(call, job_id, sent_at)

    def seen(self, result: JobResult) -> None:
        """Hand ``result`` to the hooks and every listener; a listener that raises is
        logged, never the caller's problem: an observer (a notebook panel) must not break
        the call it watches."""
        if self.hooks is not None:
            self.hooks.seen(result)
        if self.recording is not None:
            self.recording.seen(result, self.now())
        for listener in list(self.listeners):
            try:
                listener(result)
            except Exception:
                log.exception("a job-result listener failed on job %s", result.id)

    def admit(self, endpoint_id: str) -> Flow[None]:
        if self.hooks is not None:
            yield from self.hooks.admit(self, endpoint_id)

    def unobserved(self) -> Context:
        """This context with no listeners: for flows driven away from the caller's thread,
        whose results the caller hands to the listeners itself (a sync map)."""
        return replace(self, listeners=[])


def poll_interval(waited: float) -> float:
    return min(MAX_POLL, max(MIN_POLL, POLL_FRACTION * waited))


@dataclass
class Deadline:
    """When a wait must end, and how to say so when it does."""

    start: float
    timeout: float
    what: str
    endpoint_id: str | None = None
    job_id: str | None = None
    last_status: JobStatus | None = None

    @property
    def end(self) -> float:
        return self.start + self.timeout

    def remaining(self, now: float) -> float:
        return self.end - now

    def expired(self, detail: str = "") -> Timeout:
        seen = f" (last seen {self.last_status.value})" if self.last_status else ""
        ended = self.last_status is not None and self.last_status.is_final
        still = JOB_GOES_ON if self.job_id and not ended else ""
        extra = f"; {detail}" if detail else ""
        return Timeout(
            f"{self.what} did not finish within {self.timeout:g} s{seen}{extra}{still}",
            timeout=self.timeout,
            last_status=self.last_status,
            endpoint_id=self.endpoint_id,
            job_id=self.job_id,
        )


JOB_GOES_ON = "; the job goes on: wait again, or cancel it"


def wait_seconds(ctx: Context, timeout: float | None) -> float:
    """A wait's length: ``timeout``, or the client's ``wait_timeout``; never negative."""
    seconds = ctx.wait_timeout if timeout is None else float(timeout)
    if seconds < 0:
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")
    return seconds


def job_deadline(ctx: Context, endpoint_id: str, job_id: str, timeout: float | None) -> Deadline:
    return Deadline(
        start=ctx.now(),
        timeout=wait_seconds(ctx, timeout),
        what=f"job {job_id} on endpoint {endpoint_id!r}",
        endpoint_id=endpoint_id,
        job_id=job_id,
    )


# ---- one call, with retries -------------------------------------------------------------


def send(
    ctx: Context,
    call: Call,
    deadline: Deadline | None = None,
    *,
    retry_429: bool = True,
    grace: float = DEADLINE_MARGIN,
    idle: float | None = None,
    maybe_lost: Callable[[], None] | None = None,
) -> Flow[Answer]:
    """Send ``call`` until it succeeds, retrying only what is safe to retry, within
    ``deadline`` (else ``ctx.call_timeout`` from now) and ``grace`` past it
    (docs/architecture.md#the-path-of-a-429-through-the-client).

    With ``idle``, a 2xx answer is returned open as an event stream (``Listen``).
    ``maybe_lost`` is told of each failure after which the service may have acted on
    the call (all but a 429 and a connection never made): a lost /stream answer's chunks.
    """
    own = deadline is None
    if deadline is None:
        deadline = Deadline(start=ctx.now(), timeout=ctx.call_timeout, what=call.describe())
    attempt = 0
    while True:
        timeout = call.hold + HOLD_MARGIN if call.hold else ctx.timeout
        bounded = False
        remaining = deadline.remaining(ctx.now())
        if remaining <= 0:
            raise deadline.expired()
        if remaining + grace < timeout:
            timeout, bounded = remaining + grace, True
        failed: httpx.TransportError | None = None
        try:
            response = yield Send(call, timeout) if idle is None else Listen(call, idle)
        except httpx.TransportError as exc:
            failed = exc
            if maybe_lost is not None and not never_sent(exc):
                maybe_lost()  # an answer given up on counts too
        retry_after: float | None = None
        failure: NbextError
        if failed is None:
            answer: Answer = response
            if answer.status_code < 300:
                return answer
            if answer.status_code < 400:
                raise redirect_error(call, answer)
            failure = error_from_response(call, answer, ctx.secret, ctx.key_source)
            retryable = may_retry_status(call.kind, answer.status_code)
            if isinstance(failure, RateLimited):
                retry_after = failure.retry_after
                retryable = retryable and retry_429
            elif maybe_lost is not None:
                maybe_lost()
        else:
            if bounded and isinstance(failed, httpx.TimeoutException):
                raise deadline.expired(f"no answer to {call.describe()}{unanswered_note(call)}")
            failure = transport_error(call, failed, ctx.secret)
            retryable = may_retry_transport(call.kind, failed)
        if not retryable or attempt >= ctx.policy.max_retries:
            raise failure
        if retry_after is not None and retry_after > ctx.policy.max_retry_after:
            raise failure  # asked to come back later than the policy waits: say so now
        delay = ctx.policy.delay(attempt, retry_after, ctx.rand())
        if ctx.now() + delay >= deadline.end:
            if own and isinstance(failure, RateLimited):
                raise failure
            raise deadline.expired(f"last answer: {failure}")
        attempt += 1
        log.info(
            "%s: %s; retry %d of %d in %.2f s",
            call.describe(),
            type(failure).__name__,
            attempt,
            ctx.policy.max_retries,
            delay,
        )
        yield pause(ctx, delay)


# ---- jobs ---------------------------------------------------------------------------------


@dataclass
class JobState:
    """What a job handle knows, shared by the sync and async handles. ``owns_stream``:
    this client submitted the job, so ``wait`` long-polls its /stream (which hands chunks
    out once) and keeps the chunks for ``stream()``; other handles poll /status."""

    endpoint_id: str
    id: str
    owns_stream: bool = True
    keep_chunks: bool = True
    result: JobResult | None = None
    heard: bool = False
    """Whether /status or /stream answered for the job (not just its submission)."""
    buffer: deque[StreamChunk] = field(default_factory=deque)
    stream_ended: bool = False
    reassembler: Reassembler = field(default_factory=Reassembler)
    ledger: StreamLedger = field(default_factory=StreamLedger)

    @property
    def last_status(self) -> JobStatus | None:
        return self.result.status if self.result else None

    def reset(self) -> None:
        """After /retry: same id, fresh run, fresh stream."""
        self.result = None
        self.heard = False
        self.buffer.clear()
        self.stream_ended = False
        self.reassembler = Reassembler()
        self.ledger = StreamLedger()

    def describe(self) -> str:
        status = self.last_status.value if self.last_status else "unknown"
        return f"id={self.id!r}, endpoint={self.endpoint_id!r}, status={status}"


def status(ctx: Context, state: JobState, deadline: Deadline | None = None) -> Flow[JobResult]:
    call = job_call("status", "GET", state.endpoint_id, state.id)
    response = yield from send(ctx, call, deadline)
    result = model_of(call, response, JobResult)
    state.result = result
    state.heard = True
    ctx.seen(result)
    if deadline is not None:
        deadline.last_status = result.status
    return result


def finish(
    endpoint_id: str, result: JobResult, raise_on_failure: bool, secret: Secret | None
) -> JobResult:
    """COMPLETED results are returned; other final states raise unless told not to."""
    if raise_on_failure and result.status.is_final and result.status is not JobStatus.COMPLETED:
        raise outcome_error(result, endpoint_id, secret)
    return result


def stream_poll(ctx: Context, state: JobState, deadline: Deadline) -> Flow[StreamResponse]:
    """One long-poll of /stream; new chunks go to the handle's buffer. Its hold and
    grace around the deadline are ``STREAM_LEAD`` and ``STREAM_GRACE``'s."""
    hold = max(0.0, min(STREAM_HOLD, deadline.remaining(ctx.now()) - STREAM_LEAD))
    call = stream_call(state.endpoint_id, state.id, hold)
    response = yield from send(
        ctx, call, deadline, grace=STREAM_GRACE, maybe_lost=state.ledger.maybe_lost
    )
    try:
        answer = model_of(call, response, StreamResponse)
    except NbextError:
        state.ledger.maybe_lost()  # an answer that does not read lost its chunks too
        raise
    answer = answer.model_copy(update={"stream": state.ledger.admit(answer.stream)})
    if ctx.recording is not None:
        ctx.recording.streamed(state.id, answer, ctx.now())
    state.heard = True
    if state.keep_chunks:
        state.buffer.extend(answer.stream)
    if answer.status.is_final:
        state.stream_ended = True
    deadline.last_status = answer.status
    return answer


def wait(
    ctx: Context,
    state: JobState,
    deadline: Deadline,
    raise_on_failure: bool = True,
) -> Flow[JobResult]:
    """Return the job's final result; notice its end within max(50 ms, 10 % waited).

    A handle that reads its job's /stream waits there, then reads the output from
    /status. It asks /status before that long-poll only when something was heard of the
    job since it was submitted: a job queued a moment ago is rarely done.
    """
    if state.result is not None and state.result.status.is_final:
        return finish(state.endpoint_id, state.result, raise_on_failure, ctx.secret)
    deadline.last_status = state.last_status
    look = state.heard or not (state.owns_stream and not state.stream_ended)
    while True:
        if look:
            result = yield from status(ctx, state, deadline)
            if result.status.is_final:
                return finish(state.endpoint_id, result, raise_on_failure, ctx.secret)
        look = True
        if state.owns_stream and not state.stream_ended:
            polls = _Polls()
            while not state.stream_ended:
                yield from polls.next(ctx, state, deadline)
            continue  # the job ended: read its output
        yield from next_poll(ctx, deadline)


def next_poll(ctx: Context, deadline: Deadline, detail: str = "") -> Flow[None]:
    """The pause before the next poll (``poll_interval``), cut at the deadline; past it,
    the deadline's Timeout (saying ``detail``)."""
    wait_for = min(poll_interval(ctx.now() - deadline.start), deadline.remaining(ctx.now()))
    if wait_for <= 0:
        raise deadline.expired(detail)
    yield pause(ctx, wait_for)


def states(ctx: Context, state: JobState, deadline: Deadline) -> Flow[None]:
    """Emit every /status answer, paced as ``wait`` polls, until a final one (emitted
    last, never raised): the loop of a caller that shows progress or watches for its
    own reason to stop. It never reads /stream, whose chunks are handed out once."""
    while True:
        result = yield from status(ctx, state, deadline)
        yield Emit(result)
        if result.status.is_final:
            return
        yield from next_poll(ctx, deadline)


@dataclass
class _Polls:
    """A reader's /stream long-polls, spaced when the service answers early: one that
    comes back empty at once was not held, so the next waits ``poll_interval``."""

    asked: float | None = None
    had_chunks: bool = False

    def next(self, ctx: Context, state: JobState, deadline: Deadline) -> Flow[StreamResponse]:
        if self.asked is not None:
            now = ctx.now()
            gap = STREAM_SPACING if self.had_chunks else poll_interval(now - deadline.start)
            wait_for = self.asked + gap - now
            if wait_for > 0:
                yield pause(ctx, min(wait_for, max(0.0, deadline.remaining(now))))
        self.asked = ctx.now()
        answer = yield from stream_poll(ctx, state, deadline)
        self.had_chunks = bool(answer.stream)
        return answer


def stream(
    ctx: Context, state: JobState, deadline: Deadline, *, batches: bool = False
) -> Flow[None]:
    """Emit the job's outputs in order, split chunks whole, until the job ends; with
    ``batches``, the list of whole chunks each answer completed. Each once, or
    ``ChunksMissing`` (docs/behaviour.md#streams-under-faults)."""
    try:
        yield from _stream(ctx, state, deadline, batches)
    except NbextError as exc:
        if state.ledger.needs_output and not isinstance(exc, ChunksMissing):
            exc.add_note(
                f"stream: an answer of /stream was lost on the way; outputs from "
                f"#{state.ledger.values} on come from the job's output once it ends: "
                "read the stream again to get them"
            )
        raise


def _stream(ctx: Context, state: JobState, deadline: Deadline, batches: bool) -> Flow[None]:
    polls = _Polls()
    while True:
        batch: list[StreamChunk] = []
        while state.buffer:
            whole = _feed(state, state.buffer.popleft())
            if whole is None:
                continue
            if batches:
                batch.append(whole)
            else:
                yield Emit(whole)
        if state.stream_ended and state.ledger.needs_output:
            result = state.result
            if result is None or not result.status.is_final:
                result = yield from status(ctx, state, deadline)
            state.reassembler = Reassembler()  # a split output cut by the gap comes whole
            recovered = state.ledger.recover(result, state.endpoint_id)
            if batches:
                batch.extend(recovered)
            else:
                for chunk in recovered:
                    yield Emit(chunk)
        if batch:
            yield Emit(batch)
        if state.stream_ended:
            if state.reassembler.pending:
                log.warning("job %s ended in the middle of a split output; dropped", state.id)
            return
        answer = yield from polls.next(ctx, state, deadline)
        if not state.keep_chunks:  # a handle that drops chunks still streams what it reads
            state.buffer.extend(answer.stream)


def _feed(state: JobState, chunk: StreamChunk) -> StreamChunk | None:
    try:
        whole = state.reassembler.feed(chunk)
    except StreamProtocolError as exc:
        raise APIError(
            f"job {state.id} on endpoint {state.endpoint_id!r}: malformed stream: {exc}",
            status=200,
            endpoint_id=state.endpoint_id,
            job_id=state.id,
        ) from None
    if whole is not None:
        state.ledger.values += 1
    return whole


def call_model(ctx: Context, call: Call, model: type[M]) -> Flow[M]:
    response = yield from send(ctx, call)
    return model_of(call, response, model)


def submit(ctx: Context, endpoint_id: str, body: bytes) -> Flow[JobState]:
    """/run: the job's id, at once. Re-sent only after a 429 or a connection never made."""
    call = endpoint_call("run", "POST", endpoint_id, body=body)
    sent_at = ctx.now()
    response = yield from send(ctx, call)
    accepted = model_of(call, response, AcceptedJob)
    result = JobResult(id=accepted.id, status=accepted.status)
    ctx.started(endpoint_id, accepted.id, call, sent_at)
    ctx.seen(result)
    return JobState(endpoint_id, accepted.id, result=result)


def _change(ctx: Context, state: JobState, call: Call) -> Flow[Answer]:
    """Send a job's cancel or retry. Its 409 is raised with the state the job is in
    (``Conflict.job_status``), read from /status: the service says it only in words,
    and a caller should not have to parse them to say "it had already COMPLETED"."""
    try:
        return (yield from send(ctx, call))
    except Conflict as exc:
        refused = exc
    try:
        now = yield from status(ctx, state)
    except NbextError:
        raise refused from None
    refused.job_status = now.status
    raise refused


def cancel_job(ctx: Context, state: JobState) -> Flow[CancelResult]:
    """Cancel the job (Conflict if it already ended other than CANCELLED)."""
    call = job_call("cancel", "POST", state.endpoint_id, state.id)
    answer = model_of(call, (yield from _change(ctx, state, call)), CancelResult)
    ctx.seen(JobResult(id=state.id, status=answer.status))
    return answer


def retry_job(ctx: Context, state: JobState) -> Flow[AcceptedJob]:
    call = job_call("retry", "POST", state.endpoint_id, state.id)
    response = yield from _change(ctx, state, call)
    accepted = model_of(call, response, AcceptedJob)
    state.reset()
    ctx.started(state.endpoint_id, accepted.id)
    ctx.seen(JobResult(id=accepted.id, status=accepted.status))
    return accepted


def run_sync(
    ctx: Context,
    endpoint_id: str,
    body: bytes,
    wait_s: float,
    timeout: float | None,
    raise_on_failure: bool,
) -> Flow[JobResult]:
    """/runsync; when the job outlives ``wait``, go on waiting on its id, never re-sending."""
    outer = submission_deadline(ctx, endpoint_id, timeout)
    hold = min(wait_s, max(0.0, outer.remaining(ctx.now())))
    call = runsync_call(endpoint_id, body, hold)
    response = yield from send(ctx, call, outer)
    return (yield from submitted(ctx, call, response, outer, raise_on_failure))


def submission_deadline(
    ctx: Context, endpoint_id: str, timeout: float | None, operation: str = "runsync"
) -> Deadline:
    """The deadline of a submission (/``operation``) and of the wait that may follow it."""
    return Deadline(
        start=ctx.now(),
        timeout=wait_seconds(ctx, timeout),
        what=f"/{operation} on endpoint {endpoint_id!r}",
        endpoint_id=endpoint_id,
    )


def submitted(
    ctx: Context,
    call: Call,
    response: Answer,
    outer: Deadline,
    raise_on_failure: bool,
    *,
    keep_chunks: bool = True,
    track: Callable[[str], None] | None = None,
) -> Flow[JobResult]:
    """A /runsync or /run answer: the job's result, or (the job outlived /runsync's hold,
    or was queued by /run) its id to wait on until ``outer``'s deadline, long-polling
    /stream as the job's submitter. ``track`` is told the job's id as soon as it is read."""
    if call.operation == "runsync":
        # One parse: a job still running answers {id, status}, which reads as a JobResult too.
        result = model_of(call, response, JobResult)
    else:
        accepted = model_of(call, response, AcceptedJob)
        result = JobResult(id=accepted.id, status=accepted.status)
    if track is not None:
        track(result.id)
    ctx.started(call.endpoint_id, result.id, call, outer.start)
    ctx.seen(result)
    state = JobState(call.endpoint_id, result.id, keep_chunks=keep_chunks, result=result)
    what = f"job {result.id} on endpoint {outer.endpoint_id!r} (submitted by /{call.operation})"
    job = replace(outer, what=what, job_id=result.id)
    return (yield from wait(ctx, state, job, raise_on_failure))
