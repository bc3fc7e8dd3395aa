"""Management calls (``/v1`` and ``/v2``) as data, their bodies and queries, and the
reading of answers.

Pure: no I/O. What a resource method sends is decided here from its keyword arguments,
through the input models of ``nbext.models`` (the one place the rules live, shared with
the emulator), so a body the service would refuse is refused before anything is sent,
with a message naming the keyword, its wire name and the rule.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar, cast
from urllib.parse import urlencode

from pydantic import BaseModel, TypeAdapter, ValidationError

from nbext.models import explain

from .._calls import Answer, Call, segment
from .._config import DEFAULT_BASE_URL, ENV_BASE_URL
from .._errors import APIError, BadRequest, UnsupportedOperation, excerpt
from .._retry import Kind

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
U = TypeVar("U")

Reader = Callable[[Call, Answer], T]
"""How an operation reads a successful answer."""

UpdateMethod = Literal["PATCH", "POST"]
"""``PATCH /x/{id}``, or its synonym ``POST /x/{id}/update`` (for proxies that refuse PATCH)."""


class QueryParams(Protocol):
    """A query model of ``nbext.models``: it writes its own pairs (lists as repeated keys)."""

    def to_params(self) -> list[tuple[str, str]]: ...


NOT_FIELDS = frozenset({"ctx", "api", "extra_body", "method"})
"""Parameters of an operation that are not fields of its body or query."""


def management_call(
    method: str,
    parts: Sequence[str],
    operation: str,
    subject: str,
    *,
    query: Sequence[tuple[str, str]] = (),
    body: bytes | None = None,
    kind: Kind | None = None,
    endpoint_id: str = "",
) -> Call:
    """One call of the management interface, either version, ``parts`` being literal
    path segments under the base URL (which carries the version).

    ``kind`` defaults by method: GET and DELETE are idempotent (sending twice leaves the
    service as sending once), everything else may create or change something twice.
    """
    path = "/".join(parts)
    if query:
        path += "?" + urlencode(list(query))
    if kind is None:
        kind = Kind.IDEMPOTENT if method in ("GET", "DELETE") else Kind.SUBMIT
    return Call(
        method,
        path,
        operation,
        kind,
        endpoint_id,
        body=body,
        management=True,
        subject=subject,
    )


def needs_v2(operation: str) -> UnsupportedOperation:
    """The one-line refusal of an operation REST v1 does not have."""
    return UnsupportedOperation(
        f"{operation} needs the management interface REST v2, and this client's base URL "
        f"speaks v1; point it at a base URL ending in /v2 (base_url=... or {ENV_BASE_URL}; "
        f"the service's is {DEFAULT_BASE_URL})"
    )


def update_call(
    method: UpdateMethod, parts: Sequence[str], operation: str, subject: str, body: bytes
) -> Call:
    """``PATCH parts`` or ``POST parts/update``: one operation, two spellings (the reference).

    Updates are not re-sent once they may have reached the service: most are harmless
    twice, but a pod update that changes its container resets the pod, and a template or
    endpoint update rolls workers over, so a blind second send could do that twice.
    """
    if method == "PATCH":
        return management_call("PATCH", parts, operation, subject, body=body)
    if method == "POST":
        return management_call("POST", [*parts, "update"], operation, subject, body=body)
    raise refused(operation, f"method must be 'PATCH' or 'POST', got {method!r}")


def ident(value: str, what: str) -> str:
    """An id as one path segment; an empty or non-string id is refused before sending."""
    return segment(value, what)


# ---- bodies and queries ---------------------------------------------------------------------


def given(arguments: Mapping[str, Any], *, skip: Sequence[str] = ()) -> dict[str, Any]:
    """The keyword arguments the caller actually gave (``None`` means "leave it out")."""
    return {
        name: value
        for name, value in arguments.items()
        if value is not None and name not in NOT_FIELDS and name not in skip
    }


def refused(operation: str, detail: str) -> BadRequest:
    return BadRequest(
        f"{operation} refused locally, nothing was sent: {detail}",
        status=400,
        sent=False,
        reason=detail,
    )


def _names(model: type[BaseModel]) -> dict[str, str]:
    """Every name a field answers to (Python and wire) -> ``python (wire)`` for messages."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        label = f"{name} ({info.alias})" if info.alias and info.alias != name else name
        names[name] = label
        if info.alias:
            names[info.alias] = label
    return names


def _explain(model: type[BaseModel], exc: ValidationError) -> str:
    """The models' ``explain``, with each field named as the keyword and its wire name.

    The wording is ``explain``'s (the emulator answers 400 with the same rules); only the
    location changes, so ``image_name (imageName): must not be empty`` names both what
    the caller typed and what the service would have called it.
    """
    names = _names(model)
    parts = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        if loc and isinstance(loc[0], str) and loc[0] in names:
            loc[0] = names[loc[0]]
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "is required"
        elif err["type"] == "enum":
            message += f", got {err['input']!r}"
        where = ".".join(str(p) for p in loc)
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _merge_extra(
    model: type[BaseModel],
    operation: str,
    fields: dict[str, Any],
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    if not extra:
        return fields
    names = _names(model)
    known = sorted(key for key in extra if key in names)
    if known:
        raise refused(
            operation,
            "extra_body must hold only fields this version does not know; "
            + ", ".join(f"{key!r} is {names[key]}, give it as a keyword" for key in known),
        )
    return {**fields, **extra}


def validated(
    model: type[M],
    operation: str,
    fields: dict[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> M:
    """``fields`` (Python names) and ``extra`` (wire names) checked by ``model``."""
    data = _merge_extra(model, operation, fields, extra)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise refused(operation, _explain(model, exc)) from None


def json_body(
    model: type[BaseModel],
    operation: str,
    fields: dict[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """The request body: only what the caller gave, under wire names, as compact JSON.

    Defaults are left to the service (docs/behaviour.md lists them; they are the
    service's to apply), so an update changes exactly the fields named.
    """
    return encoded(operation, wire_fields(model, operation, fields, extra))


def wire_fields(
    model: type[BaseModel],
    operation: str,
    fields: dict[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the caller gave, checked by ``model``, under v1's wire names (Python values)."""
    instance = validated(model, operation, fields, extra)
    return instance.model_dump(by_alias=True, exclude_unset=True)


def encoded(operation: str, wire: Mapping[str, Any]) -> bytes:
    """``wire`` as compact JSON; strict, so a NaN in ``extra_body`` is refused, not sent as
    null."""
    try:
        text = json.dumps(wire, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise refused(operation, f"the body is not JSON: {exc}") from None
    return text.encode()


def query(model: type[BaseModel], operation: str, fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The query string's pairs; include flags left ``False`` are not sent (the default)."""
    instance = validated(model, operation, {k: v for k, v in fields.items() if v is not False})
    return cast(QueryParams, instance).to_params()


def as_list(value: str | Sequence[str] | None) -> list[str] | None:
    """A filter that takes several values also takes one (a bare string is one value)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(value)


# ---- answers ----------------------------------------------------------------------------


def _unreadable(call: Call, response: Answer, what: str) -> APIError:
    return APIError(
        f"{call.describe()} ({call.subject}) answered {response.status_code} with {what}",
        status=response.status_code,
        method=call.method,
        path=call.path,
        body=excerpt(response.text, 200),
    )


def _json(call: Call, response: Answer) -> Any:
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError):
        raise _unreadable(
            call, response, f"a body that is not JSON: {excerpt(response.text, 120)}"
        ) from None


@functools.cache
def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def one(model: type[M]) -> Reader[M]:
    """Read the answer as one ``model`` (unknown fields kept)."""

    def read(call: Call, response: Answer) -> M:
        data = _json(call, response)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise _unreadable(
                call, response, f"an unexpected shape for {model.__name__}: {explain(exc)[:200]}"
            ) from None

    return read


def many(model: type[M]) -> Reader[list[M]]:
    """Read the answer as a JSON array of ``model``."""

    def read(call: Call, response: Answer) -> list[M]:
        return _items(model, call, response, _json(call, response))

    return read


def _items(model: type[M], call: Call, response: Answer, data: Any) -> list[M]:
    try:
        items: list[M] = _adapter(model).validate_python(data)
    except ValidationError as exc:
        raise _unreadable(
            call,
            response,
            f"an unexpected shape for a list of {model.__name__}: {explain(exc)[:200]}",
        ) from None
    return items


def wrapped(model: type[M], key: str) -> Reader[list[M]]:
    """Read a REST v2 list answer, ``{key: [...]}`` (``nbext.models.v2.LIST_KEYS``)."""

    def read(call: Call, response: Answer) -> list[M]:
        data = _json(call, response)
        if not isinstance(data, dict) or not isinstance(data.get(key), list):
            raise _unreadable(call, response, f"no {key!r} list: {excerpt(response.text, 120)}")
        return _items(model, call, response, data[key])

    return read


def mapped(read: Reader[T], convert: Callable[[T], U]) -> Reader[U]:
    """``read``, then ``convert`` (a v2 record into the v1-shaped model callers get)."""

    def read_mapped(call: Call, response: Answer) -> U:
        return convert(read(call, response))

    return read_mapped


def maybe(model: type[M]) -> Reader[M | None]:
    """The record when the answer carries one; ``None`` for an empty answer.

    The reference declares no body for some answers (pod start, stop, reset, restart);
    a service that sends the record anyway should not have it thrown away.
    """
    read_one = one(model)

    def read(call: Call, response: Answer) -> M | None:
        if not response.content.strip():
            return None
        data = _json(call, response)
        if not isinstance(data, dict):
            return None
        return read_one(call, response)

    return read
