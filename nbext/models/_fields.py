"""Field types the management models share, each carrying its rule and its message.

The input models are the one place the field rules live (docs/behaviour.md#management):
the emulator validates bodies with them and the client refuses bad input with them, so
each rule says what it wanted and what it got; the caller prefixes the field's wire name.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ._base import WireModel

E = TypeVar("E", bound=enum.StrEnum)

Lenient = Annotated[E | str, Field(union_mode="left_to_right")]
"""A response field with an enum: the member when the value is known, the plain string if
the service sends one this version does not know (a new GPU type must not break a listing)."""

DEFAULT_PORTS: tuple[str, ...] = ("8888/http", "22/tcp")
"""A template's default ``ports`` (docs/behaviour.md#templates)."""

_PORT = re.compile(r"^(\d{1,5})/(http|tcp)$")


def _port(value: str) -> str:
    match = _PORT.match(value)
    if match is None or not 1 <= int(match.group(1)) <= 65535:
        raise ValueError(
            f"each port must be '<port_number>/<protocol>' with a number 1-65535 and "
            f"protocol http or tcp (like '8888/http'), got {value!r}"
        )
    return value


def _absolute(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError(f"must be an absolute path starting with '/', got {value!r}")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _utc(value: datetime) -> datetime:
    """Times without a zone are UTC, the zone the service writes."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


_GO_TIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?) ([+-]\d{4})(?: [A-Z]{3,5})?$"
)


def _lenient_datetime(value: Any) -> Any:
    """Also read Go's default time format (``2024-07-12 19:14:40.144 +0000 UTC``)."""
    if isinstance(value, str) and (match := _GO_TIME.match(value)):
        day, clock, zone = match.groups()
        return f"{day}T{clock}{zone[:3]}:{zone[3:]}"
    return value


Port = Annotated[StrictStr, AfterValidator(_port)]
Ports = list[Port]
AbsolutePath = Annotated[StrictStr, AfterValidator(_absolute)]
NonBlank = Annotated[StrictStr, AfterValidator(_not_blank)]
Name191 = Annotated[StrictStr, Field(max_length=191)]
DiskGb = Annotated[StrictInt, Field(ge=0)]
"""A disk size in GB. The reference sets no bound; a negative size means nothing."""
Number = Annotated[StrictFloat, Field(ge=0)]
Env = dict[str, StrictStr]


def _not_a_number(value: Any) -> Any:
    """Refuse a number where a time is asked for: pydantic reads it as seconds since 1970,
    so ``2026`` meant as a year would quietly be an empty period in January 1970."""
    if isinstance(value, int | float) or (
        isinstance(value, str) and value.strip().lstrip("+-").replace(".", "", 1).isdigit()
    ):
        raise ValueError(
            f"a time is a date or date and time in ISO 8601 (2026-11-01, "
            f"2026-11-01T09:00:00Z), not a number ({value!r})"
        )
    return value


UtcDatetime = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(_utc)]
"""A timestamp given by the caller; without a zone it is taken as UTC."""
WireDatetime = Annotated[datetime, BeforeValidator(_lenient_datetime), AfterValidator(_utc)]
"""A timestamp of a response: ISO 8601 (or Go's format), always timezone-aware (UTC if
the service wrote none)."""


class InputModel(WireModel):
    """A request body: ``null`` is refused for every field the reference does not mark
    nullable, being almost always a mistake for "default" (create) or "unchanged" (update)."""

    nullable_fields: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in cls.nullable_fields:
            raise ValueError("must not be null; leave the field out instead")
        return value


class QueryModel(WireModel):
    """Query parameters of one operation; unknown ones are ignored, as servers ignore them."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    def to_params(self) -> list[tuple[str, str]]:
        """The query string's pairs: arrays as repeated keys, unset parameters left out."""
        pairs: list[tuple[str, str]] = []
        for key, value in self.model_dump(by_alias=True, exclude_unset=True).items():
            if value is None:
                continue
            for item in value if isinstance(value, list) else [value]:
                pairs.append((key, _param(item)))
        return pairs


def _param(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def check_min_max(low: int | None, high: int | None, low_name: str, high_name: str) -> None:
    """Both bounds given and crossed: say which is which."""
    if low is not None and high is not None and low > high:
        raise ValueError(f"{low_name} ({low}) must not exceed {high_name} ({high})")


def explain(exc: ValidationError, name: Callable[[str], str] = str) -> str:
    """One line naming each bad field (by its wire name, or ``name`` of it) and the rule
    it broke; a rule over two fields names them itself."""
    parts = []
    for err in exc.errors(include_url=False):
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "is required"
        elif err["type"] == "enum":  # the value of a choice is never a secret: echo it
            message += f", got {err['input']!r}"
        loc = ".".join(name(str(p)) if i == 0 else str(p) for i, p in enumerate(err["loc"]))
        parts.append(f"{loc}: {message}" if loc else message)
    return "; ".join(parts)
