"""What the client's REST v2 resources share: the version check, the call, wrapped lists.

v2 answers a listing as an object naming its records (``{"gpus": [...]}``), where v1
answered a bare array. Resources that exist only in v2 (the catalog, logs, workers,
SSH keys, clusters, delegations) refuse at once on a client whose ``base_url`` speaks
v1, before anything is sent: v1 has no path to send them to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from nbext.models import explain

from .._calls import Answer, Call
from .._errors import UnsupportedOperation
from .._flows import Context
from .._retry import Kind
from .wire import Reader, _adapter, _json, _unreadable, v1_call

M = TypeVar("M", bound=BaseModel)

V2_EXAMPLE = "https://api.runpod.io/v2"
"""The service's REST v2 root, named in the message that says how to switch."""


def require_v2(ctx: Context, operation: str) -> None:
    """Refuse ``operation`` unless the client speaks REST v2 (one line, nothing sent)."""
    if ctx.management_api != "v2":
        raise UnsupportedOperation(
            f"client.{operation} needs the management interface REST v2, but this client's "
            f"base_url speaks {ctx.management_api}; nothing was sent. Use a base_url ending "
            f"in /v2 (base_url= or RUNPOD_REST_BASE_URL, e.g. {V2_EXAMPLE})"
        )


def v2_call(
    ctx: Context,
    method: str,
    parts: Sequence[str],
    operation: str,
    subject: str,
    *,
    query: Sequence[tuple[str, str]] = (),
    body: bytes | None = None,
    kind: Kind | None = None,
    headers: Mapping[str, str] | None = None,
) -> Call:
    """One call of REST v2's management paths (relative to a ``base_url`` ending in /v2)."""
    require_v2(ctx, operation)
    call = v1_call(method, parts, operation, subject, query=query, body=body, kind=kind)
    return dataclasses.replace(call, headers=dict(headers)) if headers else call


def wrapped(model: type[M], key: str) -> Reader[list[M]]:
    """Read a v2 listing: the records under ``key`` of the answer's object."""

    def read(call: Call, response: Answer) -> list[M]:
        data = _json(call, response)
        if not isinstance(data, dict) or not isinstance(data.get(key), list):
            raise _unreadable(call, response, f"no list under {key!r}")
        try:
            items: list[M] = _adapter(model).validate_python(data[key])
        except ValidationError as exc:
            raise _unreadable(
                call,
                response,
                f"an unexpected shape for a list of {model.__name__}: {explain(exc)[:200]}",
            ) from None
        return items

    return read
