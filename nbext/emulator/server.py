"""``EmulatorServer``: the emulator on a loopback port, in a daemon thread with its own
loop (the kernel's stays free for widgets). The socket is bound before the thread
starts, so ``port=0`` yields a free port with no race.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import uvicorn

from .api import create_app
from .emulator import Emulator
from .protocol import KEEP_ALIVE_S, MAX_CONNECTIONS, REQUEST_TIMEOUT, deadline_protocol


class EmulatorServer:
    """Serve an ``Emulator`` over HTTP on ``host`` (loopback unless told otherwise)."""

    def __init__(
        self,
        emulator: Emulator | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        request_timeout: float = REQUEST_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        """``request_timeout``: seconds a client has to send a whole request;
        ``max_connections``: connections served at once (``protocol`` says why)."""
        self.emulator = emulator or Emulator()
        self.host = host
        self._requested_port = port
        self._log_level = log_level
        self._protocol = deadline_protocol(request_timeout, max_connections)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the server is not started")
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``; jobs and management (REST v2) under ``/v2``, the frozen
        REST v1 under ``/v1``."""
        return f"http://{self.host}:{self.port}"

    @property
    def serverless_url(self) -> str:
        """The job interface and REST v2 management alike (a client's ``serverless_url``
        and ``base_url``: ``base_url`` is the same property)."""
        return f"{self.url}/v2"

    base_url = serverless_url

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 15.0) -> EmulatorServer:
        """Start serving; returns once requests are answered, or raises."""
        if self.running:
            return self
        # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on sockets that
        # say they are TCP, and accepted sockets inherit it. Without it a response written
        # in two parts (head, body) waits for the client's delayed ACK, ~40 ms a request.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self._requested_port))
        except OSError as exc:
            sock.close()
            raise OSError(f"cannot listen on {self.host}:{self._requested_port}: {exc}") from exc
        sock.listen(2048)
        self._socket = sock
        config = uvicorn.Config(
            create_app(self.emulator),
            log_level=self._log_level,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            timeout_keep_alive=KEEP_ALIVE_S,  # outlasting the clients' pools (``protocol``)
            # A local emulator sits behind no proxy, so X-Forwarded-* is not for it, and
            # the middleware that reads them would cost every request a little.
            proxy_headers=False,
            http=self._protocol,
        )
        self._server = uvicorn.Server(config)
        self._error = None
        self._thread = threading.Thread(target=self._run, name="nbext-emulator", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the emulator server failed to start: {self._error!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the emulator server did not start within {timeout} s")
            time.sleep(0.005)
        self.emulator.serving_at = self.url
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)

        async def main() -> None:
            assert self._server is not None and self._socket is not None
            self.emulator.bind()
            try:
                await self._server.serve(sockets=[self._socket])
            finally:
                await self.emulator.aclose()

        try:
            loop.run_until_complete(main())
        except BaseException as exc:  # reported by start()
            self._error = exc
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the worker processes, stop serving and join the thread."""
        self.emulator.stop_workers()
        self.emulator.serving_at = None
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._socket else "not started"
        return f"EmulatorServer({where}, {self.emulator!r})"
