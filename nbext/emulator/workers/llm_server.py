"""``llm-lb``: the load-balancing demo, an OpenAI-compatible server as vLLM's is.

Run as a load-balancing worker (``python llm_server.py``, unmodified, with ``PORT``,
``PORT_HEALTH`` and ``HEALTH_CHECK_PATH`` from its environment), it serves
``/v1/chat/completions`` and ``/v1/completions`` (``"stream": true`` as Server-Sent
Events), ``/v1/models`` and the health path. The answers are the queue demo ``llm``'s
(``domain/demo_llm``, its word model), through the same handler, so the two demos say
the same things in the same shapes. The health path answers 204 while the "model"
loads (``MODEL_LOAD_SECONDS``, default 1: long enough to see a cold start's 204 before
its 200), then 200.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from nbext.emulator.domain.cancel import CancelFlag
from nbext.emulator.domain.clock import RealClock
from nbext.emulator.domain.demo_llm import CHAT, COMPLETIONS, MODELS, llm
from nbext.emulator.domain.handlers import JobContext, invoke

app = FastAPI(title="nbext llm-lb demo")
loaded = asyncio.Event()
_threads = ThreadPoolExecutor(1)  # invoke's; the demo's handler is async and needs none


@app.get(os.environ.get("HEALTH_CHECK_PATH") or "/ping")
async def ping() -> Response:
    return Response(status_code=200 if loaded.is_set() else 204)


@app.get(MODELS)
async def models(request: Request) -> Response:
    return await _answer(MODELS, {})


@app.post(CHAT)
async def chat(request: Request) -> Response:
    return await _answer(CHAT, await _json(request))


@app.post(COMPLETIONS)
async def completions(request: Request) -> Response:
    return await _answer(COMPLETIONS, await _json(request))


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        return None  # the handler says the body must be a JSON object


async def _answer(route: str, body: Any) -> Response:
    """The handler's one answer as JSON (an error object with its status), or its SSE
    strings streamed as they come."""
    chunks: asyncio.Queue[Any] = asyncio.Queue()
    job_id = uuid.uuid4().hex[:12]
    job = {"id": job_id, "input": {"openai_route": route, "openai_input": body}}
    ctx = JobContext(job_id, RealClock(), CancelFlag())
    run = asyncio.ensure_future(
        invoke(llm, job, ctx, lambda value, _metrics: chunks.put_nowait(value), _threads)
    )
    run.add_done_callback(lambda _: chunks.put_nowait(None))
    first = await chunks.get()
    if isinstance(first, dict):
        error = first.get("error")
        status = error.get("code", 400) if isinstance(error, dict) else 200
        return JSONResponse(first, status_code=status)

    async def events() -> AsyncIterator[str]:
        try:
            item = first
            while item is not None:
                yield item
                item = await chunks.get()
        finally:
            ctx.cancel_flag.set()
            run.cancel()

    return StreamingResponse(events(), media_type="text/event-stream")


async def _load() -> None:
    await asyncio.sleep(float(os.environ.get("MODEL_LOAD_SECONDS", "1")))
    loaded.set()


async def main() -> None:
    port = int(os.environ.get("PORT", "80"))
    health = int(os.environ.get("PORT_HEALTH") or port)
    servers = [uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=p, log_level="warning"))
               for p in dict.fromkeys((port, health))]  # fmt: skip
    print(f"llm-lb demo: serving on port {port}, health on {health}; loading the model")
    loading = asyncio.ensure_future(_load())
    await asyncio.gather(*(s.serve() for s in servers))
    loading.cancel()


if __name__ == "__main__":
    asyncio.run(main())
