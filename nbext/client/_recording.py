"""``Recording``: the jobs a client submits and its load-balancing requests, as the flows
and ``http()``'s hooks see them, kept for replay (docs/behaviour.md#recordings)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from nbext._version import __version__
from nbext.models import FINAL_STATES, JobResult, StreamResponse
from nbext.models import recording as fmt

from ._calls import Call
from ._config import Secret

FINAL = {status.value for status in FINAL_STATES}
KEPT_HEADERS = ("content-type", "content-encoding", "cache-control", "x-request-id")
"""The answer headers a replay gives back; never a key, a cookie or a hop's own."""
Pricer = Callable[[str, JobResult], float | None]
"""A call's cost in dollars, as ``job.cost()`` works it out (the client's)."""


class Recording:
    """Jobs submitted while it records; ``stop()`` writes them to ``path``.

    Start one with ``client.record(path)`` (``with`` stops it); ``other.recording =
    recording`` records a second client's jobs into the same file. Thread-safe: a map's
    jobs report from its threads.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        service: Literal["cloud", "local"],
        secret: Secret,
        price: Pricer | None = None,
    ) -> None:
        self.path = Path(path).expanduser().resolve()
        if not self.path.parent.is_dir():
            raise ValueError(f"cannot record to {self.path}: {self.path.parent} is no folder")
        self.service = service
        self._secret = secret
        self._price = price
        """An endpoint's price, for the cost of calls the service did not price itself."""
        self._lock = threading.Lock()
        self._jobs: dict[str, dict[str, Any]] = {}
        self._sent: dict[str, float] = {}
        self._queued: dict[str, int] = {}
        """When each job was last read waiting, in ms after its submission."""
        self._batches: dict[str, list[Any]] = {}
        """The inputs of each batch created while it records, in the service's order."""
        self.recording = True
        self.kept = 0
        """How many calls ``stop()`` wrote."""

    def submitted(self, call: Call, job_id: str, sent_at: float) -> None:
        """``call`` (/run or /runsync) was sent at ``sent_at`` and made ``job_id``."""
        job_input = json.loads(call.body or b"{}").get("input")
        self._add(job_id, sent_at, "job", call.endpoint_id, call.operation, job_input)

    def _add(
        self,
        job_id: str,
        sent_at: float,
        kind: str,
        endpoint_id: str,
        call: str,
        value: Any,
        **known: Any,
    ) -> bool:
        """A call's line, filled in as it is seen; False if it records no more."""
        line = {"kind": kind, "endpoint": endpoint_id, "call": call, "input": value}
        line |= {"jobId": job_id, "timeline": [], "stream": []}
        line |= dict.fromkeys(("workerId", "status", "output", "error", "costUsd"))
        line |= {"delayTimeMs": None, "executionTimeMs": None, **known}
        with self._lock:
            if self.recording and job_id not in self._jobs:
                self._sent[job_id], self._jobs[job_id] = sent_at, line
                return True
        return False

    def seen(self, result: JobResult, now: float) -> None:
        """A state of a job, read at ``now``: the timeline grows when the state changes. A
        final one is kept even when /stream said first that the job ended (``wait()``)."""
        with self._lock:
            job = self._jobs.get(result.id)
            if job is None or (job["status"] in FINAL and not result.status.is_final):
                return
            self._state(job, result.status.value, now)
            if result.status.is_final:
                job.update(
                    workerId=result.worker_id or job["workerId"],
                    output=result.output,
                    error=result.error,
                    delayTimeMs=result.delay_time,
                    executionTimeMs=result.execution_time,
                )

    def streamed(self, job_id: str, answer: StreamResponse, now: float) -> None:
        """A /stream answer of ``job_id``, read at ``now``: its chunks and its state (a job
        only streamed is never read whole: the emulator makes its output of the chunks)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job["status"] in FINAL:
                return
            at = self._ms(job_id, now)
            job["stream"].extend([at, chunk.output] for chunk in answer.stream)
            self._state(job, answer.status.value, now)

    def batch(self, batch_id: str, inputs: list[Any]) -> None:
        """``inputs`` were added to ``batch_id``, after those before: its requests' order."""
        with self._lock:
            if self.recording:
                self._batches.setdefault(batch_id, []).extend(inputs)

    def batched(self, endpoint_id: str, batch_id: str, index: int, request: JobResult) -> None:
        """Request ``index`` of ``batch_id`` was read to have ended: kept as the job it
        ran as (a replay runs a batch's requests as jobs of its endpoint)."""
        with self._lock:
            inputs = self._batches.get(batch_id, [])
        if index < len(inputs):
            self._add(
                request.id,
                0.0,
                "job",
                endpoint_id,
                "batch",
                inputs[index],
                batch=batch_id,
                workerId=request.worker_id,
                status=request.status.value,
                output=request.output,
                error=request.error,
                delayTimeMs=request.delay_time,
                executionTimeMs=request.execution_time,
            )

    def _state(self, job: dict[str, Any], status: str, now: float) -> None:
        if status == "IN_QUEUE":
            self._queued[job["jobId"]] = self._ms(job["jobId"], now)
        if job["status"] != status:
            job["timeline"].append([self._ms(job["jobId"], now), status])
            job["status"] = status

    def _ms(self, job_id: str, now: float) -> int:
        return round((now - self._sent[job_id]) * 1000)

    def stop(self) -> int:
        """Stop recording and write the file (again, if stopped before); returns how many
        calls it kept: the jobs that ended while it recorded."""
        with self._lock:
            self.recording = False
            ended = [job for job in self._jobs.values() if job["status"] in FINAL]
        for call in ended:
            if call["executionTimeMs"] is None and call["timeline"]:  # only streamed
                # it started after it was last read waiting: a /stream read finds it running
                # only with its first chunk, so its first read running is too late a start
                times = {status: at for at, status in call["timeline"]}
                started = times.get("IN_PROGRESS", call["timeline"][0][0])
                call["delayTimeMs"] = self._queued.get(call["jobId"], started)
                call["executionTimeMs"] = call["timeline"][-1][0] - call["delayTimeMs"]
            call["costUsd"] = self._cost(call)
        header = {
            "nbext": __version__,
            "service": self.service,
            "recordedAt": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        # the key, should an input or output hold it, is masked in every line
        lines = json.loads(self._secret.redact(json.dumps(ended, ensure_ascii=False)))
        for line in lines:
            line["inputDigest"] = fmt.digest(line["input"])
        fmt.write(self.path, header, lines)
        self.kept = len(ended)
        return self.kept

    def _cost(self, call: dict[str, Any]) -> float | None:
        if self._price is None:
            return None
        ended = {"id": call["jobId"], "status": "COMPLETED", "output": call.get("output")}
        ended["executionTime"] = call["executionTimeMs"]
        return self._price(call["endpoint"], JobResult.model_validate(ended))

    def tap(
        self,
        endpoint_id: str,
        path: str,
        response: httpx.Response,
        sent_at: float,
        now: Callable[[], float],
    ) -> None:
        """``response`` of a load-balancing endpoint to a request sent at ``sent_at``: its
        body is read through a tap that keeps each chunk with its time on ``now``."""
        request, headers = response.request, response.headers
        job_id = f"http-{id(response):x}"
        asked = {"method": request.method, "path": path, "body": fmt.text_of(request.content)}
        kept = {k: v for k, v in headers.items() if k in KEPT_HEADERS}
        worker = headers.get("x-runpod-worker-id")
        if self._add(
            job_id,
            sent_at,
            "http",
            endpoint_id,
            "http",
            asked,
            workerId=worker,
            status="IN_PROGRESS",
            timeline=[[round((now() - sent_at) * 1000), "IN_PROGRESS"]],  # its headers came
            httpStatus=response.status_code,
            headers=kept,
        ):
            response.stream = _Tap(response.stream, self, job_id, now)

    def chunk(self, job_id: str, data: bytes | None, now: float) -> None:
        """A chunk of an answer's body, read at ``now``; None: the body has ended, or was
        closed (the ``openai`` package closes a stream at its ``[DONE]``): it is as read."""
        with self._lock:
            call = self._jobs[job_id]
            at = self._ms(job_id, now)
            if call["status"] == "COMPLETED":
                return
            if data is None:
                call["status"] = "COMPLETED"
                call["executionTimeMs"] = at
            elif data:
                if call["delayTimeMs"] is None:
                    call["delayTimeMs"] = at  # the first byte: queue and cold start behind
                call["stream"].append([at, fmt.text_of(data)])

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Tap(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An answer's body as it was, each chunk told to the recording as it is read."""

    def __init__(
        self, stream: Any, recording: Recording, job_id: str, now: Callable[[], float]
    ) -> None:
        self._stream, self._recording, self._job_id, self._now = stream, recording, job_id, now

    def __iter__(self) -> Iterator[bytes]:
        for data in self._stream:
            self._recording.chunk(self._job_id, data, self._now())
            yield data
        self._recording.chunk(self._job_id, None, self._now())

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for data in self._stream:
            self._recording.chunk(self._job_id, data, self._now())
            yield data
        self._recording.chunk(self._job_id, None, self._now())

    def close(self) -> None:
        self._recording.chunk(self._job_id, None, self._now())
        self._stream.close()

    async def aclose(self) -> None:
        self._recording.chunk(self._job_id, None, self._now())
        await self._stream.aclose()
