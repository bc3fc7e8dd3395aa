"""REST v2, the management interface every resource speaks: calls made and sent.

Retries come from the job interface's ``send``: GET and DELETE on connection trouble,
429 and 5xx; creates and updates only when the service certainly did not act on them
(429, or a connection never made).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

import httpx

from .._calls import Call
from .._drive import Steps
from .._errors import NotFound
from .._flows import Context, Flow, Send, send
from .._retry import Kind, never_sent
from .wire import Reader, encoded

log = logging.getLogger("nbext.client")
T = TypeVar("T")


class V2:
    def call(
        self,
        method: str,
        parts: Sequence[str],
        operation: str,
        subject: str,
        *,
        body: Mapping[str, Any] | None = None,
        query: Sequence[tuple[str, str]] = (),
    ) -> Call:
        """The call of ``operation``; ``parts`` are literal path segments under ``/v2``.

        Only GET and DELETE are idempotent: anything else is not re-sent once it may have
        reached the service (an update of a pod's container resets it, an endpoint's rolls
        its workers over)."""
        path = "/".join(parts)
        if query:
            path += "?" + urlencode(list(query))
        kind = Kind.IDEMPOTENT if method in ("GET", "DELETE") else Kind.SUBMIT
        data = None if body is None else encoded(operation, body)
        return Call(method, path, operation, kind, "", body=data, management=True, subject=subject)

    def fetch(self, ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
        """Send ``call`` (with the retries its kind allows) and read the answer."""
        response = yield from send(ctx, call)
        return read(call, response)

    def delete(self, ctx: Context, call: Call) -> Flow[None]:
        """DELETE, where a 404 after a retry is success: an earlier attempt deleted it and
        its answer was lost (a reset connection, a proxy's 5xx). A 404 with no attempt that
        may have reached the service before it (a wrong id, only 429s) is still NotFound."""
        steps = Steps(send(ctx, call))
        reached = False
        try:
            while True:
                try:
                    effect = steps.advance()
                except NotFound:
                    if not reached:
                        raise
                    log.info(
                        "%s: 404 after a retry; an earlier attempt deleted it", call.describe()
                    )
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
