"""The job interface's calls as data, and the reading of their answers. Pure: no I/O
(docs/architecture.md#a-job-call-through-the-client)."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from nbext.models import (
    RUN_BODY_LIMIT,
    RUNSYNC_BODY_LIMIT,
    RUNSYNC_WAIT_MAX_MS,
    RUNSYNC_WAIT_MIN_MS,
    JobPolicy,
    JobSubmission,
    S3Config,
)

from ._config import Secret
from ._errors import (
    APIError,
    BadRequest,
    ConnectionError,
    NbextError,
    PayloadTooLarge,
    RateLimited,
    Timeout,
    Unauthorized,
    class_for_status,
    excerpt,
)
from ._retry import Kind, never_sent, parse_retry_after

M = TypeVar("M", bound=BaseModel)
Seconds = float | int | dt.timedelta


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer read whole (``_transport``'s senders make it)."""

    status_code: int
    reason_phrase: str
    headers: httpx.Headers
    content: bytes
    charset: str | None

    @property
    def text(self) -> str:
        return self.content.decode(self.charset or "utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


Answer = Reply | httpx.Response
"""What the client reads of an HTTP response: tests that drive flows by hand hand an
``httpx.Response``, which reads the same."""


@dataclass(frozen=True)
class Call:
    """One HTTP request, relative to ``serverless_url`` (``base_url`` if ``management``).

    ``hold``: how long the service may keep the request open (/runsync's and /stream's
    ``wait``), which the read timeout adds a margin to. Management calls carry their query
    in ``path`` and name what they are about in ``subject``, for their messages.
    """

    method: str
    path: str
    operation: str
    kind: Kind
    endpoint_id: str
    job_id: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    hold: float = 0.0
    management: bool = False
    subject: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    """Request headers of this call's own (``Accept``, ``Last-Event-ID``), over the defaults."""

    def describe(self) -> str:
        """``POST echo/run``: for messages and logs (never holds the key)."""
        return f"{self.method} {self.path}"


def segment(value: str, what: str) -> str:
    """``value`` as one URL path segment, so an id can never reach another path."""
    if not isinstance(value, str) or not value:
        reason = f"{what} must be a non-empty string, got {value!r}"
        raise BadRequest(reason, status=400, sent=False, reason=reason)
    if value.isascii() and value.replace("-", "").replace("_", "").isalnum():
        return value  # ids as the service makes them: nothing to quote
    if value in (".", ".."):  # dot segments would be resolved away by the server
        return value.replace(".", "%2E")
    return quote(value, safe="")


def job_call(operation: str, method: str, endpoint_id: str, job_id: str, **kw: Any) -> Call:
    """``/status``, ``/stream``, ``/cancel``, ``/retry`` of one job."""
    kind = Kind.SUBMIT if operation == "retry" else Kind.IDEMPOTENT
    path = f"{segment(endpoint_id, 'endpoint id')}/{operation}/{segment(job_id, 'job id')}"
    return Call(method, path, operation, kind, endpoint_id, job_id, **kw)


def endpoint_call(operation: str, method: str, endpoint_id: str, **kw: Any) -> Call:
    """``/run``, ``/runsync``, ``/purge-queue``, ``/health`` of an endpoint."""
    kind = Kind.SUBMIT if operation in ("run", "runsync") else Kind.IDEMPOTENT
    path = f"{segment(endpoint_id, 'endpoint id')}/{operation}"
    return Call(method, path, operation, kind, endpoint_id, **kw)


def stream_call(endpoint_id: str, job_id: str, wait: float) -> Call:
    """A long-poll of ``/stream``: the service answers at the next chunk or job end."""
    wait_ms = max(0, int(wait * 1000))
    return job_call(
        "stream", "GET", endpoint_id, job_id, params={"wait": str(wait_ms)}, hold=wait_ms / 1000
    )


def runsync_call(endpoint_id: str, body: bytes, wait: float) -> Call:
    """``/runsync?wait=ms``, with ``wait`` clamped to the interface's 1..300 s."""
    wait_ms = min(RUNSYNC_WAIT_MAX_MS, max(RUNSYNC_WAIT_MIN_MS, int(wait * 1000)))
    return endpoint_call(
        "runsync",
        "POST",
        endpoint_id,
        params={"wait": str(wait_ms)},
        body=body,
        hold=wait_ms / 1000,
    )


# ---- submissions ------------------------------------------------------------------------


def to_ms(value: Seconds | None, name: str) -> int | None:
    """Seconds (or a timedelta) as whole milliseconds, the unit of the wire."""
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, dt.timedelta) else value
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
    ):
        reason = f"{name} must be a number of seconds, got {value!r}"
        raise BadRequest(reason, status=400, sent=False, reason=reason)
    return round(seconds * 1000)


class JobOptionWords(TypedDict, total=False):
    """``JobOptions``' fields as keywords of a submitting method: ``run(input, ttl=60)``
    is ``run(input, JobOptions(ttl=60))``."""

    webhook: str | None
    execution_timeout: Seconds | None
    ttl: Seconds | None
    low_priority: bool
    s3_config: S3Config | Mapping[str, Any] | None


@dataclass(frozen=True)
class JobOptions:
    """How a job is submitted, besides its input: one value carried from the caller (a
    method, a magic's options, a map of many jobs) to the body of /run or /runsync.

    ``webhook``: a URL the service POSTs the job's result to when it ends.
    ``execution_timeout``: the longest the job may run, in seconds (or a timedelta);
    default: the endpoint's. ``ttl``: how long the job lives from its submission, queue
    time included (default: 24 h). ``low_priority``: the job starts no worker of its own,
    it waits for one that is free. ``s3_config``: object-storage settings handed to the
    handler (``S3Config`` or its wire fields), never shown in any answer.

    Each value is checked when a body is made of it (``submission_body``), against the
    interface's ranges, before anything is sent.
    """

    webhook: str | None = None
    execution_timeout: Seconds | None = None
    ttl: Seconds | None = None
    low_priority: bool = False
    s3_config: S3Config | Mapping[str, Any] | None = None

    @classmethod
    def of(cls, options: JobOptions | None, words: JobOptionWords) -> JobOptions:
        """``options`` (or none), with the keywords a method was called with over it."""
        base = cls() if options is None else options
        if not isinstance(base, JobOptions):
            raise TypeError(f"options must be a JobOptions, got {type(base).__name__}")
        unknown = sorted(set(words) - {option.name for option in fields(cls)})
        if unknown:
            accepted = ", ".join(option.name for option in fields(cls))
            raise TypeError(f"unknown job option {unknown[0]!r} (accepted: {accepted})")
        return replace(base, **words) if words else base


def submission_body(endpoint_id: str, operation: str, input: Any, options: JobOptions) -> bytes:
    """The JSON body of /run or /runsync; one the service would refuse raises here, before
    anything is sent (a too-large body is not uploaded only to hear 413)."""
    try:
        policy = None
        if options.execution_timeout is not None or options.ttl is not None or options.low_priority:
            policy = JobPolicy(
                execution_timeout=to_ms(options.execution_timeout, "execution_timeout"),
                ttl=to_ms(options.ttl, "ttl"),
                low_priority=options.low_priority,
            )
        s3 = options.s3_config
        if isinstance(s3, Mapping):
            s3 = S3Config.model_validate(dict(s3))
        submission = JobSubmission(
            input=input, webhook=options.webhook, policy=policy, s3_config=s3
        )
    except ValidationError as exc:
        reason = _validation_text(exc)
        message = f"submission to endpoint {endpoint_id!r} refused locally, nothing was sent: "
        raise _unsent(BadRequest, 400, endpoint_id, message + reason, reason) from None
    wire = submission.model_dump(by_alias=True, exclude_none=True)  # None inside input stays
    try:
        body = json.dumps(wire, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        message = f"input for endpoint {endpoint_id!r} is not JSON: {exc}; nothing was sent"
        raise _unsent(
            BadRequest, 400, endpoint_id, message, f"the input is not JSON: {exc}"
        ) from None
    encoded = body.encode()
    limit = RUNSYNC_BODY_LIMIT if operation == "runsync" else RUN_BODY_LIMIT
    if len(encoded) > limit:
        over = f"is {len(encoded)} bytes, over the {limit // (1024 * 1024)} MB limit"
        advice = "Put large inputs in object storage and pass a URL."
        message = f"the /{operation} body for endpoint {endpoint_id!r} {over}; nothing was sent. "
        raise _unsent(
            PayloadTooLarge, 413, endpoint_id, message + advice, f"the input {over}. {advice}"
        )
    return encoded


def _unsent(
    cls: type[APIError], status: int, endpoint_id: str, message: str, reason: str
) -> APIError:
    """A submission refused locally, before anything was sent."""
    return cls(message, status=status, endpoint_id=endpoint_id, sent=False, reason=reason)


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


# ---- answers ----------------------------------------------------------------------------


def _where(call: Call) -> str:
    if call.subject is not None:
        return call.subject
    parts = [f"endpoint {call.endpoint_id!r}"]
    if call.job_id:
        parts.append(f"job {call.job_id}")
    return ", ".join(parts)


def _said(response: Answer) -> tuple[str, str | None]:
    """The service's own words: ``error`` (jobs), ``message``, or a REST v2 problem's
    ``detail`` with those of its ``errors`` it does not already say, else the raw text;
    and its ``code`` for the error, where it has one (undocumented, so mostly None)."""
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError):
        return excerpt(response.text), None
    if not isinstance(data, dict):
        return excerpt(json.dumps(data, ensure_ascii=False)), None
    code = data.get("code")
    code = str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None
    for key in ("error", "message", "detail"):
        if isinstance(data.get(key), str):
            text: str = data[key]
            listed = data.get("errors") if key == "detail" else None
            if isinstance(listed, list):
                more = [str(e) for e in listed if str(e) not in text]
                text = "; ".join([text, *more]) if more else text
            return excerpt(text), code
    return excerpt(json.dumps(data, ensure_ascii=False)), code


def error_from_response(
    call: Call, response: Answer, secret: Secret | None, key_source: str | None = None
) -> APIError:
    """The one place an error status becomes an exception."""
    status = response.status_code
    text, code = _said(response)
    if secret is not None:
        text = secret.redact(text)
    cls = class_for_status(status)
    reason = text or response.reason_phrase
    message = f"{status} on {call.describe()} ({_where(call)}): {reason}"
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    kw: dict[str, Any] = {
        "status": status,
        "method": call.method,
        "path": call.path,
        "operation": call.operation,
        "body": text,
        "code": code,
        "retry_after": retry_after,
        "reason": reason,
        "endpoint_id": call.endpoint_id or None,
        "job_id": call.job_id,
        "request_id": response.headers.get("x-request-id"),
    }
    if cls is Unauthorized and secret is not None:
        key_sent = secret.masked + (f", from {key_source}" if key_source else "")
        return Unauthorized(f"{message} [key sent: {key_sent}]", key_sent=key_sent, **kw)
    if cls is RateLimited and retry_after is not None:
        message += f" [Retry-After: {retry_after:g} s]"
    return cls(message, **kw)


def unanswered_note(call: Call) -> str:
    """What a submission that got no answer may have done, and why it was not re-sent."""
    if call.kind is Kind.SUBMIT and call.operation in ("run", "runsync"):
        return (
            "; the job may have been queued although its id never arrived, so it was not "
            "sent again (that could run it twice)"
        )
    if call.kind is Kind.SUBMIT and call.management:
        return (
            "; it may have taken effect although no answer arrived, so it was not sent "
            "again: look before trying again"
        )
    return ""


def _host(exc: httpx.TransportError) -> str | None:
    """The host (and port, when not the scheme's own) a failed request was going to."""
    try:
        url = exc.request.url
    except RuntimeError:  # raised outside httpx's client, with no request attached
        return None
    return url.host if url.port is None else f"{url.host}:{url.port}"


def transport_error(call: Call, exc: httpx.TransportError, secret: Secret | None) -> NbextError:
    """An httpx transport failure, described rather than chained (its request holds the
    key), naming the host tried: "could not resolve" means little without it."""
    detail = str(exc) or type(exc).__name__
    if secret is not None:
        detail = secret.redact(detail)
    sent = not never_sent(exc)
    note = unanswered_note(call) if sent else ""
    host = _host(exc)
    to = f" to {host}" if host else ""
    message = f"{call.describe()}{to} ({_where(call)}): {type(exc).__name__}: {detail}{note}"
    endpoint_id, reason = call.endpoint_id or None, detail + note
    if isinstance(exc, httpx.TimeoutException):
        return Timeout(
            "no answer in time: " + message,
            reason=reason,
            endpoint_id=endpoint_id,
            job_id=call.job_id,
        )
    return ConnectionError(
        message, maybe_sent=sent, reason=reason, endpoint_id=endpoint_id, job_id=call.job_id
    )


def call_error(call: Call, message: str, status: int, **kw: Any) -> APIError:
    """An ``APIError`` about ``call`` that no error status made (an answer the client
    cannot read, a redirect it does not follow), naming the request as every error does."""
    endpoint_id = call.endpoint_id or None
    return APIError(
        message,
        status=status,
        method=call.method,
        path=call.path,
        endpoint_id=endpoint_id,
        job_id=call.job_id,
        **kw,
    )


def redirect_error(call: Call, response: Answer | None) -> APIError:
    """A redirect the client does not follow: any but a GET's (following a POST's could
    submit a job twice), or a GET's endless one; it names where the server pointed."""
    if response is None:  # status 300: a redirect, which one no longer matters
        text = f"{call.describe()} ({_where(call)}): too many redirects; check the URL"
        return call_error(call, text, 300)
    location = response.headers.get("location")
    where = f"to {location!r}" if location else "with no Location"
    return call_error(
        call,
        f"{response.status_code} on {call.describe()} ({_where(call)}): redirected {where}; "
        f"a {call.method} is not followed (it could act twice): use that URL in the "
        "configuration if it is right",
        response.status_code,
    )


def oversized_error(call: Call, limit: int, what: str) -> APIError:
    """An answer past the client's cap: a broken server, or a gzip bomb."""
    return call_error(
        call,
        f"{call.describe()} ({_where(call)}): the answer is over the client's "
        f"{limit // (1024 * 1024)} MB limit ({what}); it was not read",
        200,
    )


def _not_json(call: Call, response: Answer) -> APIError:
    return call_error(
        call,
        f"{call.describe()} ({_where(call)}) answered {response.status_code} with a body "
        f"that is not JSON: {excerpt(response.text, 120)}",
        response.status_code,
    )


def model_of(call: Call, response: Answer, model: type[M]) -> M:
    """The answer as ``model``; a shape the client cannot read is an APIError, not a KeyError.
    pydantic parses the bytes itself: cheaper than ``json.loads`` then validating."""
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            raise _not_json(call, response) from None
        raise call_error(
            call,
            f"{call.describe()} ({_where(call)}) answered with an unexpected shape for "
            f"{model.__name__}: {_validation_text(exc)[:200]}",
            response.status_code,
            body=excerpt(response.text, 200),
        ) from None
