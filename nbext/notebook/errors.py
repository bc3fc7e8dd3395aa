"""Errors of the notebook layer, and ``describe``, which says any of nbext's errors as one
line in the user's terms (docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from nbext.client import (
    APIError,
    Conflict,
    ConnectionError,
    JobError,
    NbextError,
    NotFound,
    RateLimited,
    Timeout,
    Unauthorized,
)


class OneLineError(Exception):
    """An end a cell states in one line, with no traceback (``_render_traceback_``, which
    IPython and ipykernel honour): the message is the whole story, and a panel above has
    the details."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self.message}"]


class NotebookError(NbextError):
    """A notebook helper was used where it cannot work (e.g. ``deploy`` on the cloud)."""


class InvalidArgument(NotebookError, ValueError):
    """A value given to a notebook helper cannot be used: the caller's mistake. The
    magics show it in one line; a plain ``ValueError`` is a bug and keeps its traceback."""


class WrongType(NotebookError, TypeError):
    """A notebook helper was given a value of a type it cannot use (see ``InvalidArgument``)."""


VERBS = {
    "run": "submit a job to it",
    "runsync": "run a job on it",
    "status": "ask for its state",
    "stream": "read its stream",
    "cancel": "cancel it",
    "retry": "retry it",
    "health": "read its health",
    "purge-queue": "purge its queue",
}
"""Operations of the job interface, as what the user was doing."""

Endpoints = Sequence[tuple[str, str | None]]
"""Known endpoints as (id, name), for "did you mean" hints."""


def a_kind(value: object) -> str:
    """``an int``, ``a str``: what a value is, in a sentence."""
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def describe(exc: BaseException, *, endpoints: Endpoints = (), named: bool = True) -> str:
    """``exc`` as one line a user can act on: the job or endpoint once, then what happened.

    The client's messages are written for logs; the same facts come here from its typed
    attributes, said as a notebook user thinks of them ("job X on 'echo' is COMPLETED;
    only FAILED or TIMED_OUT jobs can be retried"). ``endpoints`` (id, name) adds "did you
    mean" to an unknown endpoint; ``named=False`` leaves the job or endpoint out.
    """
    if not isinstance(exc, NbextError):
        return one_line(f"{type(exc).__name__}: {exc}")
    subject = _subject(exc) if named else ""
    if isinstance(exc, JobError):
        detail = f": {one_line(exc.error)}" if exc.error else ""
        return _joined(subject, f"ended {exc.status.value}{detail}")
    if isinstance(exc, APIError) and exc.sent:
        return _joined(subject, _api_reason(exc, endpoints))
    if isinstance(exc, APIError):  # refused by the client before sending: its own words
        return _joined(subject, f"{exc.reason} (nothing was sent)")
    if isinstance(exc, Timeout) and exc.timeout is None:
        return _joined(subject, f"the service did not answer in time ({one_line(exc.reason)})")
    if isinstance(exc, ConnectionError):
        return _joined(subject, f"could not reach the service ({one_line(exc.reason)})")
    return one_line(exc.message)


def _subject(exc: NbextError) -> str:
    if exc.job_id and exc.endpoint_id:
        return f"job {exc.job_id} on {exc.endpoint_id!r}"
    if exc.job_id:
        return f"job {exc.job_id}"
    if exc.endpoint_id:
        return f"endpoint {exc.endpoint_id!r}"
    return ""


def _joined(subject: str, reason: str) -> str:
    if not subject or reason.startswith((subject, "endpoint ")):
        return one_line(reason)
    separator = (
        " " if reason.startswith(("cannot ", "not found", "ended ", "is ", "already ")) else ": "
    )
    return one_line(f"{subject}{separator}{reason}")


def _api_reason(exc: APIError, endpoints: Endpoints) -> str:
    body = _without_subject(exc.body or "", exc)
    operation = exc.operation
    if isinstance(exc, NotFound):
        ids = {endpoint_id for endpoint_id, _ in endpoints}
        batch = (operation or "").startswith("batch")
        if batch and exc.endpoint_id and exc.endpoint_id in ids:  # the batch is unknown
            return f"{body or 'not found'}; `%runpod batches {exc.endpoint_id}` lists them"
        if exc.endpoint_id and (not (exc.job_id or batch) or (ids and exc.endpoint_id not in ids)):
            hint = did_you_mean(exc.endpoint_id, endpoints)
            return f"endpoint {exc.endpoint_id!r} not found{hint}"
        if exc.job_id:
            return "not found: the id is unknown, or the job was purged or expired"
        return body or "not found"
    if isinstance(exc, Conflict):
        state = exc.job_status
        if operation == "cancel" and state is not None and state.is_final:
            return f"already ended {state.value}; only queued or running jobs can be cancelled"
        if operation == "retry" and state is not None:
            return f"is {state.value}; only FAILED or TIMED_OUT jobs can be retried"
    if exc.status == 409:
        verb = VERBS.get(operation or "", "do that")
        return f"cannot {verb} now" + (f": {body}" if body else "")
    if isinstance(exc, Unauthorized):
        sent = f" [key sent: {exc.key_sent}]" if exc.key_sent else ""
        return f"the service refused the API key{sent}"
    if isinstance(exc, RateLimited):
        wait = f"; try again in {exc.retry_after:g} s" if exc.retry_after is not None else ""
        return f"the service is rate limiting requests{wait}"
    if exc.status == 413:
        return "the input is too large for the service" + (f": {body}" if body else "")
    if exc.status == 400:
        return "the service refused the request" + (f": {body}" if body else "")
    if exc.status >= 500:
        return f"the service failed (error {exc.status})" + (f": {body}" if body else "")
    return f"the service answered {exc.status}" + (f": {body}" if body else "")


def _without_subject(text: str, exc: APIError) -> str:
    """The service's words (``body``) with the job and endpoint, which the line names
    already, said as "the job" and "the endpoint"."""
    text = one_line(text)
    for what, known in (("job", exc.job_id), ("endpoint", exc.endpoint_id)):
        if known:
            for spelled in (f"{what} '{known}'", f"{what} {known}"):
                text = text.replace(spelled, f"the {what}")
    if exc.job_id:
        text = text.replace(exc.job_id, "the job")
    return text


def did_you_mean(name: str, endpoints: Endpoints) -> str:
    """``; did you mean 'echo'?`` for a mistyped endpoint id; a name (the cloud generates
    ids) is told its id; with no near miss, the first few endpoints there are listed."""
    ids = {endpoint_id for endpoint_id, _ in endpoints}
    by_name = {label: endpoint_id for endpoint_id, label in endpoints if label}
    if name in by_name and name not in ids:
        return f"; {name!r} is the name of endpoint {by_name[name]!r}: use its id"
    close = difflib.get_close_matches(name, [*ids, *by_name], n=1)
    if not close:
        return _deployed(sorted(ids))
    match = close[0]
    if match in ids:
        return f"; did you mean {match!r}?"
    return f"; did you mean {by_name[match]!r} (named {match!r})?"


LISTED_ENDPOINTS = 8
"""How many endpoint ids an "unknown endpoint" message lists before "and N more"."""


def _deployed(ids: list[str]) -> str:
    if not ids:
        return ""
    shown = ", ".join(ids[:LISTED_ENDPOINTS])
    more = f" and {len(ids) - LISTED_ENDPOINTS} more" if len(ids) > LISTED_ENDPOINTS else ""
    return f"; deployed endpoints: {shown}{more}"
