"""The base every wire model shares.

The service speaks camelCase JSON; Python code reads snake_case attributes. Each model
declares the wire name as an alias, accepts either name on input, and keeps fields it does
not know (``extra="allow"``) so that a newer service never breaks an older client. A
model builds its validator on first use (``defer_build``): a first job builds the few it reads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A JSON object of the service's interface: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=False, defer_build=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object as the service writes it: wire names, unset fields left out."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")
