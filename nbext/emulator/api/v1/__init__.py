"""``/v1``: the management interface, a frozen adapter over v2-shaped records, one
router per area of the reference (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

from fastapi import FastAPI

from ...domain.management.facade import Management
from . import billing, docs, endpoints, network_volumes, pods, registry_auths, templates


def install(app: FastAPI, m: Management) -> None:
    """Serve ``/v1`` on ``app``, each area included straight into it: FastAPI analyses a
    route again at every level of inclusion, which would make the start pay twice."""
    for area in (docs, pods, endpoints, templates, network_volumes, registry_auths, billing):
        app.include_router(area.router)
    notes = pods.StatusNotes(m)
    if notes not in m.pods.moved:  # once, however many apps serve ``m``
        m.pods.moved.append(notes)


__all__ = ["install"]
