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
from . import rest_v2, shapes
from .wire import given, ident, json_body, management_call, many, one


def create(
    ctx: Context,
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
    if ctx.management_api == "v2":
        op, subject = "registry_auths.create", "a new container registry auth"
        return (
            yield from rest_v2.send(
                ctx, "POST", ["registries"], op, subject, rest_v2.REGISTRY, payload=body
            )
        )
    call = management_call(
        "POST",
        ["containerregistryauth"],
        "registry_auths.create",
        "a new container registry auth",
        body=body,
    )
    return (yield from shapes.fetch(ctx, call, one(ContainerRegistryAuth)))


def list_auths(ctx: Context) -> Flow[list[ContainerRegistryAuth]]:
    """The account's registry auths (ids and names, never credentials)."""
    if ctx.management_api == "v2":
        op, subject = "registry_auths.list", "container registry auths"
        return (
            yield from rest_v2.send(ctx, "GET", ["registries"], op, subject, rest_v2.REGISTRIES)
        )
    call = management_call(
        "GET", ["containerregistryauth"], "registry_auths.list", "container registry auths"
    )
    return (yield from shapes.fetch(ctx, call, many(ContainerRegistryAuth)))


def get(ctx: Context, auth_id: str) -> Flow[ContainerRegistryAuth]:
    """One registry auth by id (NotFound if there is none)."""
    aid = ident(auth_id, "container registry auth id")
    if ctx.management_api == "v2":
        op, subject = "registry_auths.get", f"container registry auth {auth_id!r}"
        return (
            yield from rest_v2.send(ctx, "GET", ["registries", aid], op, subject, rest_v2.REGISTRY)
        )
    call = management_call(
        "GET",
        ["containerregistryauth", aid],
        "registry_auths.get",
        f"container registry auth {auth_id!r}",
    )
    return (yield from shapes.fetch(ctx, call, one(ContainerRegistryAuth)))


def delete(ctx: Context, auth_id: str) -> Flow[None]:
    """Delete a registry auth."""
    aid = ident(auth_id, "container registry auth id")
    if ctx.management_api == "v2":
        op, subject = "registry_auths.delete", f"container registry auth {auth_id!r}"
        return (yield from rest_v2.delete(ctx, ["registries", aid], op, subject))
    call = management_call(
        "DELETE",
        ["containerregistryauth", aid],
        "registry_auths.delete",
        f"container registry auth {auth_id!r}",
    )
    yield from shapes.delete(ctx, call)


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
