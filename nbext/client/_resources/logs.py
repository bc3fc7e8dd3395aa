"""Log lines of pods and serverless workers (REST v2), read once or followed.

The service sends Server-Sent Events, one line each, whose ``id`` is a cursor, and may
hold a stream open for newer lines (the emulator ends it). ``logs`` reads until the stream
ends or stays quiet. ``follow_logs`` reconnects after each stream with ``Last-Event-ID``,
as a browser's EventSource does, after the server's ``retry`` on the client's clock (so
tests move time), until stopped or the pod or worker is gone (404 after the first answer).
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, cast

import httpx
from httpx_sse import ServerSentEvent
from pydantic import ValidationError

from nbext.models import explain
from nbext.models.v2 import LogEvent

from .._calls import Call, call_error, transport_error
from .._errors import NotFound, excerpt
from .._flows import Context, Emit, Flow, NextEvent, pause, send
from .rest import V2
from .wire import _unreadable, ident, refused

LogSource = Literal["container", "system"]
SOURCES = ("container", "system")
MAX_TAIL = 5000
"""The most lines the service backfills (its documented maximum of ``tail``)."""
QUIET = 2.0
"""Seconds of silence after which ``logs`` takes a held-open stream to have sent all."""
LONGEST_READ = 10.0
"""However busy a held-open log, ``logs`` returns after reading it this long (its lines
so far): a log that never goes quiet would otherwise never be "what is there now"."""
FOLLOW_IDLE = 15.0
"""A followed stream silent this long is reopened from the last cursor (a proxy may have
dropped it without a word); ``stop`` is noticed at the latest then."""
DEFAULT_RETRY = 3.0
"""Seconds between two connections of a follower when the server gives no ``retry``."""
MIN_RETRY = 0.1
"""The shortest wait between two connections: ``retry: 0`` must not make a busy loop."""
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


def _quiet(operation: str, quiet: float) -> float:
    if isinstance(quiet, bool) or not isinstance(quiet, int | float) or not quiet > 0:
        raise refused(operation, f"quiet must be a number of seconds > 0, got {quiet!r}")
    return float(quiet)


def log_line(call: Call, event: ServerSentEvent) -> LogEvent | None:
    """The log line an event carries, with its cursor; None for an event without data
    (a block holding only ``retry`` or ``id``, as the emulator opens each stream with)."""
    if not event.data:
        return None
    try:
        data: Any = json.loads(event.data)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return LogEvent.model_validate({**data, "cursor": event.id or None})
    except ValueError as exc:
        detail = explain(exc) if isinstance(exc, ValidationError) else str(exc)
        problem = f"a log event it cannot read: {detail}"
    text = f"{call.describe()} ({call.subject}) sent {problem}"
    raise call_error(call, text, 200, body=excerpt(event.data, 200))


def _open(ctx: Context, call: Call, idle: float) -> Flow[Any]:
    """The call's event stream, open; an error status raises as any call's."""
    opened = yield from send(ctx, call, idle=idle)
    if not hasattr(opened, "next"):  # read whole: a success that is not an event stream
        kind = opened.headers.get("content-type") or "none"
        raise _unreadable(call, opened, f"content type {kind!r}, not an event stream")
    return opened


def _read(
    ctx: Context, call: Call, quiet: float, longest: float = LONGEST_READ
) -> Flow[list[LogEvent]]:
    """The lines a stream holds now: until it ends, stays quiet ``quiet`` seconds, or has
    been read ``longest`` seconds since it opened (its opening's retries do not count)."""
    stream = yield from _open(ctx, call, quiet)
    started = ctx.now()
    lines: list[LogEvent] = []
    try:
        while True:
            failed: httpx.TransportError | None = None
            try:
                event = yield NextEvent(stream)
            except httpx.TimeoutException:
                return lines
            except httpx.TransportError as exc:
                failed = exc
            if failed is not None:  # raised outside the except: nothing chained
                raise transport_error(call, failed, ctx.secret)
            if event is None:
                return lines
            if (line := log_line(call, event)) is not None:
                lines.append(line)
            if ctx.now() - started >= longest:
                return lines  # a log written faster than it goes quiet: enough is now
    finally:
        stream.close()


Query = tuple[int | None, datetime | str | None, str | None]
"""A log request's (tail, since, source)."""
Where = tuple[list[str], str]
"""A log's path under ``/v2`` and what it is the log of."""


def _log_call(
    api: V2, operation: str, where: Where, query: Query, cursor: str | None = None
) -> Call:
    """A log stream's call; ``cursor`` resumes after that line (``Last-Event-ID``)."""
    params = log_query(operation, *query)
    headers = {**SSE_HEADERS, **({"Last-Event-ID": cursor} if cursor else {})}
    call = api.call("GET", where[0], operation, where[1], query=params)
    return dataclasses.replace(call, headers=headers)


def _pod(pod_id: str) -> Where:
    pid, subject = ident(pod_id, "pod")
    return ["pods", pid, "logs"], subject


def _worker(endpoint_id: str, worker_id: str) -> Where:
    (eid, endpoint), (wid, worker) = ident(endpoint_id, "endpoint"), ident(worker_id, "worker")
    return ["serverless", eid, "workers", wid, "logs"], f"{worker} of {endpoint}"


def _follow(
    ctx: Context, api: V2, first: Call, where: Where, source: str | None, stop: Stop | None
) -> Flow[None]:
    """Emit each line as it comes; reconnect after each stream asking for the lines after
    the last cursor seen (of the same ``source``)."""
    call, cursor, retry, connected = first, "", DEFAULT_RETRY, False

    def stopped() -> bool:
        return stop is not None and stop.is_set()

    while not stopped():
        try:
            stream = yield from _open(ctx, call, FOLLOW_IDLE)
        except NotFound:
            if not connected:
                raise
            return  # the pod or worker is gone: its log is complete
        connected = True
        try:
            while True:
                try:
                    event = yield NextEvent(stream)
                except httpx.TransportError:
                    break  # quiet past FOLLOW_IDLE, or cut: reopen from the last cursor
                if event is None:
                    break
                if event.retry is not None and event.retry >= 0:
                    retry = event.retry / 1000
                if (line := log_line(call, event)) is None:
                    continue
                yield Emit(line)
                cursor = line.cursor or cursor
                if stopped():
                    return
        finally:
            stream.close()
        if cursor:
            call = _log_call(api, first.operation, where, (None, None, source), cursor)
        yield pause(ctx, max(MIN_RETRY, retry))


def pod_logs(
    ctx: Context,
    api: V2,
    pod_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
    quiet: float = QUIET,
) -> Flow[list[LogEvent]]:
    """The pod's log lines now: the last ``tail`` (the service's default 100, at most
    5000), or those from ``since`` on; ``source`` ``"container"`` (what the program
    printed) or ``"system"`` (what the platform did), both by default.

    A service that holds the stream open for newer lines has sent what it had once the
    stream stays quiet ``quiet`` seconds; ``follow_logs`` keeps reading instead.
    """
    call = _log_call(api, "pods.logs", _pod(pod_id), (tail, since, source))
    return (yield from _read(ctx, call, _quiet("pods.logs", quiet)))


def follow_pod_logs(
    ctx: Context,
    api: V2,
    pod_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
    stop: Stop | None = None,
) -> Flow[None]:
    """The pod's log lines as they come, starting like ``logs``; ends when the caller
    stops iterating or sets ``stop`` (a ``threading.Event``), or when the pod is gone."""
    where = _pod(pod_id)
    first = _log_call(api, "pods.follow_logs", where, (tail, since, source))
    return _follow(ctx, api, first, where, source, stop)


def worker_logs(
    ctx: Context,
    api: V2,
    endpoint_id: str,
    worker_id: str,
    *,
    tail: int | None = None,
    since: datetime | str | None = None,
    source: LogSource | str | None = None,
    quiet: float = QUIET,
) -> Flow[list[LogEvent]]:
    """A serverless worker's log lines now (``endpoints.workers`` lists the workers);
    ``tail``, ``since``, ``source`` and ``quiet`` as for ``pods.logs``."""
    op, where = "endpoints.worker_logs", _worker(endpoint_id, worker_id)
    call = _log_call(api, op, where, (tail, since, source))
    return (yield from _read(ctx, call, _quiet(op, quiet)))


def follow_worker_logs(
    ctx: Context,
    api: V2,
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
    where = _worker(endpoint_id, worker_id)
    first = _log_call(api, "endpoints.follow_worker_logs", where, (tail, since, source))
    return _follow(ctx, api, first, where, source, stop)


def as_line(item: Any) -> LogEvent:
    """What a follower emits: one log line."""
    return cast(LogEvent, item)
