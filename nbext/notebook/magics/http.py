"""``%%runpod_http ENDPOINT METHOD PATH``: a request to a load-balancing endpoint from a cell.

The cell's body is the request's: JSON (sent as ``application/json``), or with
``--python`` an expression (a dict or a list is sent as JSON, a str as text, bytes as
they are); an empty cell sends no body. ``-H 'Name: value'`` adds a header, such as
worker affinity (``-H 'X-Runpod-Worker-Id: strict ID'``). The request goes through the
kernel's client (``endpoint.http()``), so its key, timeouts and errors are the client's.

While no answer has come, a thread looks at the endpoint (``endpoint.diagnose()``, as a
queued job's phases do): the panel counts the wait, names the workers starting and the
likely cause, and keeps how long the cold start took. An event stream is drawn as it
arrives; the answer is drawn by its type (JSON as records and a tree, pictures and sound
as media, text as text) and ends as static output. Ctrl-C abandons the request.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
from IPython.core.error import UsageError

from nbext.client import Endpoint, NbextError
from nbext.models import JobResult, JobStatus

from ..interrupts import Interrupted
from ..registry import JobRecord
from ..widgets.http import HttpPanel
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


def request_of(args: argparse.Namespace, cell: str, namespace: Any) -> dict[str, Any]:
    """httpx's ``method``, ``url``, ``headers`` and ``content`` of the cell; a mistake in
    any of them is a one-line UsageError, before anything is sent."""
    method = args.method.upper()
    if method not in METHODS:
        raise UsageError(f"METHOD must be one of {', '.join(METHODS)}, got {args.method!r}")
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
    return {"method": method, "url": args.path, "headers": headers, "content": content}


class _Watch(threading.Thread):
    """Looks at the endpoint while the request waits for its answer's head, and keeps the
    panel drawn until the answer has ended."""

    def __init__(self, endpoint: Endpoint, panel: HttpPanel) -> None:
        super().__init__(daemon=True, name=f"nbext-http-watch-{endpoint.id}")
        self.endpoint, self.panel = endpoint, panel
        self.stopped = threading.Event()

    def run(self) -> None:
        look = time.monotonic() + LOOK_AFTER
        while not self.stopped.wait(TICK):
            try:
                if self.panel.view.state == "IN_QUEUE" and time.monotonic() >= look:
                    found = self.endpoint.diagnose()
                    if not self.stopped.is_set():
                        self.panel.waited(found)
                    look = time.monotonic() + LOOK_EVERY
                else:
                    self.panel.refresh()
            except Exception:  # a look that failed: the request goes on, unexplained
                look = time.monotonic() + LOOK_EVERY

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive():
            self.join()


def read_answer(response: httpx.Response, panel: HttpPanel) -> Any:
    """The answer drawn as it comes, and what ``-o`` keeps: JSON's value, text, or bytes."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind == "text/event-stream":
        for piece in response.iter_text():
            panel.add_text(piece)
        return panel.view.text or ""
    data = response.read()
    if kind == "application/json" or kind.endswith("+json"):
        try:
            value = response.json()
        except ValueError:
            pass
        else:
            panel.set_answer(value)
            return value
    if not kind.startswith(("image/", "audio/", "video/")):
        try:
            text = data.decode(response.encoding or "utf-8")
        except (UnicodeDecodeError, LookupError):
            pass
        else:
            if text:
                panel.add_text(text)
            return text
    panel.set_answer(data)
    return data


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
    panel = HttpPanel(args.endpoint, shown, magics.connection.redact)
    panel.show()
    watch = _Watch(endpoint, panel)
    watch.start()
    try:
        with http, http.stream(**request) as response:
            status = f"{response.status_code} {response.reason_phrase}".strip()
            panel.answered(status, response.headers.get(WORKER_HEADER))
            value = read_answer(response, panel)
        watch.stop()
    except KeyboardInterrupt:
        watch.stop()
        panel.end("CANCELLED", note="stopped by Ctrl-C; the worker may still finish it")
        remember(magics, service.mode, panel)
        raise Interrupted(f"{shown} on {args.endpoint!r} abandoned") from None
    except (NbextError, httpx.HTTPError) as exc:
        watch.stop()
        # the client's message names the status, the path and the worker: said as it is
        said = str(exc) if isinstance(exc, NbextError) else f"{type(exc).__name__}: {exc}"
        panel.end("FAILED", error=said)
        remember(magics, service.mode, panel)
        if args.no_raise:
            return
        raise UsageError(one_line(magics.connection.redact(said))) from None
    panel.end("COMPLETED")
    remember(magics, service.mode, panel)
    store(magics, output_name, value)


def remember(magics: Magics, service: str, panel: HttpPanel) -> None:
    """The request as a row of ``%runpod jobs`` (``via`` says it was one): its wait for a
    worker as the queue delay, the rest as its run, so its cost is estimated as a job's."""
    view = panel.view
    cold_ms = round((view.cold_start_s or 0) * 1000)
    result = JobResult(
        id=f"req-{uuid.uuid4().hex[:12]}",
        status=JobStatus(view.state),
        delayTime=cold_ms,
        executionTime=max(0, round(view.elapsed_s * 1000) - cold_ms),
        workerId=view.worker,
        error=view.error,
    )
    record = JobRecord(result.id, view.endpoint_id, service, REQUEST_VIA + view.request)
    record.result = result
    magics.connection.registry.add(record)
