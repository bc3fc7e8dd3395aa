"""Management calls' bodies and queries, and the reading of answers; pure, no I/O.

Keywords are REST v2's fields in Python's spelling (``start_ssh`` is ``startSsh``); nested
values are read through the v2 models, so a mapping may use either spelling. The service
checks values (a 422 is ``BadRequest``); what the client can tell without it (an id, a
nested value's shape, a body that is not JSON) is refused here before anything is sent.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from nbext.models import explain

from .._calls import Answer, Call, call_error, segment
from .._errors import APIError, BadRequest, excerpt

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

Reader = Callable[[Call, Answer], T]
"""How an operation reads a successful answer."""


class QueryParams(Protocol):
    """A query model of ``nbext.models``: it writes its own pairs (lists as repeated keys)."""

    def to_params(self) -> list[tuple[str, str]]: ...


NOT_FIELDS = frozenset({"ctx", "api", "extra_body"})
"""Parameters of an operation that are not fields of its body or query."""


def ident(value: str, what: str) -> tuple[str, str]:
    """An id of a ``what`` as one path segment, and the subject its messages name
    (``pod 'abc'``); an empty or non-string id is refused before sending."""
    return segment(value, f"{what} id"), f"{what} {value!r}"


# ---- bodies and queries ---------------------------------------------------------------------


class NotGiven:
    """The type of ``NOT_GIVEN``, an update's default: leave the field out (as in
    openai-python). ``None`` given to an update is a value: JSON null, which clears a
    field the service lets be null (an endpoint's ``registry``)."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()


def given(
    arguments: Mapping[str, Any], *, skip: Sequence[str] = (), update: bool = False
) -> dict[str, Any]:
    """The keyword arguments the caller gave: NOT_GIVEN and a create's ``None`` (its
    default) are left out; ``None`` given to an ``update`` is sent as null."""
    return {
        name: value
        for name, value in arguments.items()
        if not isinstance(value, NotGiven)
        and (update or value is not None)
        and name not in {*NOT_FIELDS, *skip}
    }


def refused(operation: str, detail: str) -> BadRequest:
    return BadRequest(
        f"{operation} refused locally, nothing was sent: {detail}",
        status=400,
        sent=False,
        reason=detail,
    )


def whole(operation: str, name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise refused(operation, f"{name} must be a whole number >= {low}, got {value!r}")
    if high is not None and value > high:
        raise refused(operation, f"{name} must be at most {high}, got {value!r}")
    return value


def choice(operation: str, name: str, value: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.upper() not in allowed:
        raise refused(operation, f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value.upper()


RENAMED = {"execution_timeout_ms": "timeout"}
"""Keywords named apart from their v2 field: ``timeout`` is the client's HTTP seconds."""


def camel(name: str) -> str:
    """A keyword's wire name: ``data_center_ids`` -> ``dataCenterIds``."""
    return RENAMED.get(name) or re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def nested(operation: str, keyword: str, model: type[BaseModel], value: Any) -> Any:
    """A nested value (a v2 model, or a mapping in Python or wire names; a list of them
    where v2 takes a list) as its JSON; one of the wrong shape is refused by name."""
    if isinstance(value, list | tuple):
        return [nested(operation, f"{keyword}.{i}", model, v) for i, v in enumerate(value)]
    try:
        made = model.model_validate(value)
    except ValidationError as exc:
        raise refused(operation, f"{keyword}: {explain(exc)}") from None
    return made.model_dump(by_alias=True, exclude_unset=True, mode="json")


def body(
    operation: str,
    fields: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    models: Mapping[str, type[BaseModel]] | None = None,
) -> dict[str, Any]:
    """REST v2's body: ``fields`` under wire names (``models``: the nested ones), then
    ``extra`` (``extra_body``: fields newer than this client, sent as given)."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        model = (models or {}).get(name)
        out[camel(name)] = (
            value if model is None or value is None else nested(operation, name, model, value)
        )
    clash = sorted(set(out) & set(extra or ()))
    if clash:
        raise refused(operation, f"extra_body repeats {', '.join(clash)}: give each once")
    return {**out, **(extra or {})}


def _json_shape(value: object) -> dict[Any, Any] | list[Any]:
    """A keyword typed ``Mapping`` or ``Sequence`` takes any of them (a
    ``MappingProxyType``, a ``deque``), not only the dict and list ``json`` knows."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encoded(operation: str, wire: Mapping[str, Any]) -> bytes:
    """``wire`` as compact JSON; strict, so a NaN in ``extra_body`` is refused, not sent as
    null."""
    try:
        text = json.dumps(
            wire, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_shape
        )
    except (TypeError, ValueError) as exc:
        raise refused(operation, f"the body is not JSON: {exc}") from None
    return text.encode()


def _label(model: type[BaseModel], name: str) -> str:
    """``python (wire)`` for a field of ``model`` named either way, for messages."""
    for field, info in model.model_fields.items():
        if name in (field, info.alias):
            return f"{field} ({info.alias})" if info.alias and info.alias != field else field
    return name


def query(model: type[BaseModel], operation: str, fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The query string's pairs, checked by ``model`` (its rules, each field named as the
    keyword and its wire name: ``start_time (startTime): ...``)."""
    try:
        instance = model.model_validate(fields)
    except ValidationError as exc:
        raise refused(operation, explain(exc, functools.partial(_label, model))) from None
    return cast(QueryParams, instance).to_params()


# ---- answers ----------------------------------------------------------------------------


def _unreadable(call: Call, response: Answer, what: str) -> APIError:
    text = f"{call.describe()} ({call.subject}) answered {response.status_code} with {what}"
    return call_error(call, text, response.status_code, body=excerpt(response.text, 200))


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


def _shaped(call: Call, response: Answer, validate: Callable[[Any], T], data: Any, what: str) -> T:
    try:
        return validate(data)
    except ValidationError as exc:
        problem = f"an unexpected shape for {what}: {explain(exc)[:200]}"
        raise _unreadable(call, response, problem) from None


def one(model: type[M]) -> Reader[M]:
    """Read the answer as one ``model`` (unknown fields kept)."""

    def read(call: Call, response: Answer) -> M:
        data = _json(call, response)
        return _shaped(call, response, model.model_validate, data, model.__name__)

    return read


def wrapped(model: type[M], key: str) -> Reader[list[M]]:
    """Read a list answer, ``{key: [...]}``."""

    def read(call: Call, response: Answer) -> list[M]:
        data = _json(call, response)
        if not isinstance(data, dict) or not isinstance(data.get(key), list):
            raise _unreadable(call, response, f"no {key!r} list: {excerpt(response.text, 120)}")
        validate = _adapter(model).validate_python
        return _shaped(call, response, validate, data[key], f"a list of {model.__name__}")

    return read


def maybe(model: type[M]) -> Reader[M | None]:
    """The record when the answer carries one; ``None`` for an empty answer (a pod's
    ``terminate`` answers 204; a service that sends a record anyway keeps it)."""
    read_one = one(model)

    def read(call: Call, response: Answer) -> M | None:
        if not response.content.strip():
            return None
        return read_one(call, response) if isinstance(_json(call, response), dict) else None

    return read
