"""``/_emulator/...``: controls the real service does not have (reset, clock, inspection).

They let tests and teaching notebooks drive time, see webhook attempts and watch workers
from outside the emulator's process.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..domain.clock import FakeClock
from ..domain.endpoints import Endpoint
from ..domain.errors import Conflict, InvalidInput
from ..domain.workers import WorkerState
from .http import Authenticated, json_response, parse_json, read_body

router = APIRouter(prefix="/_emulator")


def endpoint_view(endpoint: Endpoint, now: float) -> dict[str, Any]:
    return {
        "id": endpoint.id,
        "name": endpoint.name,
        "image": endpoint.image,
        "handler": getattr(endpoint.handler, "__qualname__", None) if endpoint.handler else None,
        "workersMin": endpoint.workers_min,
        "workersMax": endpoint.workers_max,
        "idleTimeout": endpoint.idle_timeout,
        "executionTimeoutMs": endpoint.execution_timeout_ms,
        "queued": len(endpoint.queue),
        "workers": [
            {
                "id": w.id,
                "state": str(w.state),
                "jobId": w.job.id if w.job else None,
                "idleForS": round(now - w.since, 3) if w.state is WorkerState.IDLE else None,
            }
            for w in endpoint.workers
        ],
    }


@router.post("/reset")
async def reset(emulator: Authenticated) -> Response:
    emulator.reset()
    return json_response({"status": "reset"})


@router.get("/clock")
async def clock(emulator: Authenticated) -> Response:
    return json_response(
        {"now": emulator.clock.now(), "fake": isinstance(emulator.clock, FakeClock)}
    )


@router.post("/clock/advance")
async def advance(request: Request, emulator: Authenticated) -> Response:
    if not isinstance(emulator.clock, FakeClock):
        raise Conflict("the emulator runs on the real clock; only a fake clock can be advanced")
    data = parse_json(await read_body(request, 4096))
    seconds = data.get("seconds") if isinstance(data, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise InvalidInput(f"seconds must be a number >= 0, got {seconds!r}")
    fired = await emulator.advance_async(float(seconds))
    return json_response({"now": emulator.clock.now(), "timersFired": fired})


@router.get("/webhooks")
async def webhooks(emulator: Authenticated) -> Response:
    return json_response([d.to_dict() for d in emulator.webhooks.deliveries])


@router.get("/store")
async def store(emulator: Authenticated) -> Response:
    """Whether every state change is written: while the store refuses writes (a full
    disk), how many wait to be written and why."""
    persistence = emulator.jobs.persistence
    return json_response(
        {
            "store": repr(emulator.store),
            "unwrittenChanges": persistence.unwritten,
            "problem": persistence.problem,
            "webhooksPending": emulator.webhooks.pending,
        }
    )


@router.get("/endpoints")
async def endpoints(emulator: Authenticated) -> Response:
    now = emulator.clock.now()
    return json_response([endpoint_view(e, now) for e in emulator.jobs.endpoints.values()])


@router.post("/endpoints")
async def deploy(request: Request, emulator: Authenticated) -> Response:
    """Deploy an image as an endpoint: ``{"image", "id"?, "workersMin"?, ...}``."""
    data = parse_json(await read_body(request, 65536))
    if not isinstance(data, dict) or not isinstance(data.get("image"), str):
        raise InvalidInput("body must be a JSON object with a string 'image'")
    try:
        endpoint_id = emulator.deploy(
            data["image"],
            endpoint_id=data.get("id"),
            workers_min=int(data.get("workersMin", 0)),
            workers_max=int(data.get("workersMax", 3)),
            idle_timeout=float(data.get("idleTimeout", 5.0)),
            execution_timeout_ms=int(data.get("executionTimeoutMs", 600_000)),
        )
    except (TypeError, ValueError) as exc:
        raise InvalidInput(str(exc)) from None
    endpoint = emulator.jobs.endpoints[endpoint_id]
    return json_response(endpoint_view(endpoint, emulator.clock.now()), 201)


@router.get("/endpoints/{endpoint_id}/requests")
async def lb_requests(endpoint_id: str, emulator: Authenticated) -> Response:
    """A load-balancing endpoint's last requests, newest first, each with its worker, its
    wait and run times (ms) and its cost: the run time at the endpoint's price (a GPU
    second of the catalog's, times its GPUs), as a queue job's is reckoned."""
    rate = emulator.management.endpoints.get(endpoint_id).rate()  # 404 for an unknown id
    balanced = emulator.balancer.endpoints.get(endpoint_id)
    served = list(balanced.served) if balanced is not None else []
    return json_response(
        {"requests": [{**r, "costUsd": round(r["executionTime"] / 1000 * rate, 8)} for r in served]}
    )
