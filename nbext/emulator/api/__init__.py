"""The emulator's HTTP layer: routers that only translate HTTP <-> domain, and ``create_app``."""

from __future__ import annotations

from fastapi import FastAPI

from ..emulator import Emulator
from . import batches, control, jobs, kernels, openai, v1, v2, worker_routes
from .balancing import LoadBalancing
from .http import install_error_handlers


def create_app(emulator: Emulator) -> FastAPI:
    """``/v2`` jobs, ``/v1`` and ``/v2`` management, ``/_emulator`` controls; in front of
    them, load-balancing endpoints' URLs (``balancing``)."""
    app = FastAPI(
        title="nbext emulator",
        summary="A local emulator of a GPU cloud's serverless job and management interfaces",
        docs_url="/_emulator/docs",
        redoc_url=None,
        openapi_url="/_emulator/openapi.json",
    )
    app.state.emulator = emulator
    # FastAPI builds an included router's routes when a request first passes it, in this
    # order: what a notebook's first job asks first (the job, then its cost: v2's endpoint
    # and catalog), v1 last, which only a user who asks for it reaches. No two routers'
    # paths overlap, so the order changes no answer.
    app.include_router(jobs.router)
    v2.install(app)
    app.include_router(batches.router)
    app.include_router(worker_routes.router)
    app.include_router(control.router)
    app.include_router(kernels.router)
    app.include_router(openai.router)
    v1.install(app, emulator.management)
    install_error_handlers(app)
    app.add_middleware(LoadBalancing, emulator=emulator)
    return app


__all__ = ["create_app"]
