"""Server-Sent Events as the management interface's log streams send them.

The field grammar (``event``, ``data``, ``id``, ``retry``, comments, CR/LF/CRLF line
ends, multi-line data) is httpx-sse's, a small library that follows the WHATWG
specification; this module adds what that library leaves to its caller:

- a leading byte-order mark is dropped (the specification strips it; httpx-sse does not,
  which would hide the first field);
- an event is a record only when its data is not empty: httpx-sse also hands out blocks
  that hold only a ``retry`` or an ``id`` (the emulator opens each answer with
  ``retry:``), and an empty ``data`` is no log line either;
- an event not ended by a blank line is discarded, as the specification says, so a
  stream cut mid-event never yields half a record (the next connection, resuming from
  the last complete event's id, sends it whole);
- a negative ``retry`` hint is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from httpx_sse import EventSource


@dataclass(frozen=True)
class Event:
    """One dispatched event: its type (``message`` by default), data, and id (the cursor)."""

    data: str
    id: str
    event: str = "message"


@dataclass(frozen=True)
class Events:
    """What one answer's stream held: its complete events and the last ``retry`` hint."""

    events: list[Event]
    retry_ms: int | None


def parse(body: bytes | str) -> Events:
    """The events of one whole Server-Sent Events answer."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = text.removeprefix("\ufeff")
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=text.encode("utf-8")
    )
    events: list[Event] = []
    retry: int | None = None
    for sse in EventSource(response).iter_sse():
        if sse.retry is not None and sse.retry >= 0:
            retry = sse.retry
        if sse.data:  # empty: a block of only ``retry``/``id``, or ``data:`` with nothing
            events.append(Event(data=sse.data, id=sse.id, event=sse.event or "message"))
    return Events(events, retry)
