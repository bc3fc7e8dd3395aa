"""``/v2/templates``: parse, call the domain's ``V2Templates`` (``m.v2.templates``),
serialise. A template is the same record ``/v1/templates`` serves."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .common import body, management, no_content, ok

router = APIRouter(prefix="/v2/templates", tags=["v2 templates"])


@router.get("")
async def list_templates(request: Request) -> Response:
    m, _ = management(request, "listTemplates")
    return ok({"templates": m.v2.templates.listing()})


@router.post("")
async def create_template(request: Request) -> Response:
    m, _ = management(request, "createTemplate")
    return ok(m.v2.templates.create(await body(request, "CreateTemplateRequest")), 201)


@router.get("/{template_id}")
async def get_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "getTemplate")
    return ok(m.v2.templates.get(template_id))


@router.patch("/{template_id}")
async def update_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "updateTemplate")
    m.v2.templates.writable(template_id)  # 404 or 403 before the body is read
    data = await body(request, "UpdateTemplateRequest")
    return ok(m.v2.templates.update(template_id, data))


@router.delete("/{template_id}")
async def delete_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteTemplate")
    m.v2.templates.delete(template_id)
    return no_content()
