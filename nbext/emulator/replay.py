"""Serving a recording: each recorded endpoint becomes an endpoint whose ordinary handler
(or, load-balancing, ``SERVER`` script) answers the recorded jobs with their chunks and
timing, so they queue, stream and bill as any other (docs/behaviour.md#recordings).
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbext.models import recording as fmt

from .domain.handlers import current_job
from .domain.openai_routes import error

SERVER = Path(__file__).with_name("workers") / "replay_server.py"

if TYPE_CHECKING:
    from .emulator import Emulator

COLD_START_MIN = 0.5
"""A first job's recorded delay from this many seconds on is replayed as a cold start."""
NEAREST = 3


class Calls:
    """One endpoint's recorded calls, answered by input digest in recorded order (round
    and round: a notebook run twice gets the same answers twice)."""

    def __init__(self, endpoint_id: str, calls: list[dict[str, Any]], speed: float | None):
        self.endpoint_id = endpoint_id
        self.speed = speed
        """How many times faster than recorded; None: no waits at all."""
        self._calls: dict[str, list[dict[str, Any]]] = {}
        for call in calls:
            self._calls.setdefault(call["inputDigest"], []).append(call)
        self._next: dict[str, int] = {}
        self._turns = threading.Lock()
        self._inputs = [json.dumps(c[0]["input"], sort_keys=True) for c in self._calls.values()]

    def answer(self, value: Any) -> dict[str, Any] | None:
        """The next recorded call made with input ``value``; None if none was."""
        digest = fmt.digest(value)
        calls = self._calls.get(digest)
        if calls is None:
            return None
        with self._turns:  # the replay server answers from several threads
            turn = self._next.get(digest, 0)
            self._next[digest] = turn + 1
        return calls[turn % len(calls)]

    def miss(self, value: Any) -> str:
        text = json.dumps(value, sort_keys=True)
        near = difflib.get_close_matches(text, self._inputs, n=NEAREST, cutoff=0.0)
        shown = "; ".join(_short(n) for n in near)
        return (
            f"replay of endpoint {self.endpoint_id!r}: input {_short(text)} was never "
            f"recorded; nearest recorded inputs: {shown}"
        )


class Replayer(Calls):
    """A queue endpoint's handler: each job answered as recorded."""

    async def __call__(self, job: dict[str, Any]) -> Any:
        call = self.answer(job["input"])
        if call is None:
            missed = self.miss(job["input"])
            return _once(error(404, missed, "NotFoundError")) if _routed(job) else {"error": missed}
        start = current_job().clock.now()
        if call["kind"] == "http":  # a route's answer: its body, SSE text if it streamed
            if call["headers"].get("content-type", "").startswith("text/event-stream"):
                return self._stream(call, start)
            await self._until(start, _ms(call["executionTimeMs"]) - started_ms(call))
            return json.loads(b"".join(fmt.bytes_of(text) for _, text in call["stream"]))
        if call["stream"]:
            return self._stream(call, start)  # a generator: the emulator streams its items
        await self._until(start, _ms(call["executionTimeMs"]))
        if call["status"] == "FAILED":
            return {"error": call["error"] or "the recorded job failed"}
        return call["output"]

    async def _stream(self, call: dict[str, Any], start: float) -> AsyncIterator[Any]:
        started = started_ms(call)
        for at, output in call["stream"]:
            await self._until(start, at - started)
            yield fmt.bytes_of(output).decode() if call["kind"] == "http" else output
        await self._until(start, _ms(call["executionTimeMs"]))

    async def _until(self, start: float, ms: float) -> None:
        """Sleep until ``ms`` after ``start`` on the emulator's clock, at ``speed``."""
        if self.speed is None:
            return
        job = current_job()
        left = start + ms / 1000 / self.speed - job.clock.now()
        if left > 0:
            await job.sleep(left)


async def _once(answer: Any) -> AsyncIterator[Any]:
    """``answer`` yielded, as a route's answer (returned, an ``error`` fails the job)."""
    yield answer


def _routed(job: dict[str, Any]) -> bool:
    return isinstance(job["input"], dict) and "openai_route" in job["input"]


def _as_job(call: dict[str, Any]) -> dict[str, Any]:
    """A request the ``openai`` package sent to a queue endpoint's route, as the job
    input the route makes of it (the body parsed: its digest is the same however sent)."""
    asked = call["input"]
    if call["kind"] != "http" or not asked["path"].startswith("/openai/v1/"):
        return call
    body = fmt.bytes_of(asked["body"])
    job_input = {
        "openai_route": asked["path"].removeprefix("/openai"),
        "openai_input": json.loads(body) if body else {},
    }
    return call | {"input": job_input, "inputDigest": fmt.digest(job_input)}


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def started_ms(call: dict[str, Any]) -> float:
    """When the job started, in ms after its submission: its recorded delay, else its
    first state read (a job only streamed is never read whole)."""
    if isinstance(call.get("delayTimeMs"), int | float):
        return float(call["delayTimeMs"])
    return float(call["timeline"][0][0]) if call["timeline"] else 0.0


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def load(
    emulator: Emulator, path: str | Path, *, speed: float = 1.0, instant: bool = False
) -> dict[str, Any]:
    """Deploy the recording at ``path`` (replacing endpoints of the same ids); what it
    holds: ``{"endpoints", "jobs", "service", "recordedAt"}``. A damaged file is a
    one-line ``RecordingError`` and nothing is deployed."""
    if not speed > 0:
        raise ValueError(f"speed must be a number > 0, got {speed}")
    recording = fmt.read(Path(path))
    by_endpoint: dict[str, list[dict[str, Any]]] = {}
    for call in recording.calls:
        by_endpoint.setdefault(call["endpoint"], []).append(_as_job(call))
    for endpoint_id, calls in by_endpoint.items():
        if endpoint_id in emulator.jobs.endpoints:
            emulator.undeploy(endpoint_id)
        if calls[0]["kind"] == "http" and "method" in calls[0]["input"]:
            emulator.deploy_worker(
                SERVER,
                endpoint_id=endpoint_id,
                name=f"{endpoint_id} (replay)",
                type="LOAD_BALANCER",
                args=[str(Path(path).resolve()), endpoint_id, "0" if instant else str(speed)],
            )
            continue
        cold = 0.0 if instant else _ms(calls[0]["delayTimeMs"]) / 1000 / speed
        emulator.deploy(
            handler=Replayer(endpoint_id, calls, None if instant else speed),
            endpoint_id=endpoint_id,
            name=f"{endpoint_id} (replay)",
            workers={"max": 10, "idleTimeout": 60.0},
            scenario=f"cold-start:seconds={cold}" if cold >= COLD_START_MIN else None,
        )
    return {
        "endpoints": sorted(by_endpoint),
        "jobs": len(recording.calls),
        "service": recording.header.get("service"),
        "recordedAt": recording.header.get("recordedAt"),
    }
