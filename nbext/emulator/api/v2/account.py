"""``/v2/account/ssh-keys``: the public keys pods started with ``startSsh`` receive."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .common import Managed, body, ok

router = APIRouter(prefix="/v2/account", tags=["v2 account"])


@router.get("/ssh-keys")
async def get_ssh_keys(m: Managed) -> Response:
    return ok({"keys": m.ssh_keys.listing()})


@router.put("/ssh-keys")
async def put_ssh_keys(request: Request, m: Managed) -> Response:
    data = await body(request)
    return ok({"keys": m.ssh_keys.replace(data["keys"])})
