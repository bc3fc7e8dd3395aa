"""Load-balancing endpoints over HTTP: moves the bytes to and from the worker the
balancer leases (docs/architecture.md#a-request-to-a-load-balancing-endpoint)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import h11
from starlette.types import ASGIApp, Receive, Scope, Send

from ..domain.balancer import BODY_LIMIT, PROCESSING_S, Lease, Refused
from ..domain.clock import sleep
from ..domain.errors import DomainError
from ..emulator import Emulator
from .http import authorize, error_reply, too_large

PREFIX = "/lb/"
WORKER_HEADER = "x-runpod-worker-id"
NOT_FORWARDED = frozenset(
    ("connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "host")
) | {"authorization", "content-length", "date", "server"}
"""Neither way: a hop's own headers, the key, lengths (set anew), and what the emulator's
server says of itself."""
MB = 1024 * 1024
LIMIT_OF = "a load-balancing endpoint"
WORKER_CALL = re.compile(r"^/v2/[^/]+/(job-take|job-take-batch|job-stop|ping|job-stream|job-done)/")
"""The worker protocol's calls: a warm worker polls all day, which is not a user's use."""


class LoadBalancing:
    """ASGI middleware: a load-balancing endpoint's URLs go to its workers, all else on."""

    def __init__(self, app: ASGIApp, emulator: Emulator) -> None:
        self.app = app
        self.emulator = emulator
        self._idle: dict[str, list[_Connection]] = {}
        """Keep-alive connections to each worker, by worker id."""
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan" and WORKER_CALL.search(scope["path"]) is None:
            self.emulator.last_call = time.monotonic()
        target = _target(scope) if scope["type"] in ("http", "websocket") else None
        if target is None:
            await self.app(scope, receive, send)
            return
        endpoint_id, path = target
        query = scope.get("query_string", b"").decode("latin-1")
        path_qs = path + (f"?{query}" if query else "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if scope["path"].startswith(PREFIX):  # the worker may build URLs under it
            headers["x-forwarded-prefix"] = f"{PREFIX}{endpoint_id}"
        body: _Body | None = None
        try:
            self.emulator.bind()
            authorize(self.emulator, headers.get("authorization"))
            body = _Body(headers, receive) if scope["type"] == "http" else None
            balancer = self.emulator.balancer
            self.emulator.jobs.endpoint(endpoint_id)  # NotFound, naming those there are
            if self.emulator.endpoint_type(endpoint_id) != "LOAD_BALANCER":
                raise Refused(
                    400,
                    "not a load-balancing endpoint",
                    f"endpoint {endpoint_id!r} is a queue endpoint: send jobs to "
                    f"/v2/{endpoint_id}/run or /runsync",
                )
            if endpoint_id not in balancer.endpoints:
                raise Refused(
                    503,
                    "no workers available",
                    f"endpoint {endpoint_id!r} runs an image the emulator has no server for; "
                    "deploy a server script (--lb-worker ID=PATH, nbext.deploy(PATH, ID, "
                    "type='LOAD_BALANCER')) or use the image llm-lb",
                )
            method = scope.get("method", "GET")
            lease = await balancer.acquire(
                endpoint_id, method, path, headers.get(WORKER_HEADER, "")
            )
        except DomainError as exc:
            if body is not None:
                body.close()
            await _refuse(scope, send, exc, None)
            return
        except asyncio.CancelledError:
            if body is None or not body.left():
                raise
            return  # it waited for a worker: nobody is there to be told
        if body is None:
            await self._websocket(scope, receive, send, lease, path_qs, headers)
        else:
            await self._forward(scope, send, lease, path_qs, headers, body)

    # ---- HTTP ------------------------------------------------------------------------

    async def _connection(self, lease: Lease) -> _Connection:
        """A keep-alive connection to the lease's worker: an idle one it left, else new."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # connections belong to a loop: a new server, new ones
            self._idle, self._loop = {}, loop
        idle = self._idle.get(lease.worker.id, [])
        now = loop.time()
        while idle:
            conn = idle.pop()
            if not conn.reader.at_eof() and now - conn.since < IDLE_S:
                return conn
            conn.writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", lease.worker.port)
        return _Connection(reader, writer, h11.Connection(h11.CLIENT))

    def _keep(self, worker_id: str, conn: _Connection) -> None:
        if conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE:
            conn.h11.start_next_cycle()
            conn.since = asyncio.get_running_loop().time()
            self._idle.setdefault(worker_id, []).append(conn)
        else:
            conn.writer.close()

    async def _forward(
        self,
        scope: Scope,
        send: Send,
        lease: Lease,
        path: str,
        headers: dict[str, str],
        body: _Body,
    ) -> None:
        worker_id = lease.worker.id
        clock = self.emulator.clock
        task = body.task
        expired: list[bool] = []

        def expire() -> None:
            expired.append(True)
            task.cancel()

        overdue = clock.call_later(PROCESSING_S, expire)
        started = lost = False
        status: int | None = None
        error: str | None = None
        conn: _Connection | None = None
        try:
            conn = await self._connection(lease)
            forwarded = [(k, v) for k, v in headers.items() if k not in NOT_FORWARDED]
            forwarded += [("host", f"127.0.0.1:{lease.worker.port}"), body.framing]
            request = h11.Request(method=scope["method"], target=path, headers=forwarded)
            conn.writer.write(conn.h11.send(request) or b"")
            while (piece := await body.next()) is not None:
                conn.writer.writelines(conn.h11.send_with_data_passthrough(h11.Data(piece)) or [])
                await conn.writer.drain()
            conn.writer.write(conn.h11.send(h11.EndOfMessage()) or b"")
            response = await conn.next(h11.Response)
            status = response.status_code
            declared = next(
                (v.decode() for k, v in response.headers if k == b"content-length"), None
            )
            if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
                raise Refused(
                    502,
                    "response too large",
                    f"worker {worker_id} answered {int(declared)} bytes, over the "
                    f"{BODY_LIMIT // MB} MB limit of a response",
                )
            out = [(k, v) for k, v in response.headers if k.decode() not in NOT_FORWARDED]
            if declared is not None:
                out.append((b"content-length", declared.encode()))
            out.append((WORKER_HEADER.encode(), worker_id.encode()))
            await send({"type": "http.response.start", "status": status, "headers": out})
            started = True
            sent = 0
            gap = lease.endpoint.scenario.chunk_gap() if lease.endpoint.scenario else 0.0
            while not isinstance(event := await conn.next(h11.Data), h11.EndOfMessage):
                sent += len(event.data)
                if sent > BODY_LIMIT:
                    error = f"response over the {BODY_LIMIT // MB} MB limit: cut"
                    raise _Cut(error)
                if gap > 0:
                    await sleep(clock, gap)  # the slow-stream scenario
                await send({"type": "http.response.body", "body": event.data, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            self._keep(worker_id, conn)
            conn = None
        except Refused as exc:
            status, error = exc.status, exc.message
            await _refuse(scope, send, exc, worker_id)
        except (asyncio.CancelledError, OSError, h11.ProtocolError, _Closed) as exc:
            if isinstance(exc, asyncio.CancelledError):
                if body.left():  # the connection to the worker is closed below: it sees that
                    error = "the client left before its answer ended"
                    return
                if not expired:
                    raise
                task.uncancel()  # the processing limit cancelled it, not the client leaving
                status, why = None, f"worker {worker_id} took longer than {PROCESSING_S:g} s"
                failed = Refused(504, "request timed out", why)
            else:
                lost, why = True, f"worker {worker_id} closed the connection before it answered"
                why += f" ({type(exc).__name__}): it crashed or exited, and its log says why;"
                why += " the next request waits for a new worker"
                failed = Refused(502, "worker connection lost", why)
            error = failed.message
            if started:
                raise _Cut(error) from None
            await _refuse(scope, send, failed, worker_id)
        finally:
            overdue.cancel()
            body.close()
            if conn is not None:
                conn.writer.close()
            self.emulator.balancer.release(lease, status, error, lost=lost)

    # ---- WebSocket -------------------------------------------------------------------

    async def _websocket(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        lease: Lease,
        path: str,
        headers: dict[str, str],
    ) -> None:
        """Pass messages both ways until either side closes; the lease (and billing)
        lasts as long. A worker's refused handshake is answered as it answered."""
        from websockets.asyncio.client import connect  # the one route that needs it
        from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

        worker_id = lease.worker.id
        error: str | None = None
        accepted = False
        try:
            protocols = headers.get("sec-websocket-protocol", "").replace(" ", "").split(",")
            url = f"ws://127.0.0.1:{lease.worker.port}{path}"
            subprotocols: Any = [p for p in protocols if p] or None
            passed = [
                (k, v)
                for k, v in headers.items()
                if k not in NOT_FORWARDED
                and k != "user-agent"
                and not k.startswith("sec-websocket-")
            ]
            async with connect(
                url,
                subprotocols=subprotocols,
                max_size=BODY_LIMIT,
                additional_headers=passed,
                user_agent_header=headers.get("user-agent"),
            ) as upstream:
                await receive()  # websocket.connect
                accepted = True
                await send(
                    {
                        "type": "websocket.accept",
                        "subprotocol": upstream.subprotocol,
                        "headers": [(WORKER_HEADER.encode(), worker_id.encode())],
                    }
                )

                async def downstream() -> None:
                    async for message in upstream:
                        key = "bytes" if isinstance(message, bytes) else "text"
                        await send({"type": "websocket.send", key: message})
                    await send({"type": "websocket.close", "code": upstream.close_code or 1000})

                pump = asyncio.ensure_future(downstream())
                try:
                    while True:
                        message = await receive()
                        if message["type"] == "websocket.disconnect":
                            break
                        data = message.get("bytes")
                        await upstream.send(data if data is not None else message.get("text", ""))
                finally:
                    pump.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                        await pump
        except InvalidStatus as exc:  # the worker's own refusal, passed on as it was
            error = f"worker {worker_id} refused the WebSocket: {exc}"
            refusal = exc.response
            kind = refusal.headers.get("content-type", "text/plain")
            body = bytes(refusal.body or b"")
            await _deny(scope, send, refusal.status_code, body, kind, worker_id)
        except (OSError, WebSocketException) as exc:
            error = f"worker {worker_id} refused the WebSocket: {exc}"
            with contextlib.suppress(Exception):
                if accepted:
                    await send({"type": "websocket.close", "code": 1011, "reason": error[:120]})
                else:
                    await _refuse(
                        scope, send, Refused(502, "worker connection lost", error), worker_id
                    )
        finally:
            self.emulator.balancer.release(lease, 101, error)


IDLE_S = 4.0
"""An idle connection to a worker is reused this long: under the 5 s after which uvicorn,
the usual worker server, closes it."""


@dataclass(eq=False)
class _Connection:
    """An HTTP/1.1 connection to a worker, in h11: httpx cost ten times the forwarding
    itself (docs/performance.md#a-load-balancing-endpoint-through-the-emulator)."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    h11: h11.Connection
    since: float = 0.0

    async def next(self, kind: type[Any]) -> Any:
        """The next event that matters (``kind``, or the message's end), reading as needed."""
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(READ_BYTES)
                if not data and self.h11.their_state is not h11.SEND_BODY:
                    raise _Closed("the worker closed the connection")
                self.h11.receive_data(data)
            elif isinstance(event, (kind, h11.EndOfMessage)):
                return event
            elif isinstance(event, h11.ConnectionClosed):
                raise _Closed("the worker closed the connection")


READ_BYTES = 262_144


class _Closed(Exception):
    """The worker's side of the connection ended before its answer did."""


class _Cut(Exception):
    """An answer already under way that must end as broken, not as complete: the
    connection is dropped, so the client sees a truncated body."""


def _target(scope: Scope) -> tuple[str, str] | None:
    """(endpoint id, the worker's path) when the request is for a load-balancing URL."""
    path: str = scope["path"]
    if path.startswith(PREFIX):
        endpoint_id, _, rest = path[len(PREFIX) :].partition("/")
        return (endpoint_id, "/" + rest) if endpoint_id else None
    for name, value in scope["headers"]:
        if name == b"host":
            host = value.decode("latin-1").rsplit(":", 1)[0].lower()
            if host.endswith(".localhost") and host.count(".") == 1:
                return host[: -len(".localhost")], path
            return None
    return None


class _Body:
    """A request's body, read from the start (so the server's read deadline never hits
    while a worker starts) and streamed on; the client leaving cancels the request."""

    def __init__(self, headers: dict[str, str], receive: Receive) -> None:
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
            raise Refused(413, "request too large", too_large(int(declared), BODY_LIMIT, LIMIT_OF))
        chunked = declared is None and "chunked" in headers.get("transfer-encoding", "")
        self.framing = (
            ("transfer-encoding", "chunked") if chunked else ("content-length", declared or "0")
        )
        self.pieces: asyncio.Queue[bytes | Exception | None] = asyncio.Queue()
        task = asyncio.current_task()
        assert task is not None  # uvicorn runs each request in a task of its own
        self.task = task
        self.gone = False
        self.reading = asyncio.ensure_future(self._read(receive))

    async def _read(self, receive: Receive) -> None:
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                # The client left. (uvicorn says the same once the answer is complete;
                # ``close`` cancels this reading before then.)
                self.gone = True
                self.task.cancel()
                return
            piece = message.get("body", b"")
            size += len(piece)
            if size > BODY_LIMIT:
                over = too_large(None, BODY_LIMIT, LIMIT_OF)
                self.pieces.put_nowait(Refused(413, "request too large", over))
                return
            if piece:
                self.pieces.put_nowait(piece)
            if not message.get("more_body"):
                self.pieces.put_nowait(None)  # and read on: the next message is its leaving

    async def next(self) -> bytes | None:
        """The next piece; None at the end."""
        piece = await self.pieces.get()
        if isinstance(piece, Exception):
            raise piece
        return piece

    def left(self) -> bool:
        """Whether the client left; if so, the cancellation that told the request so is
        spent, and the request ends quietly (there is nobody to answer)."""
        if self.gone:
            self.task.uncancel()
        return self.gone

    def close(self) -> None:
        self.reading.cancel()


async def _refuse(scope: Scope, send: Send, exc: DomainError, worker_id: str | None) -> None:
    if isinstance(exc, Refused):
        status, body = exc.status, {"error": exc.error, "message": exc.message}
    else:
        status, body, _ = error_reply(exc, "error")
    await _deny(scope, send, status, json.dumps(body).encode(), "application/json", worker_id)


async def _deny(
    scope: Scope, send: Send, status: int, body: bytes | None, kind: str, worker_id: str | None
) -> None:
    """An HTTP answer, to a WebSocket's handshake too (the ASGI ``websocket.http.response``
    extension; without it, only a close: 1008, the reason cut short)."""
    prefix = "http.response"
    if scope["type"] == "websocket":
        if "websocket.http.response" not in scope.get("extensions", {}):
            reason = (body or b"").decode("utf-8", "replace")[:120]
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return
        prefix = "websocket.http.response"
    headers = [(b"content-type", kind.encode())]
    if worker_id is not None:
        headers.append((WORKER_HEADER.encode(), worker_id.encode()))
    await send({"type": f"{prefix}.start", "status": status, "headers": headers})
    await send({"type": f"{prefix}.body", "body": body or b""})
