"""``client.registry_auths`` and ``client.registry_delegations``: how the service pulls
private images, by stored credentials or by delegated access to an Amazon ECR repository.

A registry auth's password never comes back (a record is ``id`` and ``name``); in the
client it is a ``SecretStr``, so no repr, log or error shows it, revealed only in the
body sent. For a delegation the service derives the region, account and registry address
from the repository's ARN and names the AWS user to grant pull access to (``aws_user``).
"""

from __future__ import annotations

import re

from pydantic import SecretStr

from nbext.models.v2 import EcrDelegation, Registry
from nbext.models.v2.resources import REGISTRY_AUTHS, REGISTRY_DELEGATIONS

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import deleting, getting, listing, saved
from .rest import V2
from .wire import given, refused

ECR_ARN = re.compile(r"arn:aws[a-z-]*:ecr:[a-z0-9-]+:\d{12}:repository/\S+")
"""An ECR repository ARN (any AWS partition), optionally with ``:TAG``."""


def create_auth(
    ctx: Context, api: V2, *, name: str, username: str, password: str | SecretStr
) -> Flow[Registry]:
    """Store registry credentials under a unique ``name``; templates refer to its id
    (their ``registry``)."""
    op = "registry_auths.create"
    secret = password.get_secret_value() if isinstance(password, SecretStr) else password
    for field, value in (("name", name), ("username", username), ("password", secret)):
        if not isinstance(value, str) or not value:
            shown = "" if field == "password" else f", got {value!r}"
            raise refused(op, f"{field} must be a non-empty string{shown}")
    data = {"name": name, "username": username, "password": secret}
    return (yield from saved(ctx, api, REGISTRY_AUTHS, data))


def create_delegation(
    ctx: Context, api: V2, resource: str, *, name: str | None = None
) -> Flow[EcrDelegation]:
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
    return (yield from saved(ctx, api, REGISTRY_DELEGATIONS, fields))


list_auths = listing(REGISTRY_AUTHS, "Ids and names, never the credentials.")
delete_delegation = deleting(
    REGISTRY_DELEGATIONS, "The service can no longer pull from its repository."
)


class RegistryAuths(Resource):
    create = blocking(create_auth)
    list = blocking(list_auths)
    get = blocking(getting(REGISTRY_AUTHS))
    delete = blocking(deleting(REGISTRY_AUTHS))


class AsyncRegistryAuths(Resource):
    create = awaiting(create_auth)
    list = awaiting(list_auths)
    get = awaiting(getting(REGISTRY_AUTHS))
    delete = awaiting(deleting(REGISTRY_AUTHS))


class RegistryDelegations(Resource):
    list = blocking(listing(REGISTRY_DELEGATIONS))
    create = blocking(create_delegation)
    delete = blocking(delete_delegation)


class AsyncRegistryDelegations(Resource):
    list = awaiting(listing(REGISTRY_DELEGATIONS))
    create = awaiting(create_delegation)
    delete = awaiting(delete_delegation)
