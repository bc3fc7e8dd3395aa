"""The emulator's HTTP layer: FastAPI routers that only translate HTTP <-> domain."""

from .app import create_app

__all__ = ["create_app"]
