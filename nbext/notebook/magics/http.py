"""``%%runpod_http ENDPOINT METHOD PATH``: a request to a load-balancing endpoint, sent
through ``endpoint.http()`` (docs/behaviour.md#load-balancing-endpoints-in-the-notebook)."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
from IPython.core.error import UsageError

from nbext.client import BadRequest, Endpoint, NbextError
from nbext.models import JobResult, JobStatus
from nbext.models.recording import digest

from ..chat import EventReader
from ..errors import one_line
from ..interrupts import Interrupted
from ..phases import workers_text
from ..registry import JobRegistry, RequestRecord
from ..widgets.request import RequestPanel
from .common import Magics, check_name, explain, store
from .job import cell_value

if TYPE_CHECKING:
    import argparse

    from ..connection import Service

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
LOOK_AFTER = 2.0
"""Seconds without an answer before the endpoint is looked at (a job's phases' threshold)."""
LOOK_EVERY = 5.0
"""Least seconds between two looks while the request waits."""
TICK = 0.25
"""How often the panel is drawn again while the request goes on (its time counts up)."""


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
    """Until the request ends, redraws its panel, and while no answer has come, says there
    what it waits for (workers by state, the likely cause); then draws its end."""

    def __init__(self, endpoint: Endpoint, panel: RequestPanel, lock: threading.Lock) -> None:
        super().__init__(daemon=True, name=f"nbext-http-watch-{endpoint.id}")
        self.endpoint, self.panel, self.lock = endpoint, panel, lock
        self.stopped = threading.Event()
        self.started = time.monotonic()
        self.cold_since: float | None = None
        self.cold_ended: float | None = None

    def run(self) -> None:
        look = self.started + LOOK_AFTER
        while not self.stopped.wait(TICK):
            try:
                waiting = self.panel.status is None and time.monotonic() >= look
                found = self.endpoint.diagnose() if waiting else None
                with self.lock:
                    if found is not None and self.panel.status is None:
                        self.saw(found.health.workers if found.health else None, found.cause)
                        look = time.monotonic() + LOOK_EVERY
                    self.panel.tick()
            except Exception:  # a look that failed: the request goes on, unexplained
                look = time.monotonic() + LOOK_EVERY

    def saw(self, workers: Any, cause: str) -> None:
        if workers is None:
            return
        if workers.initializing and not workers.ready and self.cold_since is None:
            self.cold_since = time.monotonic()
        self.panel.waiting = "waiting for a worker · " + workers_text(workers, self.cold())
        self.panel.cause = cause
        self.panel.refresh(force=True)

    def cold(self) -> float | None:
        """Seconds the request waited for workers to start, as seen."""
        if self.cold_since is None:
            return None
        return (self.cold_ended or time.monotonic()) - self.cold_since

    def end(self, registry: JobRegistry, record: RequestRecord, *, shown_error: bool) -> None:
        """The panel's final state, and the request's record priced (its cold start left out)."""
        self.stopped.set()
        self.join()
        panel = self.panel
        record.seconds, record.waited = time.monotonic() - self.started, self.cold()
        record.status = panel.status if record.status is None else record.status
        record.worker = panel.worker
        if record.status is not None and record.status < 400:
            worked = round((record.seconds - (record.waited or 0)) * 1000)
            ran = JobResult(id=record.path, status=JobStatus.COMPLETED, executionTime=worked)
            with contextlib.suppress(NbextError):
                record.cost = self.endpoint.cost(ran)
        registry.requests.append(record)
        panel.cost = record.cost
        # an error that stops the cell is said by the error; with --no-raise, by the panel
        error = record.error or "" if shown_error else ""
        panel.end(record.seconds, status=record.status, error=error)


def decoded(data: str) -> Any:
    """An event's data as JSON's value where it is JSON, else the text."""
    try:
        return json.loads(data)
    except ValueError:
        return data


def read_answer(response: httpx.Response, panel: RequestPanel, lock: threading.Lock) -> Any:
    """The answer, drawn as it comes, and what ``-o`` keeps: a stream's events' data
    (JSON-decoded where JSON), JSON's value, the text, or media's bytes."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind == "text/event-stream":
        kept = []
        reader = EventReader()
        for piece in itertools.chain(response.iter_text(), ["\n\n"]):  # ends the last event
            for data in reader.feed(piece):
                kept.append(decoded(data))
                with lock:
                    panel.event(data)
        return kept
    response.read()
    value: Any = response.content
    if kind == "application/json" or kind.endswith("+json"):
        with contextlib.suppress(ValueError):
            value = response.json()
    elif not kind.startswith(("image/", "audio/", "video/")):
        with contextlib.suppress(UnicodeDecodeError, LookupError):
            value = response.content.decode(response.encoding or "utf-8")
    with lock:
        if isinstance(value, str):
            panel.text = value
        else:
            panel.output, panel.has_output = value, True
    return value


def body_digest(content: bytes | None) -> str | None:
    """A request body's digest: its JSON value's, as a job input's, else its text's."""
    if content is None:
        return None
    text = content.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):
        return digest(json.loads(text))
    return digest(text)


def http_client(magics: Magics, endpoint_id: str) -> tuple[Service, Endpoint, httpx.Client]:
    """The service, the endpoint and its (kept) httpx client; an endpoint that is
    unknown or takes jobs is a one-line UsageError naming what to use."""
    try:
        service = magics.connection.service()
        endpoint = service.client.endpoint(endpoint_id)
        return service, endpoint, endpoint.http()
    except BadRequest as exc:
        if exc.sent or exc.operation != "http":
            raise UsageError(one_line(explain(exc))) from None
        raise UsageError(
            f"endpoint {endpoint_id!r} is a queue endpoint: send it a job with "
            f"%%runpod_job {endpoint_id}; %%runpod_http is for load-balancing endpoints"
        ) from None
    except NbextError as exc:
        raise UsageError(one_line(explain(exc))) from None


def run_http(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """The cell magic's body, after its arguments were parsed."""
    __tracebackhide__ = True  # IPython shows an error raised here as the cell's own
    output_name = check_name(args.output)
    request = request_of(args, cell, magics.user_ns)
    service, endpoint, http = http_client(magics, args.endpoint)
    store(magics, output_name, None)
    shown = f"{request['method']} {args.path}"
    redact = magics.connection.redact
    panel = RequestPanel(args.endpoint, shown, redact=redact)
    panel.show()
    lock = threading.Lock()
    watch = _Watch(endpoint, panel, lock)
    watch.start()
    record = RequestRecord(args.endpoint, service.mode, request["method"], args.path)
    record.replayed = service.replays(args.endpoint)
    record.input_digest = body_digest(request["content"])
    panel.provenance = record.provenance
    value = None
    try:
        with http.stream(**request, timeout=args.timeout or httpx.USE_CLIENT_DEFAULT) as response:
            with lock:
                watch.cold_ended = time.monotonic() if watch.cold_since else None
                panel.answered(response)
            value = read_answer(response, panel, lock)
    except KeyboardInterrupt:
        record.error = "stopped by Ctrl-C; the worker may still finish the request"
        panel.note = record.error
        raise Interrupted(f"{shown} on {args.endpoint!r} abandoned") from None
    except NbextError as exc:
        record.status, record.error = getattr(exc, "status", None), redact(str(exc))
        if not args.no_raise:
            raise exc.with_traceback(None) from None  # its message is the whole story
    except httpx.HTTPError as exc:
        record.error = redact(f"{type(exc).__name__}: {exc or 'no answer'}")
        if isinstance(exc, httpx.TimeoutException) and args.timeout:
            record.error = f"no answer within --timeout {args.timeout:g} s"
        if not args.no_raise:
            raise type(exc)(f"{shown} on {args.endpoint!r}: {record.error}") from None
    finally:
        watch.end(magics.connection.registry, record, shown_error=args.no_raise)
    store(magics, output_name, value)
