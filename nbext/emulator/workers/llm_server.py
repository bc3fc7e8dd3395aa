"""``llm-lb``: the load-balancing demo, an OpenAI-compatible server as vLLM's is.

Run as a load-balancing worker (``python llm_server.py``, with ``PORT``, ``PORT_HEALTH``
and ``HEALTH_CHECK_PATH`` from its environment), it serves ``/v1/chat/completions``,
``/v1/completions`` (``"stream": true`` as Server-Sent Events), ``/v1/models`` and the
health path. The answers are the queue demo ``llm``'s through the emulator's own OpenAI
routes (docs/openai.md), served by an emulator inside this process: the two demos say the
same things in the same shapes, errors included, from one piece of code. The health path
answers 204 while the "model" loads (``MODEL_LOAD_SECONDS``, default 1: long enough to
see a cold start's 204 before its 200), then 200.
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
