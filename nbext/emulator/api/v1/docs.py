"""``/v1/openapi.json`` and ``/v1/docs``: the reference this interface follows, public
as it declares (``security: []``)."""

from __future__ import annotations

import html
import json
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from ..http import reference_bytes

router = APIRouter(prefix="/v1", tags=["docs"])


def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(reference_bytes(__package__))
    return data


@router.get("/openapi.json")
async def get_openapi() -> Response:
    return Response(reference_bytes(__package__), media_type="application/json")


@router.get("/docs")
async def get_docs() -> HTMLResponse:
    """A plain page of every operation: no script, no CDN, readable offline."""
    doc = reference()
    rows = []
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            rows.append(
                f"<tr><td>{html.escape(method.upper())}</td><td><code>/v1{html.escape(path)}"
                f"</code></td><td>{html.escape(op.get('summary', ''))}</td></tr>"
            )
    title = html.escape(doc["info"]["title"])
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title} (emulator)</title>"
        "</head><body>"
        f"<h1>{title} <small>{html.escape(doc['info']['version'])}, emulated</small></h1>"
        "<p>The machine-readable description is at <a href='/v1/openapi.json'>"
        "/v1/openapi.json</a>.</p>"
        f"<table><tr><th>method</th><th>path</th><th>summary</th></tr>{''.join(rows)}</table>"
        "</body></html>"
    )
    return HTMLResponse(page)
