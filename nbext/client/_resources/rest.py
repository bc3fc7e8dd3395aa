"""Which management interface a client speaks, chosen once when it is made.

A client whose base URL ends in ``/v2`` (the default) speaks REST v2, the core; one
whose base URL ends in ``/v1`` speaks the retired REST v1, kept as a frozen adapter for
an emulator's ``/v1``. Each resource is handed its area's version object when the
client makes it (``Templates(client, TemplatesV1())``), and its operations ask that
object what differs: how a body is spelt, where it goes, how the answer reads. No
operation asks which version it is on; the two spellings of an area live side by side
in its module, the v1 one a subclass of the v2 one that overrides what v1 does its way.

``V2`` and ``V1`` hold what every area shares: making a call of an operation that
exists only in REST v2 (``V1`` refuses it in one line before anything is sent), an
update's call (v1 has a ``POST .../update`` synonym), and reading answers (``V1``
retells the 410 of the retired interface).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from .._calls import Call
from .._errors import APIError
from .._flows import Context, Flow
from . import shapes
from .wire import Reader, UpdateMethod, management_call, needs_v2, update_call

T = TypeVar("T")


class V2:
    """REST v2 (a base URL ending in ``/v2``): every operation exists."""

    v2_call = staticmethod(management_call)
    """A call only REST v2 has (``parts`` under the ``/v2`` base URL); ``V1`` refuses it."""

    def update_call(
        self, method: UpdateMethod, parts: Sequence[str], operation: str, subject: str, body: bytes
    ) -> Call:
        """An update: REST v2 has ``PATCH`` alone (``method`` is v1's choice of synonym)."""
        return management_call("PATCH", parts, operation, subject, body=body)

    def fetch(self, ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
        """Send ``call`` (with the retries its kind allows) and read the answer."""
        return (yield from shapes.fetch(ctx, call, read))

    def delete(self, ctx: Context, call: Call) -> Flow[None]:
        """DELETE ``call``'s record (a 404 after a retry is success: ``shapes.delete``)."""
        yield from shapes.delete(ctx, call)


class V1(V2):
    """REST v1 (a base URL ending in ``/v1``): v2's own operations do not exist there.

    An operation of REST v2 is refused before sending, saying what to change, rather
    than sent to a v1 service that would answer 404; and an answer saying the v1
    interface itself is gone is retold so (``shapes.retirement``).
    """

    def v2_call(
        self, method: str, parts: Sequence[str], operation: str, *_: Any, **__: Any
    ) -> Call:
        raise needs_v2(operation)

    def update_call(
        self, method: UpdateMethod, parts: Sequence[str], operation: str, subject: str, body: bytes
    ) -> Call:
        return update_call(method, parts, operation, subject, body)

    def fetch(self, ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
        try:
            return (yield from shapes.fetch(ctx, call, read))
        except APIError as error:
            if (told := shapes.retirement(call, error)) is None:
                raise
        raise told

    def delete(self, ctx: Context, call: Call) -> Flow[None]:
        try:
            return (yield from shapes.delete(ctx, call))
        except APIError as error:
            if (told := shapes.retirement(call, error)) is None:
                raise
        raise told
