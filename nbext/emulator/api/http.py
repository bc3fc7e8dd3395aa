"""What every route shares: auth, bounded body reading, JSON answers, and the one
mapping of domain errors to docs/behaviour.md#error-bodies."""

from __future__ import annotations

import functools
import json
import math
import re
from http import HTTPStatus
from importlib import resources
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, TypeAdapter
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from nbext.models.v2 import is_management_path

from ..domain.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    NotFound,
    RateLimited,
    StoreFailed,
    StoreFull,
    TooLarge,
)
from ..domain.json_values import MAX_DEPTH, check_depth, check_text, too_deep
from ..domain.management.facade import Management
from ..domain.management.refusals import Forbidden, Unprocessable
from ..domain.remote_workers import WorkerRefused
from ..emulator import Emulator


class Unauthorized(DomainError):
    """Missing or wrong API key (HTTP 401)."""


STATUS_OF: dict[type[DomainError], int] = {
    StoreFull: 507,  # before StoreFailed, its base: the first match wins
    StoreFailed: 503,
    InvalidInput: 400,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    RateLimited: 429,
    Unauthorized: 401,
    WorkerRefused: 401,  # a worker script's wrong key
}


V2_STATUS_OF = {Unprocessable: 422, Forbidden: 403, **STATUS_OF, DomainError: 400}
"""v2's own refusals first, then the rest's; 400 for an error neither knows."""

_ANY = TypeAdapter(Any)


def encode(value: Any) -> bytes:
    """A response body, models by their wire names; NaN and infinities as ``null``, and a
    lone surrogate (an older database's record may hold one) as a ``\\u`` escape."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_unset=True, mode="json")
    try:
        text = _strict_dumps(value)
    except ValueError:  # a NaN or an infinity somewhere
        value = _ANY.dump_python(value, mode="json")
        text = _strict_dumps(value)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _ascii_dumps(value).encode()


_strict_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_ascii_dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        encode(value), status_code=status, media_type="application/json", headers=headers
    )


def no_content() -> Response:
    return Response(status_code=204)


@functools.cache
def reference_bytes(package: str) -> bytes:
    """The service's OpenAPI document that ``package``'s routes follow, shipped beside them."""
    return (resources.files(package) / "reference.openapi.json").read_bytes()


def emulator_of(request: Request) -> Emulator:
    emulator: Emulator = request.app.state.emulator
    return emulator


async def authenticate(request: Request) -> Emulator:
    """The key's check (``authorize``) and ``Emulator.bind``: async, so that FastAPI runs
    it on the serving loop, not in a thread."""
    emulator = emulator_of(request)
    authorize(emulator, request.headers.get("authorization"))
    emulator.bind()
    return emulator


Authenticated = Annotated[Emulator, Depends(authenticate)]


async def management(emulator: Authenticated) -> Management:
    return emulator.management


Managed = Annotated[Management, Depends(management)]


def authorize(emulator: Emulator, header: str | None) -> None:
    """``Bearer KEY`` or the bare key; anything else is 401."""
    if not header:
        raise Unauthorized(
            "missing Authorization header; send 'Authorization: Bearer <API key>' "
            "(the emulator prints its key when it starts)"
        )
    scheme, _, rest = header.partition(" ")
    presented = rest.strip() if scheme.lower() == "bearer" and rest else header.strip()
    if not emulator.check_key(presented):
        raise Unauthorized("invalid API key")


async def read_body(request: Request, limit: int) -> bytes:
    """The request body; 413 at once when its Content-Length or the running total exceeds
    ``limit``, so an oversized body is never held whole."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge(too_large(int(declared), limit, NOT_QUEUED))
    parts: list[bytes] = []
    size = 0
    async for piece in request.stream():
        parts.append(piece)
        size += len(piece)
        if size > limit:
            raise TooLarge(too_large(None, limit, NOT_QUEUED))
    return b"".join(parts)


NOT_QUEUED = (
    "this operation; nothing was queued. Put large inputs in object storage and pass a URL."
)


def too_large(size: int | None, limit: int, of: str) -> str:
    got = f" ({size} bytes)" if size is not None else ""
    return f"request body{got} is over the {limit // (1024 * 1024)} MB limit of {of}"


def parse_json(body: bytes) -> Any:
    """The body as JSON that can be stored and served back as it came, or a 400 naming
    what could not (docs/architecture.md#a-job-through-the-emulator)."""
    if not body:
        raise InvalidInput('request body is empty; send a JSON object such as {"input": {...}}')
    try:
        data = json.loads(body, parse_constant=_not_json, parse_float=_finite)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"request body is not valid JSON: {exc}") from None
    except RecursionError:  # the client's body, not an emulator fault: 400, not 500
        raise InvalidInput(too_deep()) from None
    except ValueError:  # an integer over Python's digit limit for conversion
        raise InvalidInput(
            "request body has an integer of more than 4300 digits; send such numbers as text"
        ) from None
    # Both checks walk the whole value, so they run only when the bytes say they may
    # find something: a surrogate's escape or raw bytes, or enough brackets to nest deep.
    if _SURROGATE.search(body):
        check_text(data)
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH:
        check_depth(data)
    return data


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _not_json(constant: str) -> Any:
    """Python's json reads NaN and Infinity; JSON has no such numbers, nor the service."""
    raise InvalidInput(f"request body is not valid JSON: {constant} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidInput(
            f"request body has the number {text[:40]}, which is too large for a "
            "double-precision float; send it as a string"
        )
    return value


def ms_param(name: str, raw: str | None, low: int, high: int, default: int | None) -> int | None:
    """``raw`` (a query parameter's value, or None when absent) as milliseconds in range."""
    if raw is None:
        return default
    # Only ASCII digits: Python's int() also reads "1_000", " 7 ", "+7" and other
    # scripts' digits ("\u0661"), none of which a client means as a number.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 12):
        raise InvalidInput(
            f"{name} must be an integer number of milliseconds (digits 0-9 only), got {raw!r}"
        )
    value = int(raw)
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high} ms, got {value}")
    return value


def error_reply(
    exc: DomainError, key: str, statuses: dict[type[DomainError], int] = STATUS_OF
) -> tuple[int, dict[str, str], dict[str, str] | None]:
    """Status, body and extra headers for a domain error; ``key`` is "error" or "message"."""
    status = next(code for cls, code in statuses.items() if isinstance(exc, cls))
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
    return status, {key: exc.message}, headers


def problem(
    status: int, detail: str, errors: list[str] | None = None, headers: dict[str, str] | None = None
) -> Response:
    """A v2 management error: its status's title as the reference names it, ``detail``,
    and ``errors`` by field."""
    title = {413: "Content Too Large", 422: "Unprocessable Entity"}.get(status)
    body: dict[str, Any] = {"title": title or HTTPStatus(status).phrase, "status": status}
    body["detail"] = detail
    if errors:
        body["errors"] = errors
    return Response(encode(body), status, headers, "application/problem+json")


def problem_of(exc: DomainError) -> Response:
    status, _, headers = error_reply(exc, "detail", V2_STATUS_OF)
    return problem(status, exc.message, getattr(exc, "errors", None), headers)


def error_key(path: str) -> str:
    """The error body's key: ``message`` under ``/v1`` (the management interface's shape),
    ``error`` elsewhere (the job interface's, and the emulator's own controls)."""
    return "message" if path.startswith("/v1") else "error"


def _described_at(path: str) -> str:
    if is_management_path(path):
        return "the interface is described at /v2/openapi.json"
    if path.startswith("/v1"):
        return "the interface is described at /v1/openapi.json"
    if path.startswith("/v2"):
        return (
            "the job interface is /v2/{endpoint_id}/ run, runsync, status/{id}, stream/{id}, "
            "cancel/{id}, retry/{id}, purge-queue, health, requests, batch"
        )
    return "the emulator's routes are listed at /_emulator/docs"


def install_error_handlers(app: FastAPI) -> None:
    """Map domain errors, and the framework's own 404 and 405, to the interface's bodies."""

    async def on_domain_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, DomainError)
        if is_management_path(request.url.path):
            return problem_of(exc)
        status, body, headers = error_reply(exc, error_key(request.url.path))
        return json_response(body, status, headers)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        path = request.url.path
        headers = dict(exc.headers or {})
        managed = is_management_path(path)
        if exc.status_code == 404:
            message = f"no operation at {path}; {_described_at(path)}"
        elif exc.status_code == 405:
            allowed = headers.get("Allow")
            hint = f"it takes {allowed}" if allowed else _described_at(path)
            message = f"{request.method} is not an operation of {path}"
            message += "" if managed else f"; {hint}"
        else:
            message = str(exc.detail)
        if managed:
            return problem(exc.status_code, message, headers=headers)
        return json_response({error_key(path): message}, exc.status_code, headers)

    async def on_client_gone(request: Request, exc: Exception) -> Response:
        return Response(status_code=499)  # nobody is left to read it

    async def on_fault(request: Request, exc: Exception) -> Response:
        """The emulator's own fault: a 500 in the interface's error shape; the server
        still logs the traceback (Starlette raises the exception on after this answer)."""
        message = (
            f"the emulator failed on this request ({type(exc).__name__}); its log has the traceback"
        )
        return json_response({error_key(request.url.path): message}, 500)

    app.add_exception_handler(DomainError, on_domain_error)
    app.add_exception_handler(HTTPException, on_http_error)
    app.add_exception_handler(ClientDisconnect, on_client_gone)
    app.add_exception_handler(Exception, on_fault)
