"""Load-balancing workers for the tests: real HTTP servers, run unmodified by the emulator.

Each serves on ``$PORT`` and answers its health path 204 (initializing) until the file
named by ``$READY_FILE`` exists, when that variable is set, then 200: a test decides when
a cold start ends by creating the file, with no sleep. ``$GATE_FILE`` likewise holds the
second half of an event stream until the test creates it, so a test can see the first
half drawn before the rest is sent.
"""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

FASTAPI_SERVER = textwrap.dedent(
    f"""
    import asyncio
    import os
    from pathlib import Path

    import uvicorn
    from fastapi import FastAPI, Request, Response
    from fastapi.responses import PlainTextResponse, StreamingResponse

    app = FastAPI()
    READY = os.environ.get("READY_FILE")
    GATE = os.environ.get("GATE_FILE")
    PIXEL = {PIXEL_PNG!r}

    @app.get("/ping")
    def ping():
        ready = not READY or Path(READY).exists()
        return Response(status_code=200 if ready else 204)

    @app.post("/echo")
    async def echo(request: Request):
        return await request.json()

    @app.get("/items")
    def items():
        return [{{"id": i, "square": i * i}} for i in range(3)]

    @app.get("/items/{{item_id}}")
    def item(item_id: int, request: Request):
        return {{"id": item_id, "tag": request.headers.get("x-tag")}}

    @app.get("/hello")
    def hello():
        return PlainTextResponse("hello from " + os.environ.get("RUNPOD_POD_ID", "?"))

    @app.get("/picture")
    def picture():
        return Response(PIXEL, media_type="image/png")

    @app.get("/count")
    async def count():
        async def events():
            yield ": a comment\\ndata: one\\n\\n"
            while GATE and not Path(GATE).exists():
                await asyncio.sleep(0.01)
            yield 'event: number\\ndata: {{"n": 2}}\\n\\n'
        return StreamingResponse(events(), media_type="text/event-stream")

    @app.get("/slow")
    async def slow():
        while GATE and not Path(GATE).exists():
            await asyncio.sleep(0.01)
        return {{"late": True}}

    @app.get("/teapot")
    def teapot():
        return Response('{{"detail": "no coffee here"}}', status_code=418)

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
    """
)

STDLIB_SERVER = textwrap.dedent(
    """
    import os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def answer(self, body, kind="application/json"):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.answer(b"" if self.path == "/ping" else b'{"ok": true}')

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/crash":
                os._exit(3)
            self.answer(body)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path
