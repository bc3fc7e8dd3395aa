"""``/v1/templates``: create, list (with include flags), get, update (two ways), delete."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import TemplateCreateInput, TemplateIncludes, TemplateUpdateInput

from ...domain.management.records import wire
from .common import body, management, no_content, ok, query

router = APIRouter(prefix="/v1/templates", tags=["templates"])


@router.post("")
async def create_template(request: Request) -> Response:
    m = management(request)
    return ok(wire(m.templates.create(await body(request, TemplateCreateInput))))


@router.get("")
async def list_templates(request: Request) -> Response:
    m = management(request)
    return ok([wire(t) for t in m.templates.listing(query(request, TemplateIncludes))])


@router.get("/{template_id}")
async def get_template(template_id: str, request: Request) -> Response:
    m = management(request)
    query(request, TemplateIncludes)  # validated; an id finds the template whatever they say
    return ok(wire(m.templates.get(template_id)))


@router.patch("/{template_id}")
@router.post("/{template_id}/update")
async def update_template(template_id: str, request: Request) -> Response:
    m = management(request)
    m.templates.get(template_id)
    return ok(wire(m.templates.update(template_id, await body(request, TemplateUpdateInput))))


@router.delete("/{template_id}")
async def delete_template(template_id: str, request: Request) -> Response:
    management(request).templates.delete(template_id)
    return no_content()
