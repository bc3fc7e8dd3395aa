"""One hierarchy, one status-to-class mapping, each error carrying what it should."""

from __future__ import annotations

import builtins
import re
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

import nbext
import nbext.client._errors as errors_module
from nbext.client import (
    APIError,
    BadRequest,
    Conflict,
    ConnectionError,
    JobOptions,
    NbextError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    Timeout,
    Unauthorized,
)
from nbext.client._calls import Call, endpoint_call, error_from_response, job_call
from nbext.client._config import Secret
from nbext.client._errors import class_for_status, excerpt
from nbext.client._flows import send
from nbext.models import JobStatus

from .conftest import KEY, Harness, MakeHarness

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequest),
        (401, Unauthorized),
        (404, NotFound),
        (409, Conflict),
        (413, PayloadTooLarge),
        (422, BadRequest),
        (429, RateLimited),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
        (504, ServerError),
        (501, ServerError),
        (403, APIError),
        (418, APIError),
    ],
)
def test_each_status_maps_to_its_class(status: int, cls: type[APIError]) -> None:
    assert class_for_status(status) is cls
    call = job_call("status", "GET", "ep", "job-1")
    err = error_from_response(call, httpx.Response(status, json={"error": "why " * 200}), None)
    assert type(err) is cls and isinstance(err, APIError) and isinstance(err, NbextError)
    assert err.status == status and err.endpoint_id == "ep" and err.job_id == "job-1"
    assert err.body is not None and err.body.startswith("why") and len(err.body) <= 300
    assert f"{status} on GET ep/status/job-1" in str(err)


def test_error_bodies_of_both_interfaces_and_plain_text_are_read() -> None:
    call = endpoint_call("health", "GET", "ep")
    v1 = error_from_response(call, httpx.Response(400, json={"message": "name: taken"}), None)
    text = error_from_response(call, httpx.Response(502, text="<html>Bad gateway</html>"), None)
    assert v1.body == "name: taken" and "Bad gateway" in (text.body or "")


def test_the_documented_tree_names_every_error_class() -> None:
    page = (Path(__file__).parents[2] / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = page.split("### The client's errors", 1)[1].split("###", 1)[0]
    named = set(re.findall(r"[├└]── (\w+)", tree)) | {"NbextError"}
    classes = {
        name
        for name, value in vars(errors_module).items()
        if isinstance(value, type) and issubclass(value, NbextError)
    }
    assert named == classes
    assert classes <= set(nbext.client.__all__)


def test_builtin_bases_let_plain_except_clauses_work() -> None:
    assert issubclass(Timeout, builtins.TimeoutError)
    assert issubclass(ConnectionError, builtins.ConnectionError)
    assert excerpt("a\n\n b   c") == "a b c" and len(excerpt("x" * 1000)) == 300


async def raw(h: Harness, call: Call) -> None:
    """Send a hand-made call through the client's own machinery (what the API won't build)."""
    await h.call(h.client._run, send(h.client._ctx, call))


async def test_status_codes_from_the_emulator_map_to_classes(h: Harness) -> None:
    with pytest.raises(BadRequest) as bad:  # /stream?wait=abc
        await raw(h, replace(job_call("stream", "GET", "echo", "x"), params={"wait": "abc"}))
    assert bad.value.status == 400 and "wait" in (bad.value.body or "")
    with pytest.raises(PayloadTooLarge) as large:  # bypassing the local check
        body = b'{"input":{"x":"' + b"y" * (10 * 2**20) + b'"}}'
        await raw(h, endpoint_call("run", "POST", "echo", body=body))
    assert large.value.status == 413 and large.value.sent is True
    with pytest.raises(NotFound) as missing:
        await h.call(h.endpoint("no-such-endpoint").health)
    assert missing.value.status == 404 and missing.value.endpoint_id == "no-such-endpoint"
    with pytest.raises(NotFound) as no_job:
        await h.call(h.endpoint("echo").job("no-such-job").status)
    assert no_job.value.job_id == "no-such-job"
    job = await h.call(h.endpoint("echo").run, {})
    await h.call(job.wait, timeout=5)
    with pytest.raises(Conflict) as conflict:
        await h.call(job.retry)
    assert conflict.value.status == 409 and job.id in str(conflict.value)


async def test_wrong_key_is_unauthorized_and_names_only_the_mask(make: MakeHarness) -> None:
    h = await make()
    wrong = "rpa_WRONGWRONGWRONGWRONGWRONGWRONGWRONG1234"
    client = h.new_client(api_key=wrong)
    try:
        with pytest.raises(Unauthorized) as info:
            await h.call(client.endpoint("echo").health)
    finally:
        await h.call(client.close)
    err = info.value
    assert err.status == 401 and "rpa_…1234" in str(err) and "from argument" in str(err)
    assert wrong not in str(err) and wrong not in repr(err.__dict__)


async def test_ids_cannot_escape_their_path_segment(h: Harness) -> None:
    with pytest.raises(NotFound):
        await h.call(h.endpoint("echo").job("../../held/health").status)
    with pytest.raises(BadRequest):
        h.endpoint("")


def test_redaction_of_a_key_echoed_in_a_body() -> None:
    secret = Secret(KEY)
    call = endpoint_call("health", "GET", "ep")
    err = error_from_response(call, httpx.Response(401, json={"error": f"bad key {KEY}"}), secret)
    assert KEY not in str(err) and secret.masked in str(err)


def test_dot_segments_and_odd_ids_stay_one_segment() -> None:
    from nbext.client._calls import segment

    assert segment("9d571776-8ce5-48f5-968c-42b60dfa1a5f", "job id").count("%") == 0
    assert segment("..", "job id") == "%2E%2E" and segment(".", "job id") == "%2E"
    assert segment("a/b c", "job id") == "a%2Fb%20c"


def test_a_problem_documents_detail_and_errors_make_the_message() -> None:
    """REST v2 answers RFC 9457 problems: ``detail`` says what, ``errors`` which fields."""
    call = job_call("status", "GET", "ep", "job-1")
    problem = {
        "title": "Unprocessable Entity",
        "status": 422,
        "detail": "request validation failed",
        "errors": ["$: additional properties 'bogus' not allowed", "gpu.count: below 1"],
    }
    err = error_from_response(call, httpx.Response(422, json=problem), None)
    assert type(err) is BadRequest and err.status == 422
    assert str(err).endswith(
        "request validation failed; $: additional properties 'bogus' not allowed; "
        "gpu.count: below 1"
    )
    said = {**problem, "detail": "gpu.count: below 1", "errors": ["gpu.count: below 1"]}
    err = error_from_response(call, httpx.Response(422, json=said), None)
    assert str(err).endswith(": gpu.count: below 1")  # not said twice


# ---- the fields a program reads instead of the message ------------------------------------


def test_an_answer_gives_its_status_operation_code_and_retry_after_as_fields() -> None:
    call = job_call("cancel", "POST", "ep", "job-1")
    answer = httpx.Response(
        429, json={"error": "slow down", "code": "RATE_LIMIT"}, headers={"Retry-After": "3"}
    )
    err = error_from_response(call, answer, None)
    assert isinstance(err, RateLimited)
    assert (err.status, err.operation, err.code) == (429, "cancel", "RATE_LIMIT")
    assert err.retry_after == 3 and (err.endpoint_id, err.job_id) == ("ep", "job-1")
    assert err.reason == err.body == "slow down"
    busy = error_from_response(call, httpx.Response(503, headers={"Retry-After": "7"}), None)
    assert type(busy) is ServerError and busy.retry_after == 7 and busy.code is None
    assert busy.reason == "Service Unavailable"  # no body: the status's own words


def test_unauthorized_names_the_key_it_sent_in_a_field() -> None:
    call = endpoint_call("health", "GET", "ep")
    err = error_from_response(call, httpx.Response(401, json={"error": "no"}), Secret(KEY), "env")
    assert isinstance(err, Unauthorized)
    assert err.key_sent == f"{Secret(KEY).masked}, from env" and KEY not in err.key_sent
    assert err.reason == "no"


def test_a_local_refusal_says_what_was_wrong_without_the_request() -> None:
    from nbext.client._calls import submission_body

    with pytest.raises(BadRequest) as bad:
        submission_body("e", "run", {"x": float("nan")}, JobOptions())
    assert bad.value.sent is False and bad.value.reason.startswith("the input is not JSON: ")
    with pytest.raises(PayloadTooLarge) as large:
        submission_body("e", "run", {"x": "a" * (11 * 1024 * 1024)}, JobOptions())
    assert large.value.reason.startswith("the input is ") and "10 MB" in large.value.reason
    assert "nothing was sent" not in bad.value.reason + large.value.reason  # ``sent`` says it


def test_a_transport_failure_gives_its_own_words_as_reason() -> None:
    from nbext.client._calls import transport_error

    call = job_call("status", "GET", "ep", "job-1")
    refused = transport_error(call, httpx.ConnectError("[Errno 111] Connection refused"), None)
    assert isinstance(refused, ConnectionError)
    assert refused.reason == "[Errno 111] Connection refused" and refused.job_id == "job-1"
    late = transport_error(call, httpx.ReadTimeout("no answer within 30 s"), None)
    assert isinstance(late, Timeout) and late.reason == "no answer within 30 s"


async def test_a_refused_cancel_or_retry_carries_the_jobs_state(h: Harness) -> None:
    job = await h.call(h.endpoint("echo").run, {})
    await h.call(job.wait, timeout=5)
    for operation in ("cancel", "retry"):
        with pytest.raises(Conflict) as refused:
            await h.call(getattr(job, operation))
        err = refused.value
        assert (err.status, err.operation, err.job_id) == (409, operation, job.id)
        assert err.job_status is JobStatus.COMPLETED
