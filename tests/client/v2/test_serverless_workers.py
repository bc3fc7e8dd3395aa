"""An endpoint's workers, releases and worker logs through the client, four ways."""

from __future__ import annotations

import pytest

from nbext.client import NotFound
from nbext.models.v2 import Release, Worker

from .conftest import V2Harness, endpoint, take

pytestmark = pytest.mark.anyio


async def test_workers_and_releases(v2: V2Harness) -> None:
    e = await endpoint(v2, workers={"min": 1, "max": 1})
    workers = await v2.call(v2.client.endpoints.workers, e["id"])
    assert len(workers) == 1 and isinstance(workers[0], Worker)
    assert workers[0].status == "IDLE" and workers[0].image == "echo"
    await v2.advance(60)
    await v2.v2("PATCH", f"/serverless/{e['id']}", json={"image": "echo:2"})
    releases = await v2.call(v2.client.endpoints.releases, e["id"])
    assert [r.version for r in releases] == [1, 0] and isinstance(releases[0], Release)
    assert releases[0].diff == [{"field": "image", "old": "echo", "new": "echo:2"}]
    with pytest.raises(NotFound, match="endpoint 'nope'"):
        await v2.call(v2.client.endpoints.workers, "nope")


async def test_worker_logs_read_and_followed_across_jobs(v2: V2Harness) -> None:
    e = await endpoint(v2, workers={"min": 1, "max": 1})
    (worker,) = await v2.call(v2.client.endpoints.workers, e["id"])
    first = await v2.v2("POST", f"/{e['id']}/runsync", json={"input": {"x": 1}})
    lines = await v2.call(v2.client.endpoints.worker_logs, e["id"], worker.id)
    assert lines[0].line.startswith(f"worker {worker.id} started")
    assert [x.line for x in lines[1:]] == [
        f"job {first['id']} started",
        f"job {first['id']} COMPLETED after 0.000 s",
    ]
    follower = v2.client.endpoints.follow_worker_logs(e["id"], worker.id, tail=1)
    assert [x.line for x in await take(v2, follower, 1)] == [lines[-1].line]
    second = await v2.v2("POST", f"/{e['id']}/runsync", json={"input": {"x": 2}})
    newer = await take(v2, follower, 2)  # after a reconnection, only what came since
    assert [x.line for x in newer] == [
        f"job {second['id']} started",
        f"job {second['id']} COMPLETED after 0.000 s",
    ]
    await v2.v2("DELETE", f"/serverless/{e['id']}")
    assert await v2.collect(follower) == []  # the worker is gone with its endpoint
    with pytest.raises(NotFound, match="worker 'nobody'"):
        await v2.call(v2.client.endpoints.worker_logs, e["id"], "nobody")
