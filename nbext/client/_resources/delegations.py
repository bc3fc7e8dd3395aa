"""``client.registry_delegations``: pull access to a private Amazon ECR repository (REST v2).

The service derives the region, account and registry address from the repository's ARN
and names the AWS user to grant pull access to (``aws_user``).
"""

from __future__ import annotations

import re

from nbext.models.v2 import EcrDelegation
from nbext.models.v2.resources import REGISTRY_DELEGATIONS as ROW

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import deleting, listing, saved
from .rest import V2
from .wire import given, refused

ECR_ARN = re.compile(r"arn:aws[a-z-]*:ecr:[a-z0-9-]+:\d{12}:repository/\S+")
"""An ECR repository ARN (any AWS partition), optionally with ``:TAG``."""


def create(ctx: Context, api: V2, resource: str, *, name: str | None = None) -> Flow[EcrDelegation]:
    """Delegate pull access to the ECR repository ``resource``, an ARN such as
    ``arn:aws:ecr:us-east-2:123456789012:repository/team/app`` (optionally ``:TAG``)."""
    op = "registry_delegations.create"
    if not isinstance(resource, str) or ECR_ARN.fullmatch(resource.strip()) is None:
        raise refused(
            op,
            f"resource must be an ECR repository ARN "
            f"(arn:aws:ecr:REGION:ACCOUNT_ID:repository/NAME[:TAG]), got {resource!r}",
        )
    if name is not None and not isinstance(name, str):
        raise refused(op, f"name must be a string, got {name!r}")
    fields = given({"resource": resource.strip(), "name": name})
    return (yield from saved(ctx, api, ROW, fields))


delete = deleting(ROW, "The service can no longer pull from its repository.")


class RegistryDelegations(Resource):
    list = blocking(listing(ROW))
    create = blocking(create)
    delete = blocking(delete)


class AsyncRegistryDelegations(Resource):
    list = awaiting(listing(ROW))
    create = awaiting(create)
    delete = awaiting(delete)
