"""``/v2/templates``: the account's templates (the same records as ``/v1/templates``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import Template, TemplateCreateInput, TemplateUpdateInput

from ...domain.management import Management
from ...domain.management.container import V1_NAMES, persistent, to_v1, to_v2
from ...domain.management.records import atomic
from ...domain.management.refusals import Forbidden, Unprocessable, validated
from .common import body, management, no_content, ok

router = APIRouter(prefix="/v2/templates", tags=["v2 templates"])
V2_ONLY = ("startSsh", "startJupyter", "allowedCudaVersions")
"""Fields v1's template has no place for (kept as facets)."""
DEFAULTS = {"startSsh": True, "startJupyter": True, "allowedCudaVersions": []}
"""What v2 shows for a template made through v1: the console's defaults."""


def view(m: Management, t: Template) -> dict[str, Any]:
    facets = m.v2.facets.get("template", t.id or "")
    out: dict[str, Any] = {"id": t.id, "name": t.name or ""}
    out.update(
        to_v2(
            t.image_name,
            t.docker_start_cmd,
            t.container_disk_in_gb,
            t.env,
            t.ports,
            t.container_registry_auth_id,
        )
    )
    out["mounts"] = persistent(t.volume_in_gb, t.volume_mount_path)
    out["serverless"] = bool(t.is_serverless)
    out["public"] = bool(t.is_public)
    out["category"] = str(t.category or "NVIDIA")
    for name in V2_ONLY:
        out[name] = facets.get(name, DEFAULTS[name])
    return out


def _writable(m: Management, template_id: str) -> Template:
    template = m.templates.get(template_id)
    if template_id in m.templates.official:
        raise Forbidden(
            f"template {template_id!r} is an official template and cannot be changed or "
            "deleted; create your own from it instead"
        )
    return template


@router.get("")
async def list_templates(request: Request) -> Response:
    m, _ = management(request, "listTemplates")
    return ok({"templates": [view(m, e.view) for e in m.templates.book]})


@router.post("")
async def create_template(request: Request) -> Response:
    m, _ = management(request, "createTemplate")
    data = await body(request, "CreateTemplateRequest")
    v1 = {
        "name": data["name"],
        "isPublic": data.get("public", False),
        "isServerless": data.get("serverless", False),
        "category": data.get("category", "NVIDIA"),
        **to_v1(data, defaults=True),
    }
    with atomic():  # the template and its v2 fields, or neither
        made = m.templates.create(validated(TemplateCreateInput, v1, V1_NAMES))
        v2_only = {k: data.get(k, DEFAULTS[k]) for k in V2_ONLY}
        m.v2.facets.set("template", made.id or "", **v2_only)
    return ok(view(m, made), 201)


@router.get("/{template_id}")
async def get_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "getTemplate")
    return ok(view(m, m.templates.get(template_id)))


@router.patch("/{template_id}")
async def update_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "updateTemplate")
    current = _writable(m, template_id)
    data = await body(request, "UpdateTemplateRequest")
    fixed = {"serverless": current.is_serverless, "category": current.category}
    for name, value in fixed.items():
        if name in data and data[name] != (str(value) if name == "category" else bool(value)):
            message = f"{name}: is fixed when the template is created (it is {value!r})"
            raise Unprocessable(message, [message])
    v1 = to_v1(data, defaults=False)
    if "name" in data:
        v1["name"] = data["name"]
    if "public" in data:
        v1["isPublic"] = data["public"]
    with atomic():  # the template and its v2 fields, or neither
        updated = m.templates.update(template_id, validated(TemplateUpdateInput, v1, V1_NAMES))
        given = {k: data[k] for k in V2_ONLY if k in data}
        if given:
            m.v2.facets.set("template", template_id, **given)
    return ok(view(m, updated))


@router.delete("/{template_id}")
async def delete_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteTemplate")
    _writable(m, template_id)
    with atomic():
        m.templates.delete(template_id)
        m.v2.facets.drop("template", template_id)
    return no_content()
