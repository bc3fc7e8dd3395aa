"""``/v2/templates``: parse, call the domain's ``Templates`` (``m.templates``, which keeps
templates in v2's shape), serialise. A template is the same record ``/v1/templates``
serves."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .common import Managed, body, no_content, ok

router = APIRouter(prefix="/v2/templates", tags=["v2 templates"])


@router.get("")
async def list_templates(m: Managed) -> Response:
    return ok({"templates": [t.view() for t in m.templates.own()]})


@router.post("")
async def create_template(request: Request, m: Managed) -> Response:
    return ok(m.templates.create(await body(request, "CreateTemplateRequest")).view(), 201)


@router.get("/{template_id}")
async def get_template(template_id: str, m: Managed) -> Response:
    return ok(m.templates.get(template_id).view())


@router.patch("/{template_id}")
async def update_template(template_id: str, request: Request, m: Managed) -> Response:
    m.templates.writable(template_id)  # 404 or 403 before the body is read
    data = await body(request, "UpdateTemplateRequest")
    return ok(m.templates.update(template_id, data).view())


@router.delete("/{template_id}")
async def delete_template(template_id: str, m: Managed) -> Response:
    m.templates.delete(template_id)
    return no_content()
