"""``/v2`` is shared: management paths and job routes never shadow each other."""

from __future__ import annotations

import httpx
import pytest
from starlette.routing import Match

from nbext.emulator import Emulator
from nbext.emulator.api import jobs, worker_routes
from nbext.models.v2 import MANAGEMENT_SEGMENTS, is_management_path

from .conftest import ok, pod, problem

pytestmark = pytest.mark.anyio


def job_route_of(path: str, method: str = "POST") -> str | None:
    """The name of the job or worker route that takes ``path`` at all (any method)."""
    scope = {"type": "http", "path": path, "method": method}
    for route in [*jobs.router.routes, *worker_routes.router.routes]:
        if route.matches(scope)[0] is not Match.NONE:
            return str(getattr(route, "name", route))
    return None


def test_management_segments_never_match_a_job_route() -> None:
    for segment in MANAGEMENT_SEGMENTS:
        for tail in ("run", "health", "status/abc", "openai/v1/models", "logs", "ping/w"):
            path = f"/v2/{segment}/{tail}"
            assert job_route_of(path) is None, path
            assert is_management_path(path)
    assert job_route_of("/v2/my-endpoint/run") == "run"
    assert not is_management_path("/v2/my-endpoint/run")
    assert not is_management_path("/v2/podsx/run") and job_route_of("/v2/podsx/run") == "run"
    assert job_route_of("/v2/pods.x/health") == "health"  # the dot is no wildcard


async def test_a_pod_named_like_a_job_operation_is_a_pod(api: httpx.AsyncClient) -> None:
    await problem(api.get("/v2/pods/health"), 404, "pod 'health' not found")
    await problem(api.get("/v2/serverless/status/workers"), 404, "endpoint 'status' not found")
    p = await pod(api)
    assert (await ok(api.get(f"/v2/pods/{p['id']}")))["id"] == p["id"]


async def test_job_routes_keep_their_shape(api: httpx.AsyncClient, emu: Emulator) -> None:
    r = await api.post("/v2/nope/run", json={"input": {}})
    assert r.status_code == 404 and "error" in r.json()  # the job interface's body
    emu.deploy("echo", endpoint_id="serverless-echo")
    done = await ok(api.post("/v2/serverless-echo/runsync", json={"input": {"a": 1}}))
    assert done["output"] == {"a": 1}


@pytest.mark.parametrize("reserved", sorted(MANAGEMENT_SEGMENTS))
async def test_no_endpoint_may_take_a_management_segment(
    emu: Emulator, reserved: str, api: httpx.AsyncClient
) -> None:
    if reserved == "openapi.json":
        pytest.skip("not a valid endpoint id anyway")
    with pytest.raises(ValueError, match="management path"):
        emu.deploy("echo", endpoint_id=reserved)
    assert reserved not in emu.jobs.endpoints
    assert (await ok(api.get("/v2/serverless")))["endpoints"] == []
