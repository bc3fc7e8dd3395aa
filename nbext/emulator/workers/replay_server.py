"""A recorded load-balancing endpoint's worker: answers each recorded request (method,
path and body) with the recorded status, headers and body chunks at their recorded
gaps; any other with a 404 naming the nearest recorded ones (docs/behaviour.md#recordings).
``python replay_server.py RECORDING ENDPOINT_ID SPEED`` (SPEED 0: no waits), with ``PORT``
and ``HEALTH_CHECK_PATH`` from its environment, as any load-balancing worker.
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from nbext.emulator.replay import Calls
from nbext.models import recording as fmt

path, endpoint_id, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
recorded = [c for c in fmt.read(Path(path)).calls if c["endpoint"] == endpoint_id]
calls = Calls(endpoint_id, recorded, speed or None)
health_path = os.environ.get("HEALTH_CHECK_PATH") or "/ping"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == health_path:
            return self.whole(200, b"")
        asked = {"method": self.command, "path": self.path, "body": fmt.text_of(body)}
        call = calls.answer(asked)
        if call is None:
            return self.whole(404, json.dumps({"message": calls.miss(asked)}).encode())
        start = time.monotonic()
        headers_at = call["timeline"][0][0] if call["timeline"] else 0
        self.wait(start, headers_at)  # the queue and cold start the recorded request saw
        self.send_response(call["httpStatus"])
        for name, value in call["headers"].items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for at, text in call["stream"]:
            self.wait(start, at)
            data = fmt.bytes_of(text)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def wait(self, start: float, at_ms: float) -> None:
        """Until ``at_ms`` after the request came, as recorded (scaled by the speed)."""
        if calls.speed is not None:
            time.sleep(max(0.0, start + at_ms / 1000 / calls.speed - time.monotonic()))

    def whole(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = answer

    def log_message(self, format: str, *args: object) -> None:
        pass  # the emulator keeps a log of its own requests


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "80"))), Handler).serve_forever()
