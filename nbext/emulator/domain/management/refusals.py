"""REST v2's two refusals beyond the emulator's others, 422 and 403, kept in the domain
with v2's rules; under ``/v1`` an ``Unprocessable`` is the 400 it derives from."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from nbext.models import explain

from ..errors import DomainError, InvalidInput

M = TypeVar("M", bound=BaseModel)


class Unprocessable(InvalidInput):
    """Well-formed JSON that breaks a rule (HTTP 422 under ``/v2``); ``errors``: each failure,
    one line each, by field path."""

    def __init__(self, message: str, errors: list[str]) -> None:
        super().__init__(message)
        self.errors = errors


class Forbidden(DomainError):
    """The key is valid but may not do this (HTTP 403): e.g. change an official template."""


def refuse(field: str, message: str) -> Unprocessable:
    """A 422 about one field."""
    line = f"{field}: {message}"
    return Unprocessable(line, [line])


def validated(model: type[M], data: object, names: dict[str, str]) -> M:
    """``data`` validated by ``model``; a refusal names the fields by ``names`` (wire name
    -> the caller's field path), so a v2 caller reads v2's names."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = []
        for part in explain(exc).split("; "):
            loc, sep, rest = part.partition(": ")
            head, dot, tail = loc.partition(".")
            mapped = names.get(head, head) + (dot + tail if dot else "")
            lines.append(f"{mapped}{sep}{rest}")
        raise Unprocessable("; ".join(lines), lines) from None


def checked(model: type[M], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as ``model`` reads it (the values it was given, by v2's names), or a 422
    naming each field that breaks a rule: how a v2 body is checked by its own model."""
    return validated(model, data, {}).model_dump(by_alias=True, exclude_unset=True, mode="json")
