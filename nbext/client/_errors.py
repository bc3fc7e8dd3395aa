"""Every error the client raises, and the one mapping from HTTP status to class
(the tree, and why none leaks the key: docs/architecture.md#the-clients-errors)."""

from __future__ import annotations

import builtins
from typing import Any, Protocol

from nbext.models import Health, JobResult, JobStatus

EXCERPT_CHARS = 300


class Redactor(Protocol):
    """What can mask a key in a text (``Secret``; kept abstract to avoid an import cycle)."""

    def redact(self, text: str) -> str: ...


class NbextError(Exception):
    """Base of every error nbext raises on purpose.

    ``reason`` is the message without the request it names (the whole message when the
    error names none): what a notebook or a program shows beside its own account of
    the job or endpoint, which ``endpoint_id`` and ``job_id`` give.
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint_id: str | None = None,
        job_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint_id = endpoint_id
        self.job_id = job_id
        self.reason = message if reason is None else reason

    def __str__(self) -> str:
        return self.message


class ConfigError(NbextError, ValueError):
    """The configuration is incomplete (no API key) or unreadable."""


class APIError(NbextError):
    """The service answered with an error status.

    ``status`` is the HTTP status (400 or 413 too when refused locally, ``sent`` is then
    False), ``method``, ``path`` and ``operation`` the request (``operation`` is the job
    interface's verb, ``run``, ``cancel``..., or the management one, ``pods.create``),
    ``body`` a short excerpt of the answer, ``code`` the service's own code for the error when its
    answer carries one (a ``code`` field; None otherwise), ``retry_after`` the seconds a
    ``Retry-After`` header asked to wait (429, 503), ``request_id`` the service's.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        method: str | None = None,
        path: str | None = None,
        body: str | None = None,
        endpoint_id: str | None = None,
        job_id: str | None = None,
        request_id: str | None = None,
        sent: bool = True,
        operation: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        reason: str | None = None,
    ) -> None:
        if reason is None and body:
            reason = body
        super().__init__(message, endpoint_id=endpoint_id, job_id=job_id, reason=reason)
        self.status = status
        self.method = method
        self.path = path
        self.operation = operation
        self.body = body
        self.code = code
        self.retry_after = retry_after
        self.request_id = request_id
        self.sent = sent


class BadRequest(APIError):
    """400: the request is malformed or a value is out of range; also REST v2's 422 (the
    body breaks the schema), which is v1's 400 for the same mistake."""


class Unauthorized(APIError):
    """401: the API key is missing, wrong, or lacks permission.

    ``key_sent`` is the masked key that was sent and where it came from
    (``rpa_…F42, from env``), None when the client had no key to name.
    """

    def __init__(self, message: str, *, key_sent: str | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.key_sent = key_sent


class NotFound(APIError):
    """404: unknown endpoint or job, or a job removed (purge, TTL, retention)."""


class Conflict(APIError):
    """409: e.g. cancelling a finished job, retrying one that did not fail.

    ``job_status`` is the state the job was in, for a job's cancel or retry: the client
    reads it (``/status``) right after the refusal, since the service's answer says it
    only in words. None for other conflicts, or when that read failed.
    """

    def __init__(self, message: str, *, job_status: JobStatus | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.job_status = job_status


class PayloadTooLarge(APIError):
    """413: the body is over the operation's limit (10 MB /run, 20 MB /runsync)."""


class RateLimited(APIError):
    """429: over the rate or concurrency limit; ``retry_after`` seconds, when given."""


class ServerError(APIError):
    """5xx: the service failed (a crashed worker, an outage)."""


class ConnectionError(NbextError, builtins.ConnectionError):
    """No usable answer: connection refused or reset, DNS failure, a broken response.

    ``maybe_sent`` tells whether the request may have reached the service: for /run
    and /runsync that means the job may exist although its id is unknown.
    """

    def __init__(self, message: str, *, maybe_sent: bool = False, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.maybe_sent = maybe_sent


class Timeout(NbextError, builtins.TimeoutError):
    """A deadline passed: a wait, a stream, or one request with no answer in time.

    For a job, ``last_status`` is the last state seen; the job itself goes on. A wait
    that ends with the job still IN_QUEUE also carries the endpoint's ``/health`` as it
    was then (``health``, None if it could not be read) and ``cause``, the likely reason
    in one line (also in the message): a notebook shows them without parsing the text.
    """

    def __init__(
        self,
        message: str,
        *,
        timeout: float | None = None,
        last_status: JobStatus | None = None,
        health: Health | None = None,
        cause: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)
        self.timeout = timeout
        self.last_status = last_status
        self.health = health
        self.cause = cause


class ChunksMissing(NbextError):
    """A stream lost chunks on the way and the job's output cannot give them back.

    Raised by ``stream()`` instead of yielding a stream with a hole in it: the chunks
    from ``first_missing`` (counting whole outputs the reader was given) on may be
    missing. The job itself is unaffected: ``wait()`` gives its outcome.
    """

    def __init__(self, message: str, *, endpoint_id: str, job_id: str, first_missing: int) -> None:
        super().__init__(message, endpoint_id=endpoint_id, job_id=job_id)
        self.first_missing = first_missing


class BudgetExceeded(NbextError):
    """A submission refused before it was sent: the jobs this client started have cost
    ``spent_usd``, which has reached ``budget_usd``. ``unpriced`` jobs ended with no
    cost known (no ``output.cost``, no price for their endpoint) and are not counted."""

    def __init__(
        self,
        message: str,
        *,
        budget_usd: float,
        spent_usd: float,
        unpriced: int,
        endpoint_id: str | None,
    ) -> None:
        super().__init__(message, endpoint_id=endpoint_id)
        self.budget_usd = budget_usd
        self.spent_usd = spent_usd
        self.unpriced = unpriced


class JobError(NbextError):
    """The job ended in a state other than COMPLETED; ``result`` is its /status answer,
    ``status`` (its final state) and ``error`` read from it."""

    def __init__(self, message: str, *, result: JobResult, endpoint_id: str | None) -> None:
        super().__init__(message, endpoint_id=endpoint_id, job_id=result.id)
        self.result = result
        self.status = result.status
        self.error = result.error


class JobFailed(JobError):
    """FAILED: the handler raised, or returned ``{"error": ...}``."""


class JobTimedOut(JobError):
    """TIMED_OUT: the job ran past its execution timeout and was stopped."""


class JobCancelled(JobError):
    """CANCELLED: someone cancelled the job before it ended."""


STATUS_CLASSES: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: BadRequest,
    429: RateLimited,
}

OUTCOME_CLASSES: dict[JobStatus, type[JobError]] = {
    JobStatus.FAILED: JobFailed,
    JobStatus.TIMED_OUT: JobTimedOut,
    JobStatus.CANCELLED: JobCancelled,
}


def class_for_status(status: int) -> type[APIError]:
    """5xx are ServerError, unknown codes APIError."""
    if status in STATUS_CLASSES:
        return STATUS_CLASSES[status]
    if 500 <= status <= 599:
        return ServerError
    return APIError


def outcome_error(
    result: JobResult, endpoint_id: str | None, secret: Redactor | None = None
) -> JobError:
    """The error for a job that ended FAILED, TIMED_OUT or CANCELLED.

    The job's error text is the handler's, and may quote anything it was given; the
    client's key is masked in it (and in the copy of the result the error carries).
    """
    cls = OUTCOME_CLASSES[result.status]
    if secret is not None and result.error:
        result = result.model_copy(update={"error": secret.redact(result.error)})
    detail = f": {excerpt(result.error)}" if result.error else ""
    where = f" on endpoint {endpoint_id!r}" if endpoint_id else ""
    return cls(
        f"job {result.id}{where} ended {result.status.value}{detail}",
        result=result,
        endpoint_id=endpoint_id,
    )


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of ``text``, on one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
