"""``Recording``: the jobs a client submits, as the flows see them, kept for replay.

The flows tell their context of every submission, state and stream chunk (``Context``);
a context with a recording hands them on here, so a recording sees exactly what the
client did, whichever driver, map or handle did it. The file's format is
``nbext.models.recording`` (docs/behaviour.md#recordings).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from nbext._version import __version__
from nbext.models import FINAL_STATES, JobResult, StreamResponse
from nbext.models import recording as fmt

from ._calls import Call
from ._config import Secret

FINAL = {status.value for status in FINAL_STATES}


class Recording:
    """Jobs submitted while it records; ``stop()`` writes them to ``path``.

    Start one with ``client.record(path)`` (``with`` stops it); ``other.recording =
    recording`` records a second client's jobs into the same file. Thread-safe: a map's
    jobs report from its threads.
    """

    def __init__(
        self, path: str | os.PathLike[str], service: Literal["cloud", "local"], secret: Secret
    ) -> None:
        self.path = Path(path).expanduser().resolve()
        if not self.path.parent.is_dir():
            raise ValueError(f"cannot record to {self.path}: {self.path.parent} is no folder")
        self.service = service
        self._secret = secret
        self._lock = threading.Lock()
        self._jobs: dict[str, dict[str, Any]] = {}
        self._sent: dict[str, float] = {}
        self.recording = True
        self.kept = 0
        """How many calls ``stop()`` wrote."""

    def submitted(self, call: Call, job_id: str, sent_at: float) -> None:
        """``call`` (/run or /runsync) was sent at ``sent_at`` and made ``job_id``."""
        body = json.loads(call.body or b"{}")
        job_input = body.get("input")
        with self._lock:
            if not self.recording:
                return
            self._sent[job_id] = sent_at
            self._jobs[job_id] = {
                "kind": "job",
                "endpoint": call.endpoint_id,
                "call": call.operation,
                "input": job_input,
                "inputDigest": fmt.digest(job_input),
                "jobId": job_id,
                "workerId": None,
                "status": None,
                "timeline": [],
                "stream": [],
                "output": None,
                "error": None,
                "delayTimeMs": None,
                "executionTimeMs": None,
                "costUsd": None,
            }

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

    def _state(self, job: dict[str, Any], status: str, now: float) -> None:
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

    def __enter__(self) -> Recording:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
