"""``client.templates``: the container a pod or a serverless worker runs.

Every argument left ``None`` is left out of the request, so the service applies its
defaults (docs/behaviour.md: NVIDIA, 50 GB container disk, 20 GB volume at ``/workspace``,
ports ``8888/http`` and ``22/tcp``, private, pod) and an update changes only what it names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbext.models import (
    Template,
    TemplateCategory,
    TemplateCreateInput,
    TemplateIncludes,
    TemplateUpdateInput,
)

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from . import rest_v2
from .rest import V1, V2
from .wire import (
    Reader,
    UpdateMethod,
    given,
    ident,
    json_body,
    management_call,
    many,
    one,
    query,
)


class TemplatesV2(V2):
    """Templates over REST v2: v1's keywords spelt the v2 way (``rest_v2``)."""

    def __init__(self) -> None:
        self.one: Reader[Template] = rest_v2.TEMPLATE

    def body(
        self,
        model: type[TemplateCreateInput | TemplateUpdateInput],
        op: str,
        fields: dict[str, Any],
        extra: Mapping[str, Any] | None,
    ) -> bytes:
        v1 = rest_v2.checked(model, op, fields, rest_v2.TEMPLATE_FIELDS)
        return rest_v2.body(op, rest_v2.template_body(op, v1), extra)

    def includes(self, params: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """What ``get`` sends of v1's ``include*`` flags: REST v2's record is one shape."""
        return []

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Template]]:
        op = "templates.list"
        if fields.get("include_public_templates"):
            rest_v2.unfiltered(op, [("includePublicTemplates", "true")])
        call = self.v2_call("GET", ["templates"], op, "templates")
        found = yield from self.fetch(ctx, call, rest_v2.TEMPLATES)
        if fields.get("include_runpod_templates"):
            call = self.v2_call("GET", ["catalog", "templates"], op, "official templates")
            found += yield from self.fetch(ctx, call, rest_v2.TEMPLATES)
        return found


class TemplatesV1(V1, TemplatesV2):
    """Templates over REST v1: its own bodies and listing flags."""

    def __init__(self) -> None:
        self.one = one(Template)

    def body(
        self,
        model: type[TemplateCreateInput | TemplateUpdateInput],
        op: str,
        fields: dict[str, Any],
        extra: Mapping[str, Any] | None,
    ) -> bytes:
        return json_body(model, op, fields, extra)

    def includes(self, params: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return params

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Template]]:
        call = management_call("GET", ["templates"], "templates.list", "templates", query=params)
        return (yield from self.fetch(ctx, call, many(Template)))


def create(
    ctx: Context,
    api: TemplatesV2,
    *,
    name: str,
    image_name: str,
    category: TemplateCategory | str | None = None,
    container_disk_in_gb: int | None = None,
    container_registry_auth_id: str | None = None,
    docker_entrypoint: Sequence[str] | None = None,
    docker_start_cmd: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    is_public: bool | None = None,
    is_serverless: bool | None = None,
    ports: Sequence[str] | None = None,
    readme: str | None = None,
    volume_in_gb: int | None = None,
    volume_mount_path: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Template]:
    """Create a template; its ``name`` must be unique (a clash is BadRequest).

    ``is_serverless=True`` makes a template endpoints can run. ``ports`` entries look like
    ``"8888/http"`` or ``"22/tcp"``. ``extra_body`` carries fields (wire names) newer
    than this version. Bad values raise BadRequest before anything is sent.
    """
    body = api.body(TemplateCreateInput, "templates.create", given(locals()), extra_body)
    call = management_call("POST", ["templates"], "templates.create", "a new template", body=body)
    return (yield from api.fetch(ctx, call, api.one))


def list_templates(
    ctx: Context,
    api: TemplatesV2,
    *,
    include_endpoint_bound_templates: bool = False,
    include_public_templates: bool = False,
    include_runpod_templates: bool = False,
) -> Flow[list[Template]]:
    """The account's templates; by default those not bound to an endpoint.

    The flags widen the listing: templates bound to endpoints, other users' public
    templates, the operator's official ones. REST v2 lists the account's templates,
    endpoint-bound ones included whatever the flag; ``include_runpod_templates`` adds
    its catalog's official templates; public ones it cannot list (refused).
    """
    fields = given(locals())
    return (yield from api.listing(ctx, fields, query(TemplateIncludes, "templates.list", fields)))


def get(
    ctx: Context,
    api: TemplatesV2,
    template_id: str,
    *,
    include_endpoint_bound_templates: bool = False,
    include_public_templates: bool = False,
    include_runpod_templates: bool = False,
) -> Flow[Template]:
    """One template by id (NotFound if there is none)."""
    tid = ident(template_id, "template id")
    params = query(TemplateIncludes, "templates.get", given(locals(), skip=["template_id", "tid"]))
    subject = f"template {template_id!r}"
    call = management_call(
        "GET", ["templates", tid], "templates.get", subject, query=api.includes(params)
    )
    return (yield from api.fetch(ctx, call, api.one))


def update(
    ctx: Context,
    api: TemplatesV2,
    template_id: str,
    *,
    name: str | None = None,
    image_name: str | None = None,
    container_disk_in_gb: int | None = None,
    container_registry_auth_id: str | None = None,
    docker_entrypoint: Sequence[str] | None = None,
    docker_start_cmd: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    is_public: bool | None = None,
    ports: Sequence[str] | None = None,
    readme: str | None = None,
    volume_in_gb: int | None = None,
    volume_mount_path: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
    method: UpdateMethod = "PATCH",
) -> Flow[Template]:
    """Change the fields given; endpoints using the template roll over to the change.

    ``category`` and ``is_serverless`` are fixed at creation. ``method="POST"`` sends the
    reference's synonym ``POST /templates/{id}/update`` instead of ``PATCH``. Not re-sent
    after it may have reached the service (a second rollout is not harmless).
    """
    tid = ident(template_id, "template id")
    fields = given(locals(), skip=["template_id", "tid"])
    subject = f"template {template_id!r}"
    body = api.body(TemplateUpdateInput, "templates.update", fields, extra_body)
    call = api.update_call(method, ["templates", tid], "templates.update", subject, body)
    return (yield from api.fetch(ctx, call, api.one))


def delete(ctx: Context, api: TemplatesV2, template_id: str) -> Flow[None]:
    """Delete a template (NotFound if there is none)."""
    tid = ident(template_id, "template id")
    call = management_call(
        "DELETE", ["templates", tid], "templates.delete", f"template {template_id!r}"
    )
    yield from api.delete(ctx, call)


class Templates(Resource):
    """``client.templates``: create, list, get, update, delete."""

    create = blocking(create)
    list = blocking(list_templates)
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)


class AsyncTemplates(Resource):
    """``client.templates`` of an ``AsyncClient``: ``Templates``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_templates)
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
