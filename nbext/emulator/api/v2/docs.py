"""``/v2/openapi.json``: the reference this interface follows, as shipped with the package."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from .contract import reference_bytes

router = APIRouter(prefix="/v2", tags=["v2 docs"])


@router.get("/openapi.json")
async def get_openapi() -> Response:
    return Response(reference_bytes(), media_type="application/json")
