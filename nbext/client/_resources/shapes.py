"""The two shapes every management operation takes, as flows (see ``_flows``).

Retries come from the job interface's ``send``: GET and DELETE are retried on
connection trouble, 429 and 5xx; creates and updates only when the service certainly
did not act on them (429, or a connection never made).
"""

from __future__ import annotations

import logging
from typing import TypeVar

import httpx

from .._calls import Call
from .._config import DEFAULT_BASE_URL, ENV_BASE_URL
from .._drive import Steps
from .._errors import APIError, NotFound
from .._flows import Context, Flow, Send, send
from .._retry import never_sent
from .wire import Reader

log = logging.getLogger("nbext.client")
T = TypeVar("T")


def fetch(ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
    """Send ``call`` (with the retries its kind allows) and read the answer."""
    response = yield from send(ctx, call)
    return read(call, response)


def retirement(call: Call, error: APIError) -> APIError | None:
    """``error`` retold, when it says the v1 interface itself is gone, not one record.

    410 Gone is what a retired interface answers. A 404 says the same only where no id
    is involved: a listing (``pods``, ``billing/pods``) exists as long as v1 does, so
    its 404 cannot mean a missing record. (An emulator serves v1 for good and never
    answers either.) Asked only of a v1 client's answers (``rest.V1``).
    """
    path = call.path.split("?", 1)[0]
    listing = path.count("/") == 0 or path.startswith("billing/")
    gone = error.status == 410 or (error.status == 404 and listing)
    if not gone:
        return None
    return type(error)(
        f"{error.status} on {call.describe()}: the service's REST v1 management interface "
        "is retired (2026-11-15) and this client's base URL ends in /v1; switch to REST v2, "
        f"the default: unset {ENV_BASE_URL} or pass base_url={DEFAULT_BASE_URL!r}",
        status=error.status,
        method=error.method,
        path=error.path,
        body=error.body,
        request_id=error.request_id,
    )


def delete(ctx: Context, call: Call) -> Flow[None]:
    """DELETE, where a 404 after a retry means an earlier attempt already deleted it.

    A DELETE whose answer was lost (a reset connection, a 5xx from a proxy after the
    service acted) is sent again, being idempotent; the service then says 404 for what
    the first attempt removed. Reporting that as NotFound would call a successful delete
    a failure, so once an attempt may have reached the service a 404 is success. A 404
    with no such attempt before it (a wrong id, or only 429s) is still NotFound.
    """
    steps = Steps(send(ctx, call))
    reached = False
    try:
        while True:
            try:
                effect = steps.advance()
            except NotFound:
                if not reached:
                    raise
                log.info("%s: 404 after a retry; an earlier attempt deleted it", call.describe())
                return None
            if effect is None:
                return None
            try:
                value = yield effect
            except httpx.TransportError as exc:
                steps.fail(exc)
                reached = reached or not never_sent(exc)
                continue
            steps.answer(value)
            if isinstance(effect, Send) and value is not None and value.status_code >= 500:
                reached = True
    finally:
        steps.close()
