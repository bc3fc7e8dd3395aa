"""``/v2/templates``: parse, call the domain's ``Templates`` (``m.templates``, which keeps
templates in v2's shape), serialise. A template is the same record ``/v1/templates``
serves."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .common import body, management, no_content, ok

router = APIRouter(prefix="/v2/templates", tags=["v2 templates"])


@router.get("")
async def list_templates(request: Request) -> Response:
    m, _ = management(request, "listTemplates")
    return ok({"templates": [t.view() for t in m.templates.own()]})


@router.post("")
async def create_template(request: Request) -> Response:
    m, _ = management(request, "createTemplate")
    return ok(m.templates.create(await body(request, "CreateTemplateRequest")).view(), 201)


@router.get("/{template_id}")
async def get_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "getTemplate")
    return ok(m.templates.get(template_id).view())


@router.patch("/{template_id}")
async def update_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "updateTemplate")
    m.templates.writable(template_id)  # 404 or 403 before the body is read
    data = await body(request, "UpdateTemplateRequest")
    return ok(m.templates.update(template_id, data).view())


@router.delete("/{template_id}")
async def delete_template(template_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteTemplate")
    m.templates.delete(template_id)
    return no_content()
