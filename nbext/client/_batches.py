"""Batch jobs: a sweep the service keeps and runs, found again from anywhere by its id
(docs/behaviour.md#batches-from-the-client-and-the-notebook)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nbext.models.batches import (
    BATCH_CALL_LIMIT,
    BATCH_PAGE_MAX,
    BATCH_REQUESTS_MAX,
    BatchPage,
    BatchRecord,
    BatchRequest,
    BatchRequestPage,
    BatchStatus,
)

from ._calls import Call, segment
from ._cost import JobCost, Spending
from ._errors import BadRequest, Conflict, NbextError, PayloadTooLarge
from ._flows import (
    Context,
    Deadline,
    Flow,
    call_model,
    next_poll,
    wait_seconds,
)
from ._retry import Kind
from ._twins import Handle, awaiting, blocking

ENVELOPE = len(b'{"requests":[]}')


@dataclass
class BatchState:
    """What a handle knows of its batch: the last record read, and the requests that had
    ended, from the first on (``costs`` theirs, None where unknown)."""

    endpoint_id: str
    id: str
    record: BatchRecord | None = None
    ended: list[BatchRequest] = field(default_factory=list)
    costs: list[JobCost | None] = field(default_factory=list)


def _call(state: BatchState | str, method: str, tail: str = "", **kw: Any) -> Call:
    endpoint_id = state if isinstance(state, str) else state.endpoint_id
    path = f"{segment(endpoint_id, 'endpoint id')}/batch"
    if not isinstance(state, str):
        path += f"/{segment(state.id, 'batch id')}"
    kind = Kind.SUBMIT if method == "POST" and tail in ("", "/requests") else Kind.IDEMPOTENT
    return Call(method, path + tail, "batch" + tail, kind, endpoint_id, **kw)


def _refused(cls: type[BadRequest | PayloadTooLarge], endpoint_id: str, reason: str) -> NbextError:
    status = 413 if cls is PayloadTooLarge else 400
    message = f"batch for endpoint {endpoint_id!r} refused locally, nothing was sent: {reason}"
    return cls(message, status=status, endpoint_id=endpoint_id, sent=False, reason=reason)


def _calls(endpoint_id: str, inputs: Iterable[Mapping[str, Any]]) -> list[list[bytes]]:
    """Each input as its request's JSON, grouped in calls that fit the 10 MiB limit."""
    if isinstance(inputs, Mapping | str | bytes) or not isinstance(inputs, Iterable):
        raise _refused(
            BadRequest, endpoint_id, f"inputs must be a list of dicts, got {inputs!r:.40}"
        )
    items = list(inputs)
    if len(items) > BATCH_REQUESTS_MAX:
        reason = f"a batch holds at most {BATCH_REQUESTS_MAX:,} requests, got {len(items):,} inputs"
        raise _refused(BadRequest, endpoint_id, reason + "; split them into several batches")
    calls: list[list[bytes]] = [[]]
    size = ENVELOPE
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            kind = type(item).__name__
            article = "an" if kind[0] in "aeiou" else "a"
            reason = f"input #{i} is {article} {kind}; each must be a JSON object (a dict)"
            raise _refused(BadRequest, endpoint_id, reason)
        try:
            piece = json.dumps({"input": item}, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise _refused(BadRequest, endpoint_id, f"input #{i} is not JSON: {exc}") from None
        if len(piece) + ENVELOPE > BATCH_CALL_LIMIT:
            reason = f"input #{i} is {len(piece):,} bytes, over the 10 MiB a batch call may carry"
            raise _refused(PayloadTooLarge, endpoint_id, reason)
        if size + len(piece) + 1 > BATCH_CALL_LIMIT:
            calls.append([])
            size = ENVELOPE
        calls[-1].append(piece)
        size += len(piece) + 1
    return calls if calls[0] else []


def _send(ctx: Context, state: BatchState, method: str, tail: str, **kw: Any) -> Flow[BatchRecord]:
    state.record = yield from call_model(ctx, _call(state, method, tail, **kw), BatchRecord)
    return state.record


def _added(
    ctx: Context, state: BatchState, calls: list[list[bytes]], added: int, finalize: bool
) -> Flow[None]:
    """Send ``calls`` to a draft, in order, then finalize it if asked; a failure notes
    the draft and how many of the inputs it holds (``added`` before these calls)."""
    total = added + sum(map(len, calls))
    try:
        for pieces in calls:
            body = b'{"requests":[' + b",".join(pieces) + b"]}"
            yield from _send(ctx, state, "POST", "/requests", body=body)
            _recorded(ctx, state, pieces)
            added += len(pieces)
            if isinstance(ctx.hooks, Spending) and state.id in ctx.hooks.budget.batches:
                ctx.hooks.budget.batches[state.id] += len(pieces)
        if finalize:
            yield from _finalize(ctx, state)
    except NbextError as exc:
        exc.add_note(
            f"batch {state.id} on {state.endpoint_id!r} is a DRAFT holding {added} of these "
            f"{total} inputs; endpoint.get_batch({state.id!r}) finds it, to add() the rest, "
            "finalize() or cancel() it"
        )
        raise


def create(
    ctx: Context,
    endpoint_id: str,
    inputs: Iterable[Mapping[str, Any]],
    *,
    finalize: bool = True,
) -> Flow[BatchState]:
    """Run ``inputs`` (dicts) as a batch the service keeps, finalized unless
    ``finalize=False``: its state. Whatever would be refused (too many inputs, one not a
    JSON object or over 10 MiB, none to finalize, over the budget) is, before any call."""
    calls = _calls(endpoint_id, inputs)
    count = sum(map(len, calls))
    if finalize and not count:
        raise _refused(
            BadRequest, endpoint_id, "no inputs to run (finalize=False makes an empty draft)"
        )
    if isinstance(ctx.hooks, Spending):
        yield from ctx.hooks.admit_batch(ctx, endpoint_id, count)
    first = calls[0] if calls else []
    call = _call(endpoint_id, "POST", body=b"[" + b",".join(first) + b"]")
    record = yield from call_model(ctx, call, BatchRecord)
    state = BatchState(endpoint_id, record.id, record)
    _recorded(ctx, state, first)
    if isinstance(ctx.hooks, Spending):  # its requests count in the budget as they end
        ctx.hooks.budget.batches[state.id] = len(first)
    yield from _added(ctx, state, calls[1:], len(first), finalize)
    return state


def _recorded(ctx: Context, state: BatchState, pieces: list[bytes]) -> None:
    """While the client records, the inputs added, to know each request's input."""
    if ctx.recording is not None:
        ctx.recording.batch(state.id, [json.loads(piece)["input"] for piece in pieces])


def _add(ctx: Context, state: BatchState, inputs: Iterable[Mapping[str, Any]]) -> Flow[None]:
    """Add ``inputs`` to this DRAFT (after those it holds), checked as ``batch`` checks them."""
    calls = _calls(state.endpoint_id, inputs)
    if isinstance(ctx.hooks, Spending):
        yield from ctx.hooks.admit_batch(ctx, state.endpoint_id, sum(map(len, calls)))
    yield from _added(ctx, state, calls, 0, finalize=False)


def _finalize(ctx: Context, state: BatchState) -> Flow[BatchRecord]:
    """Start this DRAFT: it becomes FINALIZED and its requests run (409 when empty)."""
    return (yield from _send(ctx, state, "POST", "/finalize"))


def _cancel(ctx: Context, state: BatchState) -> Flow[BatchRecord]:
    """Cancel: requests not started are dropped (never billed); those running finish."""
    return (yield from _send(ctx, state, "POST", "/cancel"))


def _refresh(ctx: Context, state: BatchState) -> Flow[BatchRecord]:
    """The batch's status and request counts, read again (also in ``record``)."""
    return (yield from _send(ctx, state, "GET", ""))


def _read(ctx: Context, state: BatchState, pages: int | None = None) -> Flow[list[BatchRequest]]:
    """The requests from the first not known to have ended, ``pages`` pages of 1,000 at
    most (None: all); the ended ones at their head are kept (and priced), the rest returned."""
    offset, rest = len(state.ended), list[BatchRequest]()
    while pages is None or pages > 0:
        params = {"offset": str(offset + len(rest)), "limit": str(BATCH_PAGE_MAX)}
        call = _call(state, "GET", "/requests", params=params)
        page = yield from call_model(ctx, call, BatchRequestPage)
        rest += page.requests
        pages = None if pages is None else pages - 1
        if not page.has_more or not page.requests:
            break
    while rest and rest[0].status.is_final:
        request = rest.pop(0)
        state.ended.append(request)
        if ctx.recording is not None:
            ctx.recording.batched(state.endpoint_id, state.id, len(state.ended) - 1, request)
        state.costs.append((yield from _priced(ctx, state, request)))
    return rest


def _priced(ctx: Context, state: BatchState, request: BatchRequest) -> Flow[JobCost | None]:
    if not isinstance(ctx.hooks, Spending):
        return None
    if state.id in ctx.hooks.budget.batches:  # started through this budget: counted
        ctx.hooks.budget.batch_request(state.endpoint_id, request)
    try:
        return (yield from ctx.hooks.cost(ctx, state.endpoint_id, request))
    except NbextError:
        return None


def _results(ctx: Context, state: BatchState) -> Flow[list[BatchRequest]]:
    """Every request with its result (``output`` or ``error``), in input order."""
    rest = yield from _read(ctx, state)
    return [*state.ended, *rest]


def _wait(
    ctx: Context,
    state: BatchState,
    timeout: float | None = None,
    progress: Callable[[BatchRecord], object] | None = None,
) -> Flow[BatchRecord]:
    """Wait until every request has ended; return the batch.

    Polled as ``Job.states`` polls. ``progress(record)`` is called after each poll;
    with it, each poll also reads a page of the results that ended, the last poll every
    page (``costs`` is then the cost so far, and ``results()`` reads only what is left).
    Past ``timeout`` (default: the client's ``wait_timeout``) raises Timeout; the batch
    goes on. A DRAFT is refused: it runs once finalized.
    """
    deadline = Deadline(
        ctx.now(), wait_seconds(ctx, timeout), f"batch {state.id} on {state.endpoint_id!r}"
    )
    while True:
        record = yield from _refresh(ctx, state)
        if record.status is BatchStatus.DRAFT:
            reason = f"batch {state.id} is a DRAFT: finalize() it to run it"
            raise Conflict(reason, status=409, sent=False, reason=reason)
        if progress is not None:
            if record.ended > len(state.ended):
                yield from _read(ctx, state, pages=None if record.done else 1)
            progress(record)
        if record.done:
            return record
        yield from next_poll(ctx, deadline, "the batch goes on: wait again, or cancel it")


def listing(ctx: Context, endpoint_id: str) -> Flow[list[BatchRecord]]:
    """The endpoint's batches, newest first (every page)."""
    batches: list[BatchRecord] = []
    while True:
        params = {"offset": str(len(batches)), "limit": str(BATCH_PAGE_MAX)}
        page = yield from call_model(ctx, _call(endpoint_id, "GET", params=params), BatchPage)
        batches += page.batches
        if not page.has_more or not page.batches:
            return batches


def found(ctx: Context, endpoint_id: str, batch_id: str) -> Flow[BatchState]:
    """A handle on a batch made anywhere (another kernel, yesterday): read once, so an
    unknown id is a NotFound now. Its requests count in this client's budget only if it
    was started through a client holding the same ``Budget``."""
    state = BatchState(endpoint_id, batch_id)
    yield from _refresh(ctx, state)
    return state


class _BatchBase(Handle):
    _state: BatchState

    @property
    def record(self) -> BatchRecord | None:
        """The last batch record read, without asking again."""
        return self._state.record

    @property
    def status(self) -> BatchStatus | None:
        return None if self._state.record is None else self._state.record.status

    @property
    def costs(self) -> list[JobCost | None]:
        """The cost of each request read ended so far, in input order (None: unknown)."""
        return list(self._state.costs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r} on {self.endpoint_id!r}, {self.status})"


class Batch(_BatchBase):
    """A batch of the service: its status and counts, its results in input order."""

    refresh = blocking(_refresh)
    wait = blocking(_wait)
    results = blocking(_results)
    add = blocking(_add)
    finalize = blocking(_finalize)
    cancel = blocking(_cancel)


class AsyncBatch(_BatchBase):
    """``Batch`` for ``await``: the same methods."""

    refresh = awaiting(_refresh)
    wait = awaiting(_wait)
    results = awaiting(_results)
    add = awaiting(_add)
    finalize = awaiting(_finalize)
    cancel = awaiting(_cancel)
