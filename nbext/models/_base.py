"""The base every wire model shares.

The service speaks camelCase JSON; Python code reads snake_case attributes. Each field's
wire name is its name in camelCase (a field whose wire name is spelt otherwise, such as
``minRAMPerGPU``, declares it as its alias); either name is accepted on input, and fields
not known are kept (``extra="allow"``) so that a newer service never breaks an older client.
A model builds its validator on first use (``defer_build``): a first job builds the few it reads.
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
