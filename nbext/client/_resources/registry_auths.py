"""``client.registry_auths``: credentials the service uses to pull private images.

The password goes to the service and never comes back: a record has only ``id`` and
``name``. In the client the password lives in a ``SecretStr``, so no repr, log line or
error message shows it; it is revealed only in the body sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from nbext.models import ContainerRegistryAuth, ContainerRegistryAuthCreateInput

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from . import rest_v2
from .rest import V1, V2
from .wire import Reader, given, ident, json_body, management_call, many, one


class RegistryAuthsV2(V2):
    """Registry auths over REST v2: at ``registries``, read as v1's records."""

    def __init__(self) -> None:
        self.path = "registries"
        self.one: Reader[ContainerRegistryAuth] = rest_v2.REGISTRY
        self.many: Reader[list[ContainerRegistryAuth]] = rest_v2.REGISTRIES


class RegistryAuthsV1(V1, RegistryAuthsV2):
    """Registry auths over REST v1: at ``containerregistryauth``."""

    def __init__(self) -> None:
        self.path = "containerregistryauth"
        self.one = one(ContainerRegistryAuth)
        self.many = many(ContainerRegistryAuth)


def create(
    ctx: Context,
    api: RegistryAuthsV2,
    *,
    name: str,
    username: str,
    password: str | SecretStr,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[ContainerRegistryAuth]:
    """Store registry credentials under a unique ``name``; templates refer to its id."""
    body = json_body(
        ContainerRegistryAuthCreateInput, "registry_auths.create", given(locals()), extra_body
    )
    subject = "a new container registry auth"
    call = management_call("POST", [api.path], "registry_auths.create", subject, body=body)
    return (yield from api.fetch(ctx, call, api.one))


def list_auths(ctx: Context, api: RegistryAuthsV2) -> Flow[list[ContainerRegistryAuth]]:
    """The account's registry auths (ids and names, never credentials)."""
    call = management_call("GET", [api.path], "registry_auths.list", "container registry auths")
    return (yield from api.fetch(ctx, call, api.many))


def get(ctx: Context, api: RegistryAuthsV2, auth_id: str) -> Flow[ContainerRegistryAuth]:
    """One registry auth by id (NotFound if there is none)."""
    aid = ident(auth_id, "container registry auth id")
    subject = f"container registry auth {auth_id!r}"
    call = management_call("GET", [api.path, aid], "registry_auths.get", subject)
    return (yield from api.fetch(ctx, call, api.one))


def delete(ctx: Context, api: RegistryAuthsV2, auth_id: str) -> Flow[None]:
    """Delete a registry auth."""
    aid = ident(auth_id, "container registry auth id")
    subject = f"container registry auth {auth_id!r}"
    call = management_call("DELETE", [api.path, aid], "registry_auths.delete", subject)
    yield from api.delete(ctx, call)


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
