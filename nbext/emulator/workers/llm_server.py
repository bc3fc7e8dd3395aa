"""``llm-lb``: the load-balancing demo, an OpenAI-compatible server as vLLM's is, that
answers through the queue demo ``llm``'s OpenAI routes (the story:
docs/architecture.md#a-request-to-a-load-balancing-endpoint).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import uvicorn
from starlette.types import Receive, Scope, Send

from nbext.emulator import Emulator, create_app
from nbext.emulator.domain.openai_routes import RouteRefused, route_of

emulator = Emulator(rate_limit=False)
emulator.deploy("llm", endpoint_id="llm")
routes = create_app(emulator)
key = f"Bearer {emulator.api_key}".encode()
loaded = asyncio.Event()
health_path = os.environ.get("HEALTH_CHECK_PATH") or "/ping"


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """``/v1/...`` is the ``llm`` endpoint's OpenAI routes; the health path says whether
    the model has loaded. Paths are read below the prefix it is served under (``/lb/ID``)."""
    own = scope["path"].removeprefix(scope.get("root_path", "")) if "path" in scope else ""
    if scope["type"] == "http" and own == health_path:
        await send({"type": "http.response.start", "status": 200 if loaded.is_set() else 204})
        await send({"type": "http.response.body", "body": b""})
        return
    if scope["type"] == "http":
        try:  # refused here, so the answer names this server's paths, not the queue's
            route_of(own[1:], scope["method"], mount="")
        except RouteRefused as refused:
            kind = [(b"content-type", b"application/json")]
            answer = refused.reply
            await send({"type": "http.response.start", "status": answer.status, "headers": kind})
            await send({"type": "http.response.body", "body": json.dumps(answer.body).encode()})
            return
        path = "/v2/llm/openai" + own
        headers = [(k, v) for k, v in scope["headers"] if k != b"authorization"]
        headers.append((b"authorization", key))
        moved = {"path": path, "raw_path": path.encode(), "root_path": "", "headers": headers}
        scope = {**scope, **moved}
    await routes(scope, receive, send)


async def main() -> None:
    port = int(os.environ.get("PORT", "80"))
    health = int(os.environ.get("PORT_HEALTH") or port)
    configs: list[Any] = [
        uvicorn.Config(app, host="127.0.0.1", port=p, log_level="warning")
        for p in dict.fromkeys((port, health))
    ]
    print(f"llm-lb demo: serving on port {port}, health on {health}; loading the model")
    asyncio.get_running_loop().call_later(
        float(os.environ.get("MODEL_LOAD_SECONDS", "1")), loaded.set
    )
    await asyncio.gather(*(uvicorn.Server(c).serve() for c in configs))


if __name__ == "__main__":
    asyncio.run(main())
