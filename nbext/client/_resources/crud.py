"""``list``, ``get`` and ``delete``, alike for every management resource, made from its
row of ``nbext.models.v2.RESOURCES`` as flow builders (``_twins``) named for it; a
create's or an update's keywords and checks stay in the resource's own module, which
sends its body with ``saved``."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from nbext.models._base import WireModel
from nbext.models.v2 import Rest

from .._flows import Context, Flow
from .rest import V2
from .wire import body, ident, one, wrapped

M = TypeVar("M", bound=WireModel)
F = TypeVar("F", bound=Callable[..., Any])


def _named(row: Rest[Any], operation: F, doc: str, returns: str) -> F:
    """``operation`` as ``help()`` and the twins show it: its id named for the resource
    (``network_volume_id``; positional, as the operation takes it), its docstring, its
    return type."""
    params = list(inspect.signature(operation).parameters.values())
    if len(params) > 2:
        params[2] = params[2].replace(name=row.id_name, annotation="str")
    operation.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=f"Flow[{returns}]"
    )
    operation.__doc__ = doc
    return operation


def listing(row: Rest[M], note: str = "") -> Callable[[Context, V2], Flow[list[M]]]:
    """``list()``: every record of ``row`` the account has (``note``: what else to know)."""

    def list_all(ctx: Context, api: V2) -> Flow[list[M]]:
        call = api.call("GET", [row.segment], f"{row.attribute}.list", f"{row.what}s")
        return (yield from api.fetch(ctx, call, wrapped(row.model, row.list_key)))

    model = row.model.__name__
    return _named(row, list_all, f"The account's {row.what}s. {note}".strip(), f"list[{model}]")


def getting(row: Rest[M]) -> Callable[[Context, V2, str], Flow[M]]:
    """``get(id)``: one record of ``row``."""

    def get(ctx: Context, api: V2, record_id: str, /) -> Flow[M]:
        rid, subject = ident(record_id, row.what)
        call = api.call("GET", [row.segment, rid], f"{row.attribute}.get", subject)
        return (yield from api.fetch(ctx, call, one(row.model)))

    doc = f"One {row.what} by id (NotFound if there is none)."
    return _named(row, get, doc, row.model.__name__)


def deleting(row: Rest[Any], note: str = "") -> Callable[[Context, V2, str], Flow[None]]:
    """``delete(id)``: a DELETE where a 404 after a retry is success (``V2.delete``);
    ``note`` says what else it does."""

    def delete(ctx: Context, api: V2, record_id: str, /) -> Flow[None]:
        rid, subject = ident(record_id, row.what)
        call = api.call("DELETE", [row.segment, rid], f"{row.attribute}.delete", subject)
        yield from api.delete(ctx, call)

    doc = f"Delete a {row.what} (NotFound if there is none). {note}".strip()
    return _named(row, delete, doc, "None")


def saved(
    ctx: Context,
    api: V2,
    row: Rest[M],
    fields: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    nested: Mapping[str, type[BaseModel]] | None = None,
    record_id: str | None = None,
) -> Flow[M]:
    """``POST`` a new record of ``row`` made of ``fields`` (``wire.body``), or ``PATCH``
    the record ``record_id`` with them: the record as it is now."""
    if record_id is None:
        method, parts, subject, op = "POST", [row.segment], f"a new {row.what}", "create"
    else:
        rid, subject = ident(record_id, row.what)
        method, parts, op = "PATCH", [row.segment, rid], "update"
    op = f"{row.attribute}.{op}"
    call = api.call(method, parts, op, subject, body=body(op, fields, extra, nested))
    return (yield from api.fetch(ctx, call, one(row.model)))


def below(
    ctx: Context, api: V2, row: Rest[Any], record_id: str, kind: str, model: type[M]
) -> Flow[list[M]]:
    """``GET /{row}/{id}/{kind}``: the records of ``kind`` under one of ``row``'s (an
    endpoint's ``workers``, a cluster's ``pods``); the list answer's key is ``kind``."""
    rid, subject = ident(record_id, row.what)
    call = api.call("GET", [row.segment, rid, kind], f"{row.attribute}.{kind}", subject)
    return (yield from api.fetch(ctx, call, wrapped(model, kind)))
