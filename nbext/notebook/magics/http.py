"""``%%runpod_http ENDPOINT METHOD PATH``: a request to a load-balancing endpoint from a cell.

The request goes through the kernel's client (``endpoint.http()``), so its key, timeouts
and errors are the client's, and is drawn in a job's panel, the one way a call is drawn
waiting, running and ended: while no answer has come, a thread looks at the endpoint
(``endpoint.diagnose()``) and gives the panel the phase a queued job would have (the
workers starting, the likely cause, the cold start); then the status and the worker; an
event stream as it arrives; the answer by its type (JSON, media, text). Ctrl-C abandons
the request; it is kept among the kernel's jobs (``%runpod jobs``, ``why``).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
from IPython.core.error import UsageError

from nbext.client import Diagnosis, Endpoint, NbextError, Phase
from nbext.models import JobResult, JobStatus, StreamChunk

from ..interrupts import Interrupted
from ..registry import JobRecord
from ..widgets import JobPanel
from .common import Magics, check_name, one_line, store, usage_errors
from .job import cell_value
from .jobs import REQUEST_VIA

if TYPE_CHECKING:
    import argparse

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
LOOK_AFTER = 2.0
"""Seconds without an answer before the endpoint is looked at (a job's phases' threshold)."""
LOOK_EVERY = 5.0
"""Least seconds between two looks while the request waits."""
TICK = 0.25
"""How often the panel is drawn again while the request goes on: its count goes up, and
text that came within the throttle's interval is shown."""
WORKER_HEADER = "x-runpod-worker-id"
STOP_HINT = "interrupt the kernel (■) to stop waiting for the answer"


def request_of(args: argparse.Namespace, cell: str, namespace: Any) -> dict[str, Any]:
    """httpx's ``method``, ``url``, ``headers`` and ``content`` of the cell; a mistake in
    any of them is a one-line UsageError, before anything is sent."""
    if not args.path.startswith("/"):
        raise UsageError(f"PATH is the worker's path and starts with '/', got {args.path!r}")
    headers: dict[str, str] = {}
    for header in args.header or []:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            raise UsageError(f"-H takes 'Name: value', got {header!r}")
        headers[name.strip()] = value.strip()
    content: bytes | None = None
    if cell.strip():
        value = cell_value(cell, python=args.python, namespace=namespace)
        if isinstance(value, bytes | str):
            content = value.encode() if isinstance(value, str) else value
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        else:
            try:
                content = json.dumps(value).encode()
            except (TypeError, ValueError) as exc:
                raise UsageError(one_line(f"--python: the value is not JSON: {exc}")) from None
            headers.setdefault("Content-Type", "application/json")
    return {"method": args.method, "url": args.path, "headers": headers, "content": content}


class _Watch(threading.Thread):
    """While no answer has come, looks at the endpoint and gives the panel the phase a
    queued job's would have (workers by state, the likely cause, the cold start so far);
    while the answer streams, redraws the panel (its run time, text the throttle held)."""

    def __init__(self, endpoint: Endpoint, panel: JobPanel, lock: threading.Lock) -> None:
        super().__init__(daemon=True, name=f"nbext-http-watch-{endpoint.id}")
        self.endpoint, self.panel, self.lock = endpoint, panel, lock
        self.stopped = threading.Event()
        self.waiting = True
        self.started = time.monotonic()
        self.cold_since: float | None = None

    def run(self) -> None:
        look = self.started + LOOK_AFTER
        while not self.stopped.wait(TICK):
            try:
                found = (
                    self.endpoint.diagnose() if self.waiting and time.monotonic() >= look else None
                )
                with self.lock:
                    if found is not None and self.waiting:
                        self.saw(found)
                        look = time.monotonic() + LOOK_EVERY
                    self.panel.tick()
            except Exception:  # a look that failed: the request goes on, unexplained
                look = time.monotonic() + LOOK_EVERY

    def saw(self, found: Diagnosis) -> None:
        workers, now = found.health.workers if found.health else None, time.monotonic()
        if workers and workers.initializing and not workers.ready and self.cold_since is None:
            self.cold_since = now
        waiting = JobResult(id=self.panel.job_id or "-", status=JobStatus.IN_QUEUE)
        cause = found.cause if workers else None
        self.panel.phase = Phase(waiting, now - self.started, found.health, cause, self.cold())
        self.panel.refresh(force=True)

    def cold(self) -> float | None:
        return time.monotonic() - self.cold_since if self.cold_since is not None else None

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive():
            self.join()


def read_answer(response: httpx.Response, panel: JobPanel, lock: threading.Lock) -> Any:
    """The answer, text drawn as it comes (an event stream piece by piece), and what
    ``-o`` keeps: JSON's value, the text, or media's bytes."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    pieces = response.iter_text() if kind == "text/event-stream" else [response.read()]
    for piece in pieces:
        if isinstance(piece, str):
            with lock:
                panel.add_chunk(StreamChunk(output=piece))
    if kind == "text/event-stream":
        return panel.text
    if kind == "application/json" or kind.endswith("+json"):
        with contextlib.suppress(ValueError):
            return response.json()
    if not kind.startswith(("image/", "audio/", "video/")):
        with contextlib.suppress(UnicodeDecodeError, LookupError):
            text = response.content.decode(response.encoding or "utf-8")
            with lock:
                panel.add_chunk(StreamChunk(output=text))
            return text
    return response.content


def run_http(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """The cell magic's body, after its arguments were parsed."""
    output_name = check_name(args.output)
    request = request_of(args, cell, magics.user_ns)
    with usage_errors():
        service = magics.connection.service()
    endpoint = service.client.endpoint(args.endpoint)
    with usage_errors(f"endpoint {args.endpoint!r}"):
        http = endpoint.http()
    store(magics, output_name, None)
    shown = f"{request['method']} {args.path}"
    panel = JobPanel(args.endpoint, stream=True, via=shown, redact=magics.connection.redact)
    panel.hint = STOP_HINT
    panel.show()
    panel.start(f"req-{uuid.uuid4().hex[:12]}")
    lock = threading.Lock()
    watch = _Watch(endpoint, panel, lock)
    watch.start()
    ended: dict[str, Any] = {"status": JobStatus.COMPLETED}
    value = None
    try:
        with http, http.stream(**request) as response:
            worker = response.headers.get(WORKER_HEADER)
            with lock:
                watch.waiting = False
                panel.via = f"{shown} · {response.status_code} {response.reason_phrase}"
                running = JobResult(id=panel.job_id, status=JobStatus.IN_PROGRESS, workerId=worker)
                panel.phase = Phase(running, cold_start=watch.cold())
                panel.set_result(running)
            value = read_answer(response, panel, lock)
        if not isinstance(value, str):
            ended["output"] = value
    except KeyboardInterrupt:
        ended = {"status": JobStatus.CANCELLED}
        panel.note = "stopped by Ctrl-C; the worker may still finish the request"
        raise Interrupted(f"{shown} on {args.endpoint!r} abandoned") from None
    except (NbextError, httpx.HTTPError) as exc:
        # the client's message names the status, the path and the worker: said as it is
        said = str(exc) if isinstance(exc, NbextError) else f"{type(exc).__name__}: {exc}"
        ended = {"status": JobStatus.FAILED, "error": said}
        if not args.no_raise:
            raise UsageError(one_line(magics.connection.redact(said))) from None
    finally:
        watch.stop()
        end(magics, service.mode, shown, panel, watch, ended)
    store(magics, output_name, value)


def end(
    magics: Magics, service: str, shown: str, panel: JobPanel, watch: _Watch, ended: dict[str, Any]
) -> None:
    """The panel's final state, and the request as a row of ``%runpod jobs`` (``via``
    says it was one): its cold start as the queue delay, the rest as its run, so its cost
    is estimated as a job's."""
    cold_ms = round((watch.cold() or 0) * 1000)
    total_ms = round((time.monotonic() - watch.started) * 1000)
    worker = panel.phase.worker_id if panel.phase else None
    result = JobResult(
        id=panel.job_id,
        delayTime=cold_ms,
        executionTime=total_ms - cold_ms,
        workerId=worker,
        **ended,
    )
    panel.set_result(result)
    record = JobRecord(result.id, panel.endpoint_id, service, REQUEST_VIA + shown)
    record.result = result
    magics.connection.registry.add(record)
