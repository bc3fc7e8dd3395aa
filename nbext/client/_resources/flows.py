"""The two shapes every management operation takes, as flows (see ``_flows``).

Retries come from the job interface's ``send``: GET and DELETE are retried on
connection trouble, 429 and 5xx; creates and updates only when the service certainly
did not act on them (429, or a connection never made).
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import httpx

from .._calls import Call
from .._errors import NotFound
from .._flows import Context, Flow, Send, send
from .._retry import never_sent
from .calls import Reader

log = logging.getLogger("nbext.client")
T = TypeVar("T")


def fetch(ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
    """Send ``call`` (with the retries its kind allows) and read the answer."""
    response = yield from send(ctx, call)
    return read(call, response)


def delete(ctx: Context, call: Call) -> Flow[None]:
    """DELETE, where a 404 after a retry means an earlier attempt already deleted it.

    A DELETE whose answer was lost (a reset connection, a 5xx from a proxy after the
    service acted) is sent again, being idempotent; the service then says 404 for what
    the first attempt removed. Reporting that as NotFound would call a successful delete
    a failure, so once an attempt may have reached the service a 404 is success. A 404
    with no such attempt before it (a wrong id, or only 429s) is still NotFound.
    """
    inner = send(ctx, call)
    reached = False
    value: Any = None
    error: httpx.TransportError | None = None
    try:
        while True:
            try:
                effect = inner.send(value) if error is None else inner.throw(error)
            except StopIteration:
                return None
            except NotFound:
                if not reached:
                    raise
                log.info("%s: 404 after a retry; an earlier attempt deleted it", call.describe())
                return None
            value, error = None, None
            try:
                value = yield effect
            except httpx.TransportError as exc:
                error = exc
            if isinstance(effect, Send):
                if error is not None:
                    reached = reached or not never_sent(error)
                elif value is not None and value.status_code >= 500:
                    reached = True
    finally:
        inner.close()
