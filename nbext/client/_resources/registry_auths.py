"""``client.registry_auths``: credentials the service uses to pull private images
(REST v2's registries).

The password goes to the service and never comes back: a record has only ``id`` and
``name``. In the client the password lives in a ``SecretStr``, so no repr, log line or
error message shows it; it is revealed only in the body sent.
"""

from __future__ import annotations

from pydantic import SecretStr

from nbext.models.v2 import Registry

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .rest import V2
from .wire import ident, one, refused, wrapped

PATH = "registries"


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
    call = api.call("POST", [PATH], op, "a new container registry auth", body=data)
    return (yield from api.fetch(ctx, call, one(Registry)))


def list_auths(ctx: Context, api: V2) -> Flow[list[Registry]]:
    """The account's registry auths (ids and names, never credentials)."""
    call = api.call("GET", [PATH], "registry_auths.list", "container registry auths")
    return (yield from api.fetch(ctx, call, wrapped(Registry, "registries")))


def get(ctx: Context, api: V2, auth_id: str) -> Flow[Registry]:
    """One registry auth by id (NotFound if there is none)."""
    aid, subject = ident(auth_id, "container registry auth")
    call = api.call("GET", [PATH, aid], "registry_auths.get", subject)
    return (yield from api.fetch(ctx, call, one(Registry)))


def delete(ctx: Context, api: V2, auth_id: str) -> Flow[None]:
    """Delete a registry auth."""
    aid, subject = ident(auth_id, "container registry auth")
    yield from api.delete(ctx, api.call("DELETE", [PATH, aid], "registry_auths.delete", subject))


class RegistryAuths(Resource):
    """``client.registry_auths``: create, list, get, delete container registry auths."""

    create = blocking(create)
    list = blocking(list_auths)
    get = blocking(get)
    delete = blocking(delete)


class AsyncRegistryAuths(Resource):
    """``client.registry_auths`` of an ``AsyncClient``: ``RegistryAuths``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_auths)
    get = awaiting(get)
    delete = awaiting(delete)
