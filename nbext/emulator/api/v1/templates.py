"""``/v1/templates``: create, list (with include flags), get, update (two ways), delete;
v1's own ways are in docs/architecture.md#management-in-the-emulator."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import TemplateCreateInput, TemplateIncludes, TemplateUpdateInput

from ...domain.errors import InvalidInput
from ...domain.management.facade import Management
from ...domain.management.records import atomic, wire
from ...domain.management.refusals import Forbidden
from ...domain.management.templates import TemplateRecord
from .common import Managed, body, no_content, ok, query
from .notes import forget, keep
from .views import template_view

router = APIRouter(prefix="/v1/templates", tags=["templates"])

V2_FIELDS = {
    "name": "name",
    "image_name": "image",
    "container_disk_in_gb": "disk",
    "env": "env",
    "ports": "ports",
    "is_public": "public",
    "container_registry_auth_id": "registry",
}
"""v1's update fields that are v2's too, by the v2 name the domain takes."""
NOTED = {"docker_entrypoint": "entrypoint", "readme": "readme"}
"""v1's fields v2 has none for, kept by ``/v1`` itself (``notes``)."""
V1_ONLY = {
    "volume_in_gb": "volume_size",
    "volume_mount_path": "volume_path",
    "category": "category",
    "is_serverless": "serverless",
}
"""v1's fields the record keeps outside v2's, by the record's name (``category`` and
``is_serverless`` too, which v1 applied though its update body has neither)."""


def answer(m: Management, t: TemplateRecord) -> dict[str, Any]:
    return wire(template_view(m, t))


@contextlib.contextmanager
def v1_refusal() -> Iterator[None]:
    """v1 refused a change to an official template with 400, where v2 answers 403."""
    try:
        yield
    except Forbidden as exc:
        raise InvalidInput(exc.message) from None


@router.post("")
async def create_template(request: Request, m: Managed) -> Response:
    given = await body(request, TemplateCreateInput)
    data = {
        "name": given.name,
        "image": given.image_name,
        "category": str(given.category),
        "disk": given.container_disk_in_gb,
        "args": shlex.join(given.docker_start_cmd),
        "env": dict(given.env),
        "ports": list(given.ports),
        "public": given.is_public,
        "serverless": given.is_serverless,
        "mounts": {
            "persistent": {"size": given.volume_in_gb, "path": given.volume_mount_path},
        },
    }
    if given.container_registry_auth_id is not None:
        data["registry"] = given.container_registry_auth_id
    with atomic():  # the template and v1's notes of it, or neither
        made = m.templates.create(data)
        keep(m, made.id, entrypoint=list(given.docker_entrypoint), readme=given.readme)
    return ok(answer(m, made))


@router.get("")
async def list_templates(request: Request, m: Managed) -> Response:
    includes = query(request, TemplateIncludes)
    own = m.templates.own(endpoint_bound=includes.include_endpoint_bound_templates)
    # There are no other users in the emulator, so no community templates to add for
    # includePublicTemplates: the account's own public ones are listed anyway.
    official = list(m.templates.official.values()) if includes.include_runpod_templates else []
    return ok([answer(m, t) for t in [*own, *official]])


@router.get("/{template_id}")
async def get_template(template_id: str, request: Request, m: Managed) -> Response:
    query(request, TemplateIncludes)  # validated; an id finds the template whatever they say
    return ok(answer(m, m.templates.get(template_id)))


@router.patch("/{template_id}")
@router.post("/{template_id}/update")
async def update_template(template_id: str, request: Request, m: Managed) -> Response:
    m.templates.get(template_id)
    given = await body(request, TemplateUpdateInput)
    data: dict[str, Any] = {}
    v1_only: dict[str, Any] = {}
    noted: dict[str, Any] = {}
    for name in given.model_fields_set:
        value = getattr(given, name)
        if name == "docker_start_cmd":
            data["args"] = shlex.join(value)
        elif name in V2_FIELDS and value is not None:
            data[V2_FIELDS[name]] = value
        elif name in V1_ONLY and value is not None:
            v1_only[V1_ONLY[name]] = value
        elif name in NOTED and value is not None:
            noted[NOTED[name]] = value
    with v1_refusal(), atomic():
        changed = m.templates.update(template_id, data, **v1_only)
        if noted:
            keep(m, template_id, **noted)
    return ok(answer(m, changed))


@router.delete("/{template_id}")
async def delete_template(template_id: str, m: Managed) -> Response:
    with v1_refusal():
        m.templates.delete(template_id)
    forget(m, template_id)
    return no_content()
