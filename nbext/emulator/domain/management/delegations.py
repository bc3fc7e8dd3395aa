"""ECR delegations: letting the service pull from a private Amazon ECR repository
(``arn:aws:ecr:REGION:ACCOUNT:repository/NAME[:TAG]``); no AWS call is made."""

from __future__ import annotations

import re
from typing import Any

from nbext.models.v2.resources import REGISTRY_DELEGATIONS

from ..clock import Clock
from ..errors import InvalidInput
from ..store_port import Store
from .catalog import USER_ID
from .records import Book, Served, iso, new_id

ARN = re.compile(
    r"^arn:aws:ecr:(?P<region>[a-z]{2}(-[a-z]+)+-\d):(?P<account>\d{12}):"
    r"repository/(?P<repository>[a-z0-9][a-z0-9._/-]*?)(:(?P<tag>[A-Za-z0-9_.-]{1,128}))?$"
)


class Delegations(Served[dict[str, Any]]):
    ROW = REGISTRY_DELEGATIONS

    def __init__(self, store: Store, clock: Clock) -> None:
        self.clock = clock
        self.book: Book[dict[str, Any]] = Book(store, "ecr_delegation", dict, dict)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """A delegation of ``body``'s ``resource`` (an ECR repository's ARN) and ``name``."""
        resource: str = body["resource"]
        match = ARN.match(resource.strip())
        if match is None:
            raise InvalidInput(
                f"resource: {resource!r} is not an ECR repository ARN; expected "
                "arn:aws:ecr:REGION:ACCOUNT_ID:repository/NAME (optionally :TAG)"
            )
        region, account = match["region"], match["account"]
        delegation_id = "deleg_" + new_id(12)
        record = {
            "id": delegation_id,
            "name": body.get("name"),
            "delegatorUserId": USER_ID,
            "awsUser": account,
            "repository": match["repository"],
            "tag": match["tag"] or "latest",
            "awsRegion": region,
            "dockerRegistryUri": f"{account}.dkr.ecr.{region}.amazonaws.com",
            "createdAt": iso(self.clock.now()),
        }
        self.book.save(delegation_id, record)
        return record
