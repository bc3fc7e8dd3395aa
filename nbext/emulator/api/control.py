"""``/_emulator/...``: controls the real service does not have, for tests, teaching
notebooks and the local service (docs/behaviour.md#emulator-controls)."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import replay
from ..domain.clock import FakeClock
from ..domain.endpoints import Endpoint
from ..domain.errors import Conflict, InvalidInput
from ..domain.workers import WorkerState
from .http import Authenticated, json_response, no_content, parse_json, read_body
from .kernels import deploy_settings

router = APIRouter(prefix="/_emulator")
LAST_LINES = 8
"""Lines of a worker's output shown when it cannot start."""


def endpoint_view(endpoint: Endpoint, now: float) -> dict[str, Any]:
    """An endpoint's settings in a deploy's words (v2's ``workers``), and its fleet."""
    return {
        "id": endpoint.id,
        "name": endpoint.name,
        "image": endpoint.image,
        "handler": getattr(endpoint.handler, "__qualname__", None) if endpoint.handler else None,
        "workers": {
            "min": endpoint.workers_min,
            "max": endpoint.workers_max,
            "idleTimeout": endpoint.idle_timeout,
        },
        "executionTimeoutMs": endpoint.execution_timeout_ms,
        "queued": len(endpoint.queue),
        "scenario": endpoint.scenario.describe() if endpoint.scenario is not None else None,
        "fleet": [
            {
                "id": w.id,
                "state": str(w.state),
                "jobId": w.job.id if w.job else None,
                "idleForS": round(now - w.since, 3) if w.state is WorkerState.IDLE else None,
            }
            for w in endpoint.workers
        ],
    }


async def _naming(request: Request, field: str, limit: int) -> dict[str, Any]:
    data = parse_json(await read_body(request, limit))
    if not isinstance(data, dict) or not isinstance(data.get(field), str):
        raise InvalidInput(f"body must be a JSON object with a string {field!r}")
    return data


@router.get("/service")
async def service(emulator: Authenticated) -> Response:
    """What the service is (the user's shared one says since when and where its data is),
    who uses it and what it has in flight: ``%runpod local status``."""
    emulator.joined_kernels = {pid for pid in emulator.joined_kernels if _alive(pid)}
    return json_response(
        {
            **emulator.about,
            "url": emulator.serving_at,
            "shared": bool(emulator.about),
            "clock": "fake" if isinstance(emulator.clock, FakeClock) else "real",
            "endpoints": sorted(emulator.jobs.endpoints),
            "kernels": sorted(emulator.joined_kernels),
            "busy": emulator.busy(),
        }
    )


@router.put("/service/kernels/{pid}")
async def kernel_joined(pid: int, emulator: Authenticated) -> Response:
    emulator.joined_kernels.add(pid)
    return no_content()


@router.delete("/service/kernels/{pid}")
async def kernel_left(pid: int, emulator: Authenticated) -> Response:
    emulator.joined_kernels.discard(pid)
    return no_content()


@router.post("/service/stop")
async def stop_service(emulator: Authenticated) -> Response:
    """Stop the user's service (it ends its workers and writes its last changes first)."""
    if emulator.on_stop is None:
        raise Conflict("this emulator is not the user's local service: stop what started it")
    emulator.on_stop()
    return json_response({"status": "stopping"}, 202)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        pass
    return True


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
    """Deploy an image as an endpoint: ``{"image", "id"?, "type"?, "workers"?,
    "executionTimeoutMs"?}``."""
    data = await _naming(request, "image", 65536)
    settings = deploy_settings(data)
    try:
        endpoint_id = emulator.deploy(
            data["image"], endpoint_id=data.get("id"), type=data.get("type"), **settings
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


@router.put("/endpoints/{endpoint_id}/scenario")
async def scenario(endpoint_id: str, request: Request, emulator: Authenticated) -> Response:
    """Give the endpoint a teaching scenario (``{"scenario": "cold-start:seconds=20"}``),
    or end it (``null``): ``%runpod emulator scenario``."""
    data = parse_json(await read_body(request, 4096))
    text = data.get("scenario") if isinstance(data, dict) else None
    if text is not None and not isinstance(text, str):
        raise InvalidInput(f"scenario must be a string or null, got {text!r}")
    emulator.jobs.endpoint(endpoint_id)  # 404 naming the endpoints there are
    try:
        described = emulator.set_scenario(endpoint_id, text)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    return json_response({"scenario": described if text is not None else None})


@router.put("/replays")
async def replays(request: Request, emulator: Authenticated) -> Response:
    """Serve a recording (``{"path", "speed"?, "instant"?}``, a file on this machine):
    ``%runpod replay``. Its endpoints replace those of the same ids."""
    data = await _naming(request, "path", 65536)
    try:
        speed = float(data.get("speed", 1.0))
        answer = replay.load(emulator, data["path"], speed=speed, instant=bool(data.get("instant")))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(str(exc)) from None
    return json_response(answer)


@router.put("/scripts/{endpoint_id}")
async def deploy_script(endpoint_id: str, request: Request, emulator: Authenticated) -> Response:
    """Deploy a worker script (``{"path", "python"?, "args"?, "env"?, "type"?, "workers"?,
    "executionTimeoutMs"?}``) as the endpoint, replacing the processes of an earlier one
    of that name (which must have no job queued or running), and start its first worker:
    ``nbext.deploy`` then follows it at ``/startup``."""
    data = await _naming(request, "path", 1 << 20)
    settings = deploy_settings(data)
    existing = emulator.jobs.endpoints.get(endpoint_id)
    if existing is not None:
        if existing.queue or any(w.running for w in existing.workers):
            raise Conflict(
                f"endpoint {endpoint_id!r} has jobs queued or running: wait for them (or "
                "purge its queue) before deploying it again"
            )
        emulator.undeploy(endpoint_id)
        emulator.remote_workers.reconcile()  # its processes stop
    try:
        emulator.deploy_worker(
            data["path"],
            endpoint_id=endpoint_id,
            python=data.get("python"),
            env=data.get("env"),
            type=data.get("type", "QUEUE"),
            args=data.get("args", []),
            **settings,
        )
    except (TypeError, ValueError) as exc:
        raise InvalidInput(str(exc)) from None
    emulator.remote_workers.warm(endpoint_id)
    return json_response({"id": endpoint_id}, 201)


@router.get("/endpoints/{endpoint_id}/startup")
async def startup(endpoint_id: str, emulator: Authenticated) -> Response:
    """Whether a worker of a script's endpoint serves; if the last one could not start,
    why, with the last lines it printed; what a load-balancing one's health path said."""
    endpoint = emulator.jobs.endpoint(endpoint_id)
    serving, failure = emulator.remote_workers.startup(endpoint_id)
    seen = emulator.balancer.health_seen
    health = next((seen[w.id] for w in endpoint.workers if w.id in seen), None)
    texts = [line.partition("] ")[2] for line in emulator.worker_logs(endpoint_id)]
    output = [text for text in texts if not text.startswith("--- ")]
    return json_response(
        {"serving": serving, "failure": failure, "health": health, "output": output[-LAST_LINES:]}
    )


@router.delete("/endpoints/{endpoint_id}")
async def undeploy(endpoint_id: str, emulator: Authenticated) -> Response:
    emulator.jobs.endpoint(endpoint_id)
    emulator.undeploy(endpoint_id)
    emulator.remote_workers.reconcile()
    return no_content()
