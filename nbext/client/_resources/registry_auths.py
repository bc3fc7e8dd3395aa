"""``client.registry_auths``: credentials the service uses to pull private images.

The password never comes back (a record is ``id`` and ``name``); in the client it is a
``SecretStr``, so no repr, log or error shows it, revealed only in the body sent.
"""

from __future__ import annotations

from pydantic import SecretStr

from nbext.models.v2 import Registry
from nbext.models.v2.resources import REGISTRY_AUTHS as ROW

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import deleting, getting, listing, saved
from .rest import V2
from .wire import refused


def create(
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
    return (yield from saved(ctx, api, ROW, data))


list_all = listing(ROW, "Ids and names, never the credentials.")


class RegistryAuths(Resource):
    create = blocking(create)
    list = blocking(list_all)
    get = blocking(getting(ROW))
    delete = blocking(deleting(ROW))


class AsyncRegistryAuths(Resource):
    create = awaiting(create)
    list = awaiting(list_all)
    get = awaiting(getting(ROW))
    delete = awaiting(deleting(ROW))
