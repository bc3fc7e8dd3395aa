"""The service's OpenAI-compatible routes, as jobs on an endpoint: how a request becomes a
job and its outcome an HTTP answer (the table: docs/openai.md), so the HTTP layer stays
thin."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from nbext.models import JobStatus, JobSubmission

from .job_service import JobService
from .jobs import UNSET, Job

S = JobStatus

ROUTES: dict[str, tuple[str, str]] = {
    "chat/completions": ("POST", "/v1/chat/completions"),
    "completions": ("POST", "/v1/completions"),
    "models": ("GET", "/v1/models"),
}
"""Path under ``/openai/v1/`` -> (method, the ``openai_route`` the worker reads)."""

SSE_STARTS = ("data:", "event:", "id:", "retry:", ":")
"""How a Server-Sent Events text can begin: a line of one of SSE's fields, or a comment."""


@dataclass(frozen=True)
class Reply:
    """A complete HTTP answer: status, JSON body, and whether a client may re-send."""

    status: int
    body: dict[str, Any]
    retry: bool = True

    @property
    def header_values(self) -> dict[str, str]:
        return {} if self.retry else {"x-should-retry": "false"}


def error(status: int, message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


def _refused(status: int, kind: str, message: str, retry: bool = True) -> Reply:
    return Reply(status, error(status, message, kind), retry)


def route_of(path: str, method: str, mount: str = "/openai") -> str:
    """The ``openai_route`` for ``path`` (after ``{mount}/``), or a ``RouteRefused``
    naming the paths as the client sees them (``llm-lb`` serves them at ``/v1``)."""
    version, _, rest = path.partition("/")
    known = ROUTES.get(rest) if version == "v1" else None
    if known is None:
        names = ", ".join(f"{m} {mount}/v1/{p}" for p, (m, _) in ROUTES.items())
        message = f"no OpenAI route {mount}/{path}; the routes are {names}"
        raise RouteRefused(_refused(404, "NotFoundError", message))
    expected, route = known
    if method != expected:
        message = f"{mount}/{path} takes {expected}, not {method}"
        raise RouteRefused(_refused(405, "BadRequestError", message))
    return route


class RouteRefused(Exception):
    """A request refused before any job was made; ``reply`` is the answer to send."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body["error"]["message"])
        self.reply = reply


def submit(service: JobService, endpoint_id: str, route: str, body: Any) -> Job:
    """Queue the job for one OpenAI request (``body`` as sent; ``{}`` for ``models``)."""
    if route != "/v1/models" and not isinstance(body, dict):
        message = "the request body must be a JSON object"
        raise RouteRefused(_refused(400, "BadRequestError", message))
    if isinstance(body, dict) and not isinstance(body.get("stream", False), bool | None):
        message = f"stream must be true or false, got {body['stream']!r}"
        raise RouteRefused(Reply(400, error(400, message, "BadRequestError", "stream")))
    payload = {"openai_route": route, "openai_input": body if body is not None else {}}
    return service.submit(endpoint_id, JobSubmission(input=payload), sync=True)


def abandon(service: JobService, job: Job) -> None:
    """Cancel ``job`` if it has not ended: nobody is left to read its answer."""
    if job.status in (S.IN_QUEUE, S.IN_PROGRESS) and job.removed is None:
        service.cancel(job.endpoint_id, job.id)


def wants_stream(body: Any) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


async def reply(service: JobService, job: Job, wait_s: float) -> Reply:
    """The answer of a request without ``stream``: once the job ends, or after ``wait_s``."""
    await service.wait_final(job, wait_s)
    return _ended(service, job, wait_s)


async def opening(service: JobService, job: Job, wait_s: float) -> Reply | None:
    """For a streaming request: an error answer to send instead of a stream, or None
    once the handler's first chunk is SSE text (the stream may start)."""
    await job.signal.wait_for(service.clock, lambda: job.over or bool(job.chunks), wait_s)
    if job.chunks:
        first = job.chunks[0]["output"]
        if isinstance(first, str) and first.lstrip().startswith(SSE_STARTS):
            return None
        return _answer(service, job, first, streaming=True)
    return _ended(service, job, wait_s, streaming=True)


async def events(service: JobService, job: Job) -> AsyncIterator[str]:
    """The job's SSE text as the handler yields it; an error event if the job fails or
    yields something else. Runs until the job ends (its execution timeout bounds it)."""
    cursor = 0
    while True:
        while cursor < len(job.chunks):
            output = job.chunks[cursor]["output"]
            cursor += 1
            if not isinstance(output, str):
                abandon(service, job)
                yield _event(error(502, _not_sse(job, output), "BadGatewayError"))
                return
            yield output
        if job.removed is not None:
            yield _event(error(404, f"job {job.id} was removed ({job.removed})", "NotFoundError"))
            return
        if job.status.is_final:
            if job.status is not S.COMPLETED:
                yield _event(_job_failed(job).body)
            return
        await job.signal.wait(service.clock, 3600.0)


def _event(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"


def _ended(service: JobService, job: Job, wait_s: float, streaming: bool = False) -> Reply:
    """The answer once the wait is over: the job's first output or why it failed; or it
    was removed, or is still not ended (then cancelled: nobody waits)."""
    if job.removed is not None:
        message = f"job {job.id} was removed before it finished ({job.removed})"
        return _refused(404, "NotFoundError", message, retry=False)
    if job.status is S.COMPLETED:
        return _answer(service, job, _first_output(job), streaming)
    if job.status.is_final:
        return _job_failed(job)
    state = job.status.value
    abandon(service, job)
    cause = (
        "no worker took it; the endpoint's /health says why"
        if state == S.IN_QUEUE.value
        else "its handler did not finish"
    )
    message = f"job {job.id} was still {state} after {wait_s:g} s ({cause}); it was cancelled"
    return _refused(504, "TimeoutError", message, retry=False)


def _job_failed(job: Job) -> Reply:
    if job.status is S.CANCELLED:
        return _refused(409, "CancelledError", f"job {job.id} was cancelled", retry=False)
    if job.status is S.TIMED_OUT:
        message = f"job {job.id} exceeded its execution timeout" + _detail(job)
        return _refused(504, "TimeoutError", message, retry=False)
    message = f"the endpoint's handler failed on job {job.id}" + _detail(job)
    return _refused(500, "InternalServerError", message, retry=False)


def _detail(job: Job) -> str:
    return f": {job.error}" if job.error else ""


def _first_output(job: Job) -> Any:
    """The handler's answer: the first value a generator yielded, or what it returned."""
    output = job.output
    if output is UNSET or output is None:
        return job.chunks[0]["output"] if job.chunks else None
    if isinstance(output, list) and output:
        return output[0]
    return output


def _answer(service: JobService, job: Job, value: Any, streaming: bool) -> Reply:
    """``value`` (the handler's answer object) as an HTTP answer; a job whose answer is
    not one is cancelled if it still runs (nobody will read it)."""
    if isinstance(value, dict):
        err = value.get("error")
        if isinstance(err, dict) or value.get("object") == "error":
            return _error_answer(err if isinstance(err, dict) else value)
        if isinstance(value.get("object"), str) and not streaming:
            return Reply(200, value)
    abandon(service, job)
    message = _not_sse(job, value) if streaming else _not_openai(job, value)
    return _refused(502, "BadGatewayError", message, retry=False)


def _error_answer(err: dict[str, Any]) -> Reply:
    code = err.get("code")
    status = code if isinstance(code, int) and 400 <= code <= 599 else 400
    message = str(err.get("message") or "the worker answered an error without a message")
    kind = str(err.get("type") or "BadRequestError")
    param = err.get("param") if isinstance(err.get("param"), str) else None
    return Reply(status, error(status, message, kind, param))


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:5]) or "no keys"
        return f"an object with {keys}"
    return "nothing" if value is None else f"a {type(value).__name__}"


def _not_openai(job: Job, value: Any) -> str:
    return (
        f"endpoint {job.endpoint_id}'s handler answered {_shape(value)}, not an OpenAI "
        "response object; an endpoint serves /openai/v1 only if its handler reads "
        "job['input']['openai_route'] and yields OpenAI's shapes (docs/openai.md)"
    )


def _not_sse(job: Job, value: Any) -> str:
    return (
        f"endpoint {job.endpoint_id}'s handler yielded {_shape(value)} for a streaming "
        "request, where Server-Sent Events text ('data: {...}\\n\\n') is expected; an "
        "endpoint serves /openai/v1 only if its handler reads job['input']['openai_route'] "
        "(docs/openai.md)"
    )
