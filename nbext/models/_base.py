"""The base every wire model shares.

Input may use the camelCase wire name or the snake_case one; unknown fields are kept
(``extra="allow"``) so a newer service never breaks an older client; a model builds its
validator on first use (``defer_build``), so a first job builds only the few it reads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A JSON object of the service's interface: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=False,
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON object as the service writes it: wire names, unset fields left out."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


class Named(WireModel):
    """What a v1 resource is known by, first of its fields; the reference requires neither."""

    id: str | None = None
    name: str | None = None
