"""The client's REST v2 resources against the emulator, four ways.

``V2Harness`` is the job tests' ``Harness`` (``tests/client/conftest.py``) with the
client's ``base_url`` at the emulator's ``/v2``, and ``virtual_time`` on: the client's
clock is the emulator's fake clock, so a follower waiting for the server's ``retry``
hint moves emulator time instead of sleeping. Records the client cannot make yet are
made over HTTP (``h.v2``), as any other program would.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio.to_thread
import httpx
import pytest

from nbext.emulator import Emulator, FakeClock

from ..conftest import KEY, MODES, Harness

LOCAL_V2 = "http://emulator/v2"
GPU = "NVIDIA A40"
_names = itertools.count()


class V2Harness(Harness):
    """A ``Harness`` whose clients speak REST v2 to the emulator's management paths."""

    def transport_kwargs(self) -> dict[str, Any]:
        kw = super().transport_kwargs()
        kw["base_url"] = self.server.serverless_url if self.server is not None else LOCAL_V2
        return kw

    async def v2(self, method: str, path: str, **kw: Any) -> Any:
        """A REST v2 request outside the client (``path`` under ``/v2``); its JSON, or
        None for an empty answer (204)."""
        request = functools.partial(
            self._control.request, method, f"/v2{path}", headers={"Authorization": f"Bearer {KEY}"}
        )
        if isinstance(self._control, httpx.AsyncClient):
            response = await request(**kw)
        else:
            response = await anyio.to_thread.run_sync(functools.partial(request, **kw))
        response.raise_for_status()
        return response.json() if response.content else None

    async def pod(self, **fields: Any) -> dict[str, Any]:
        body = {"name": f"pod-{next(_names)}", "image": "img", "gpu": {"id": GPU}, **fields}
        made: dict[str, Any] = await self.v2("POST", "/pods", json=body)
        return made


MakeV2 = Callable[..., Awaitable[V2Harness]]


@pytest.fixture(params=MODES)
async def make_v2(request: pytest.FixtureRequest) -> AsyncIterator[MakeV2]:
    """``h = await make_v2(**client_kw)``: an empty emulator on a fake clock, one v2 client
    whose clock is the emulator's."""
    made: list[V2Harness] = []

    async def factory(**client_kw: Any) -> V2Harness:
        emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
        harness = V2Harness(request.param, emu)
        made.append(harness)
        return await harness.start(True, client_kw)  # type: ignore[return-value]

    yield factory
    for harness in made:
        with contextlib.suppress(Exception):
            await harness.close()


@pytest.fixture
async def v2(make_v2: MakeV2) -> V2Harness:
    return await make_v2()


async def endpoint(h: V2Harness, **fields: Any) -> dict[str, Any]:
    """A queue endpoint made through ``/v2/serverless`` (echo image, AMPERE_48 GPUs)."""
    body = {
        "name": f"ep-{next(_names)}",
        "type": "QUEUE",
        "image": "echo",
        "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
        "gpu": {"pools": ["AMPERE_48"]},
        **fields,
    }
    made: dict[str, Any] = await h.v2("POST", "/serverless", json=body)
    return made


async def take(h: V2Harness, lines: Any, n: int) -> list[Any]:
    """The next ``n`` items of a (sync or async) follower, leaving it open."""
    if h.is_async:
        got = []
        async for line in lines:
            got.append(line)
            if len(got) == n:
                break
        return got
    return await anyio.to_thread.run_sync(lambda: list(itertools.islice(lines, n)))
