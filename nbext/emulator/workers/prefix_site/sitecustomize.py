"""Run at the start of a load-balancing worker (first on its ``PYTHONPATH``): uvicorn
honours the ``X-Forwarded-Prefix`` the emulator sends when it serves an endpoint under
``/lb/ID/``, as ``--root-path`` would, so an unmodified FastAPI app's ``/docs`` fetches
its ``/openapi.json`` under the prefix. Not a package: nothing imports it.
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
