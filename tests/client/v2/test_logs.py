"""Pod logs through the client: read once, and followed across reconnections.

The emulator ends each log stream with a ``retry`` hint; the client waits it on its own
clock, which here is the emulator's fake clock, so following moves emulator time (and
the pod's life) forward instead of sleeping.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import anyio.to_thread
import pytest

from nbext.client import NotFound
from nbext.emulator.domain.management.pod_status import PROVISIONING_S, STARTING_S
from nbext.models.v2 import LogEvent

from .conftest import GPU, V2Harness, take

pytestmark = pytest.mark.anyio

BOOT = [
    f"pod {{id}}: 1 x {GPU} in EU-RO-1",
    "pulling image img",
    "image img pulled",
    "starting container",
    "container started",
    "Jupyter Lab listening on 8888/http",
]


async def test_logs_read_what_is_there_now(v2: V2Harness) -> None:
    p = await v2.pod(ports=["8888/http"])
    now = await v2.call(v2.client.pods.logs, p["id"])
    assert [e.line for e in now] == [line.format(id=p["id"]) for line in BOOT[:2]]
    assert all(isinstance(e, LogEvent) and e.source == "system" and e.cursor for e in now)
    assert now[0].ts == datetime(2026, 1, 1, tzinfo=UTC)
    await v2.advance(PROVISIONING_S + STARTING_S)
    containers = await v2.call(v2.client.pods.logs, p["id"], tail=2, source="container")
    assert [e.line for e in containers] == ["container started", BOOT[5]]
    since = await v2.call(v2.client.pods.logs, p["id"], since="2026-01-01T00:00:08Z")
    assert since[0].line == "container started"
    aware = datetime(2026, 1, 1, 0, 0, 8, tzinfo=UTC)
    assert await v2.call(v2.client.pods.logs, p["id"], since=aware) == since
    assert await v2.call(v2.client.pods.logs, p["id"], tail=0) == []
    with pytest.raises(NotFound, match="pod 'nope'"):
        await v2.call(v2.client.pods.logs, "nope")


async def test_following_reconnects_after_the_hint_with_the_last_cursor(v2: V2Harness) -> None:
    p = await v2.pod(ports=["8888/http"])
    follower = v2.client.pods.follow_logs(p["id"])
    lines = await take(v2, follower, len(BOOT))
    # every boot line once, in order: each reconnection resumed after the last cursor
    assert [e.line for e in lines] == [line.format(id=p["id"]) for line in BOOT]
    assert v2.time is not None and v2.time.slept and set(v2.time.slept) == {1.0}
    assert v2.emu.clock.now() >= PROVISIONING_S + STARTING_S  # time came from the waits


async def test_following_ends_when_the_pod_is_gone(v2: V2Harness) -> None:
    p = await v2.pod()
    follower = v2.client.pods.follow_logs(p["id"], source="system")
    first = await take(v2, follower, 2)
    assert [e.line for e in first] == [line.format(id=p["id"]) for line in BOOT[:2]]
    await v2.v2("POST", f"/pods/{p['id']}/action", json={"action": "terminate"})
    assert await v2.collect(follower) == []


async def test_following_a_pod_that_never_was_is_not_found(v2: V2Harness) -> None:
    with pytest.raises(NotFound, match="pod 'ghost'"):
        await v2.collect(v2.client.pods.follow_logs("ghost"))


async def test_following_stops_when_told(v2: V2Harness) -> None:
    p = await v2.pod()
    stop = threading.Event()
    seen: list[LogEvent] = []

    def consume(line: LogEvent) -> None:
        seen.append(line)
        stop.set()

    follower = v2.client.pods.follow_logs(p["id"], stop=stop)
    if v2.is_async:
        async for line in follower:
            consume(line)
    else:
        await anyio.to_thread.run_sync(lambda: [consume(line) for line in follower])
    assert len(seen) == 1  # the second line of the same answer was not handed over
