"""The key appears in no exception, repr or log record, whatever goes wrong."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import httpx
import pytest

from nbext.client import NbextError
from nbext.client._client import BearerAuth

from .conftest import KEY, Harness, MakeHarness

pytestmark = pytest.mark.anyio
WRONG_KEY = "rpa_BADBADBADBADBADBADBADBADBADBADBADBAD9999"
SECRETS = (KEY, WRONG_KEY, KEY[4:-4], WRONG_KEY[4:-4])
"""The keys, and their unmasked middles (a mask shows only the ends)."""


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def walk(obj: Any, seen: set[int], depth: int = 0) -> list[str]:
    """Every string an exception (and what it holds or chains) can show."""
    if id(obj) in seen or depth > 4:
        return []
    seen.add(id(obj))
    texts = [repr(obj), str(obj)]
    if isinstance(obj, BaseException):
        texts += "".join(traceback.format_exception(obj)).splitlines()
        texts += [str(n) for n in getattr(obj, "__notes__", [])]
        for linked in (obj.__cause__, obj.__context__, *obj.args):
            if linked is not None:
                texts += walk(linked, seen, depth + 1)
    for value in getattr(obj, "__dict__", {}).values():
        texts += walk(value, seen, depth + 1)
    return texts


async def provoke(h: Harness) -> list[BaseException]:
    """One of each failure the client can report, against the emulator and a dead port."""
    caught: list[BaseException] = []

    async def expect(fn: Any, *args: Any, **kw: Any) -> None:
        try:
            await h.call(fn, *args, **kw)
        except NbextError as exc:
            caught.append(exc)
        else:
            raise AssertionError(f"{fn} did not fail")

    wrong = h.new_client(api_key=WRONG_KEY)
    dead = h.new_client(serverless_url="http://127.0.0.1:9/v2", max_retries=1, transport=None)
    try:
        await expect(wrong.endpoint("echo").run, {})  # 401
        await expect(h.endpoint("nowhere").health)  # 404
        await expect(h.endpoint("echo").run, {"x": "y" * (11 * 2**20)})  # 413, local
        await expect(h.endpoint("echo").run, [1, 2])  # 400, local
        await expect(h.endpoint("fail").run_sync, {"message": "oops"}, wait=5)  # FAILED
        job = await h.call(h.endpoint("sleep").run, {"seconds": 60})
        await expect(job.wait, timeout=0.1)  # Timeout
        await h.call(job.cancel)
        await expect(job.wait, timeout=5)  # JobCancelled
        await expect(job.retry)  # 409: only FAILED or TIMED_OUT jobs are retried
        await expect(dead.endpoint("echo").health)  # ConnectionError
        await expect(dead.endpoint("echo").run, {})  # ConnectionError on a submission
    finally:
        await h.call(wrong.close)
        await h.call(dead.close)
    return caught


async def test_no_exception_or_log_record_holds_the_key(
    make: MakeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = await make()
    caplog.set_level(logging.DEBUG)  # everyone's records: ours, httpx's, httpcore's
    caught = await provoke(h)
    assert len(caught) == 10
    kinds = {type(e).__name__ for e in caught}
    assert {"Unauthorized", "NotFound", "PayloadTooLarge", "BadRequest", "JobFailed"} <= kinds
    assert {"Timeout", "JobCancelled", "Conflict", "ConnectionError"} <= kinds
    for exc in caught:
        assert not [t for t in walk(exc, set()) if leaks(t)], type(exc).__name__
    assert caplog.records, "expected the client and httpx to log"
    for record in caplog.records:
        assert not leaks(record.getMessage()), record.getMessage()
        assert not leaks(repr(record.args))


async def test_a_key_quoted_in_a_jobs_error_text_is_masked_in_the_exception(
    h: Harness,
) -> None:
    # The error text is the handler's; it may quote anything it was given, even the key.
    job = await h.call(h.endpoint("fail").run, {"message": f"cannot use {KEY}"})
    with pytest.raises(NbextError) as info:
        await h.call(job.wait, timeout=5)
    texts = walk(info.value, set())
    assert not [t for t in texts if leaks(t)]
    assert "cannot use rpa_…EF42" in str(info.value)


async def test_reprs_mask_the_key(h: Harness) -> None:
    job = await h.call(h.endpoint("echo").run, {})
    objects: list[Any] = [
        h.client,
        h.client.config,
        h.client.config.api_key,
        h.client._auth,
        h.client._ctx,
        h.endpoint("echo"),
        job,
        BearerAuth(h.client.config.api_key),
    ]
    for obj in objects:
        assert not leaks(repr(obj)) and not leaks(str(obj)), type(obj).__name__
    assert "rpa_…EF42" in repr(h.client)
    assert not leaks(repr(vars(h.client)))


def test_the_key_travels_only_in_the_authorization_header() -> None:
    from nbext.client import Client

    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"jobs": {}, "workers": {}})

    with Client(KEY, serverless_url="http://svc/v2", transport=httpx.MockTransport(handle)) as c:
        c.endpoint("e").health()
    (request,) = seen
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(request.url) and KEY not in repr(request.headers)
    assert "authorization" not in {k.lower() for k in c._http.headers}
