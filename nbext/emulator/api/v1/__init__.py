"""``/v1``: the management interface, one router per area of the reference.

Routers only translate. The domain keeps every record in v2's shape; a router reads v1's
bodies with v1's wire models (so v1 refuses what it always refused, in its words), calls
``Management`` and answers the record's v1 view (``views``); what v1 does its own way, each
router's docstring says. Errors under ``/v1`` are ``{"message": ...}``, including the
framework's own 404 and 405.
"""

from __future__ import annotations

from fastapi import FastAPI

from ...domain.management.facade import Management
from . import billing, docs, endpoints, network_volumes, pods, registry_auths, templates


def install(app: FastAPI, m: Management) -> None:
    """Serve ``/v1`` on ``app`` (its error bodies come from ``http.install_error_handlers``).
    Each area is included straight into the app: FastAPI analyses a route again at every
    level of inclusion, and an aggregate router would make the emulator's start pay twice."""
    for area in (docs, pods, endpoints, templates, network_volumes, registry_auths, billing):
        app.include_router(area.router)
    notes = pods.StatusNotes(m)
    if notes not in m.pods.moved:  # once, however many apps serve ``m``
        m.pods.moved.append(notes)


__all__ = ["install"]
