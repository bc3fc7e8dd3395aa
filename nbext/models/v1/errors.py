"""The management interface's error body: ``{"message": "..."}``."""

from __future__ import annotations

from .._base import WireModel


class ErrorMessage(WireModel):
    """What ``/v1`` answers on 400, 401 and 404 (the reference's ``UnauthorizedError``)."""

    message: str | None = None
