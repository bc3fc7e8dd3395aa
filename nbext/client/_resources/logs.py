"""Log lines of pods and serverless workers (REST v2), read once or followed.

The service sends logs as Server-Sent Events, each event one line whose ``id`` is a
cursor. ``logs`` reads what is there now. ``follow_logs`` keeps reading: when a stream
ends, it waits the server's ``retry`` hint on the client's clock (so tests move time
instead of sleeping) and reconnects with ``Last-Event-ID`` set to the last cursor seen,
receiving only newer lines, as a browser's EventSource does. It stops when the caller
stops iterating or sets ``stop``, or when the pod or worker is gone (404 after the
first answer: a wrong id on the first request is still NotFound).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Concatenate, Literal, ParamSpec, Protocol, cast

from pydantic import ValidationError

from nbext.models import explain
from nbext.models.v2 import LogEvent

from .. import _sse
from .._calls import Answer, Call
from .._errors import NotFound
from .._flows import Context, Emit, Flow, pause, send
from . import shapes
from .twins import AsyncResource, SyncResource, adopt
from .v2_only import v2_call
from .wire import _unreadable, ident, refused

P = ParamSpec("P")
LogSource = Literal["container", "system"]
SOURCES = ("container", "system")
MAX_TAIL = 5000
"""The most lines the service backfills (its documented maximum of ``tail``)."""
DEFAULT_RETRY = 3.0
"""Seconds between two connections of a follower when the server gives no ``retry``."""
MIN_RETRY = 0.1
"""The shortest wait between two connections, whatever the hint: a server that says
``retry: 0`` must not turn a follower into a busy loop."""
SSE_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}


class Stop(Protocol):
    """What tells a follower to stop: a ``threading.Event`` (or an ``asyncio.Event``)."""

    def is_set(self) -> bool: ...


def _since(operation: str, since: datetime | str) -> str:
    """``since`` as RFC 3339 in UTC; a naive datetime is local time, as ``datetime.now()``."""
    if isinstance(since, str):
        try:
            moment = datetime.fromisoformat(since.strip().replace("Z", "+00:00"))
        except ValueError:
            raise refused(
                operation, f"since must be an RFC 3339 date-time, got {since!r}"
            ) from None
    elif isinstance(since, datetime):
        moment = since
    else:
        raise refused(operation, f"since must be a datetime or an RFC 3339 string, got {since!r}")
    moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def log_query(
    operation: str, tail: int | None, since: datetime | str | None, source: str | None
) -> list[tuple[str, str]]:
    """The query of a log request, each argument checked before anything is sent."""
    params: list[tuple[str, str]] = []
    if source is not None:
        if source not in SOURCES:
            raise refused(operation, f"source must be 'container' or 'system', got {source!r}")
        params.append(("source", source))
    if tail is not None:
        if isinstance(tail, bool) or not isinstance(tail, int) or not 0 <= tail <= MAX_TAIL:
            raise refused(operation, f"tail must be a whole number 0..{MAX_TAIL}, got {tail!r}")
        params.append(("tail", str(tail)))
    if since is not None:
        params.append(("since", _since(operation, since)))
    return params


def read_events(call: Call, response: Answer) -> tuple[list[LogEvent], float | None]:
    """The log lines of one answer, each with its cursor, and the ``retry`` hint (s)."""
    parsed = _sse.parse(response.content)
    lines = []
    for event in parsed.events:
        try:
            data: Any = json.loads(event.data)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            lines.append(LogEvent.model_validate({**data, "cursor": event.id or None}))
        except ValueError as exc:
            detail = explain(exc) if isinstance(exc, ValidationError) else str(exc)
            raise _unreadable(call, response, f"a log event it cannot read: {detail}") from None
    retry = None if parsed.retry_ms is None else parsed.retry_ms / 1000
    return lines, retry


def _read(ctx: Context, call: Call) -> Flow[list[LogEvent]]:
    lines, _ = yield from shapes.fetch(ctx, call, read_events)
    return lines


def _follow(
    ctx: Context, first: Call, resume: Callable[[str], Call], stop: Stop | None
) -> Flow[None]:
    """Emit each line as it comes; reconnect after each stream with the last cursor."""
    call, cursor, retry, connected = first, "", DEFAULT_RETRY, False
    while stop is None or not stop.is_set():
        try:
            response = yield from send(ctx, call)
        except NotFound:
            if not connected:
                raise
            return  # the pod or worker is gone: its log is complete
        connected = True
        lines, hint = read_events(call, response)
        if hint is not None:
            retry = hint
        for line in lines:
            if stop is not None and stop.is_set():
                return
            yield Emit(line)
            cursor = line.cursor or cursor
        if cursor:
            call = resume(cursor)
        yield pause(ctx, max(MIN_RETRY, retry))


def _pod_call(
    ctx: Context,
    operation: str,
    pod_id: str,
    tail: int | None,
    since: datetime | str | None,
    source: str | None,
    cursor: str | None = None,
) -> Call:
    pid = ident(pod_id, "pod id")
    params = log_query(operation, tail, since, source)
    headers = {**SSE_HEADERS, **({"Last-Event-ID": cursor} if cursor else {})}
    subject = f"pod {pod_id!r}"
    return v2_call(
        ctx, "GET", ["pods", pid, "logs"], operation, subject, query=params, headers=headers
    )


def _worker_call(
    ctx: Context,
    operation: str,
    endpoint_id: str,
    worker_id: str,
    tail: int | None,
    since: datetime | str | None,
    source: str | None,
    cursor: str | None = None,
) -> Call:
    eid = ident(endpoint_id, "endpoint id")
    wid = ident(worker_id, "worker id")
    params = log_query(operation, tail, since, source)
    headers = {**SSE_HEADERS, **({"Last-Event-ID": cursor} if cursor else {})}
    subject = f"worker {worker_id!r} of endpoint {endpoint_id!r}"
    parts = ["serverless", eid, "workers", wid, "logs"]
    return v2_call(ctx, "GET", parts, operation, subject, query=params, headers=headers)


def pod_logs(
    ctx: Context,
    pod_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
) -> Flow[list[LogEvent]]:
    """The pod's log lines now: the last ``tail`` (the service's default 100, at most
    5000), or those from ``since`` on; ``source`` ``"container"`` (what the program
    printed) or ``"system"`` (what the platform did), both by default."""
    call = _pod_call(ctx, "pods.logs", pod_id, tail, since, source)
    return (yield from _read(ctx, call))


def follow_pod_logs(
    ctx: Context,
    pod_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
    stop: Stop | None = None,
) -> Flow[None]:
    """The pod's log lines as they come, starting like ``logs``; ends when the caller
    stops iterating or sets ``stop`` (a ``threading.Event``), or when the pod is gone."""
    first = _pod_call(ctx, "pods.follow_logs", pod_id, tail, since, source)

    def resume(cursor: str) -> Call:
        return _pod_call(ctx, "pods.follow_logs", pod_id, None, None, source, cursor)

    return _follow(ctx, first, resume, stop)


def worker_logs(
    ctx: Context,
    endpoint_id: str,
    worker_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
) -> Flow[list[LogEvent]]:
    """A serverless worker's log lines now (``endpoints.workers`` lists the workers);
    ``tail``, ``since`` and ``source`` as for ``pods.logs``."""
    call = _worker_call(ctx, "endpoints.worker_logs", endpoint_id, worker_id, tail, since, source)
    return (yield from _read(ctx, call))


def follow_worker_logs(
    ctx: Context,
    endpoint_id: str,
    worker_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
    stop: Stop | None = None,
) -> Flow[None]:
    """A worker's log lines as they come, like ``pods.follow_logs``; ends when the
    worker is gone (the service keeps a worker's log only while it lives)."""
    op = "endpoints.follow_worker_logs"
    first = _worker_call(ctx, op, endpoint_id, worker_id, tail, since, source)

    def resume(cursor: str) -> Call:
        return _worker_call(ctx, op, endpoint_id, worker_id, None, None, source, cursor)

    return _follow(ctx, first, resume, stop)


# ---- the sync and async methods of a follower -------------------------------------------


class _SyncIterating(Protocol):
    _ctx: Context

    def _iterate(self, flow: Flow[None]) -> Iterator[Any]: ...


class _AsyncIterating(Protocol):
    _ctx: Context

    def _iterate(self, flow: Flow[None]) -> AsyncIterator[Any]: ...


def following(
    operation: Callable[Concatenate[Context, P], Flow[None]],
) -> Callable[Concatenate[SyncResource, P], Iterator[LogEvent]]:
    """A sync method iterating ``operation``'s lines (arguments checked at the call)."""

    def method(self: SyncResource, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[LogEvent]:
        client = cast(_SyncIterating, self._client)
        return cast(Iterator[LogEvent], client._iterate(operation(client._ctx, *args, **kwargs)))

    adopt(method, operation, awaited=False)
    method.__signature__ = method.__signature__.replace(  # type: ignore[attr-defined]
        return_annotation="Iterator[LogEvent]"
    )
    return method


def afollowing(
    operation: Callable[Concatenate[Context, P], Flow[None]],
) -> Callable[Concatenate[AsyncResource, P], AsyncIterator[LogEvent]]:
    """An async method: ``async for line in ...`` over ``operation``'s lines."""

    def method(
        self: AsyncResource, /, *args: P.args, **kwargs: P.kwargs
    ) -> AsyncIterator[LogEvent]:
        client = cast(_AsyncIterating, self._client)
        flow = operation(client._ctx, *args, **kwargs)
        return cast(AsyncIterator[LogEvent], client._iterate(flow))

    adopt(method, operation, awaited=False)
    method.__signature__ = method.__signature__.replace(  # type: ignore[attr-defined]
        return_annotation="AsyncIterator[LogEvent]"
    )
    return method
