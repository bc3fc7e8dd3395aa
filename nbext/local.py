"""``nbext.local_client()``: a client on an emulator of its own, for scripts and tests.

Asked for by name: ``Client()`` without a key is an error in a script, which must not
quietly run locally when it meant the cloud. It sits above the client and the emulator,
which never import each other (docs/architecture.md#layers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from .client import AsyncClient, Client
from .emulator import Emulator, EmulatorServer
from .emulator.domain.handlers import Handler

__all__ = ["local_async_client", "local_client"]

Endpoints = Mapping[str, str | Handler]
"""Endpoint id -> a demo image's name, or a handler function ``handler(job) -> output``."""


@contextlib.contextmanager
def _served(endpoints: Endpoints | None, emulator: Emulator | None) -> Iterator[EmulatorServer]:
    """A server, not yet started, for the emulator (a new one unless given) with the demo
    images and ``endpoints`` deployed; a new emulator is closed at the end, also when an
    endpoint is refused."""
    logger = logging.getLogger("nbext.emulator")
    if not logger.handlers:  # a failed handler is JobFailed; don't also print it to stderr
        logger.addHandler(logging.NullHandler())
    served = emulator if emulator is not None else Emulator()
    given = endpoints or {}
    try:
        for name in served.images.names():
            if name not in served.jobs.endpoints and name not in given:
                served.deploy(name, endpoint_id=name)
        for endpoint_id, runs in given.items():
            if isinstance(runs, str):
                if served.images.get(runs) is None:
                    raise ValueError(
                        f"endpoint {endpoint_id!r}: unknown image {runs!r}; demo images are "
                        f"{', '.join(served.images.names())}, or give a handler function"
                    )
                served.deploy(runs, endpoint_id=endpoint_id)
            elif callable(runs):
                served.deploy(handler=runs, endpoint_id=endpoint_id)
            else:
                raise TypeError(
                    f"endpoint {endpoint_id!r}: give a demo image's name or a handler "
                    f"function, not {type(runs).__name__}"
                )
        yield EmulatorServer(served)
    finally:
        if emulator is None:
            served.close()


def _settings(server: EmulatorServer) -> dict[str, Any]:
    return {
        "api_key": server.emulator.api_key,
        "serverless_url": server.serverless_url,
        "base_url": f"{server.url}/v2",  # REST v2, the service's management interface
    }


@contextlib.contextmanager
def local_client(
    endpoints: Endpoints | None = None,
    *,
    emulator: Emulator | None = None,
    **client_options: Any,
) -> Iterator[Client]:
    """A ``Client`` on an emulator started for the block, stopped after it.

    ``endpoints`` adds endpoints: ``{"mine": handler}`` or ``{"words": "stream-text"}``.
    ``emulator`` serves one you made (``Emulator(clock=FakeClock())`` to move time by
    hand); it is served for the block and left open, yours to close. Other keyword
    arguments go to ``Client`` (``timeout``, ``wait_timeout``, ...).
    """
    with _served(endpoints, emulator) as server:
        server.start()
        try:
            with Client(**_settings(server), **client_options) as client:
                yield client
        finally:
            server.stop()


@contextlib.asynccontextmanager
async def local_async_client(
    endpoints: Endpoints | None = None,
    *,
    emulator: Emulator | None = None,
    **client_options: Any,
) -> AsyncIterator[AsyncClient]:
    """``local_client`` for ``async with``: an ``AsyncClient`` on an emulator of its own.

    Starting and stopping the server wait on its thread, so they run off the event loop.
    """
    with _served(endpoints, emulator) as server:
        await asyncio.to_thread(server.start)
        try:
            async with AsyncClient(**_settings(server), **client_options) as client:
                yield client
        finally:
            await asyncio.to_thread(server.stop)
