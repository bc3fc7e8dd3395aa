"""``create_app``: the ASGI application serving one ``Emulator``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from ..emulator import Emulator
from . import control, jobs, openai, v1, v2, worker_routes
from .http import install_error_handlers


class EmulatorApp(FastAPI):
    """FastAPI, except that the job interface's hot routes are answered before its stack.

    ``jobs.JobRoutes`` explains why; any other path goes through FastAPI as usual.
    """

    job_routes: jobs.JobRoutes
    worker_routes: worker_routes.WorkerRoutes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            match = self.job_routes.match(path)
            if match is not None:
                await self.job_routes.serve(match, scope, receive, send)
                return
            worker_match = self.worker_routes.match(path)
            if worker_match is not None:
                await self.worker_routes.serve(worker_match, scope, receive, send)
                return
            if path.endswith("/") and self.job_routes.match(path[:-1]) is not None:
                await jobs.redirect(scope, send, path[:-1])  # as FastAPI's routes did
                return
        await super().__call__(scope, receive, send)

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = jobs.openapi(super().openapi())
        return self.openapi_schema


def create_app(emulator: Emulator) -> FastAPI:
    """The emulator's HTTP interface: ``/v2`` jobs, ``/v1`` and ``/v2`` management,
    ``/_emulator`` controls."""
    app = EmulatorApp(
        title="nbext emulator",
        summary="A local emulator of a GPU cloud's serverless job and management interfaces",
        docs_url="/_emulator/docs",
        redoc_url=None,
        openapi_url="/_emulator/openapi.json",
    )
    app.state.emulator = emulator
    app.job_routes = jobs.JobRoutes(emulator)
    app.worker_routes = worker_routes.WorkerRoutes(emulator)
    app.include_router(control.router)
    app.include_router(openai.router)
    v1.install(app)
    install_error_handlers(app)
    v2.install(app)  # after: its handlers defer to those for paths not its own
    return app
