"""Run at the start of a load-balancing worker (its directory is first on the worker's
``PYTHONPATH``): uvicorn honours the ``X-Forwarded-Prefix`` the emulator sends.

The emulator serves a load-balancing endpoint under ``/lb/ID/`` as well as at the root
of ``ID.localhost``, and strips the prefix before forwarding. uvicorn reads no prefix
header, so an unmodified FastAPI app would not know it: its ``/docs`` page would fetch
``/openapi.json`` from the emulator's root. Here uvicorn's proxy-header middleware (on by
default, trusting 127.0.0.1, where the emulator connects from) also sets the request's
``root_path`` from the header, as ``--root-path`` would. Not a package: nothing imports it.
"""

import contextlib
from typing import Any

with contextlib.suppress(ImportError):
    import uvicorn.config
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    class _PrefixHeaders(ProxyHeadersMiddleware):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            headers = dict(scope.get("headers") or ())
            prefix = headers.get(b"x-forwarded-prefix", b"").decode("latin-1").rstrip("/")
            client = (scope.get("client") or ("",))[0]
            if prefix.startswith("/") and client in self.trusted_hosts:
                scope = {
                    **scope,
                    "root_path": prefix,
                    "path": prefix + scope["path"],
                    "raw_path": prefix.encode() + scope.get("raw_path", b""),
                }
            await super().__call__(scope, receive, send)

    uvicorn.config.ProxyHeadersMiddleware = _PrefixHeaders  # type: ignore[attr-defined]
