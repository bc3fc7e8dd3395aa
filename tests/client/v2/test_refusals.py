"""What the v2 resources refuse before sending anything: bad input.

The clients here point at a port nothing listens on: had anything been sent, the error
would be a ConnectionError, not the refusal each test expects.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from nbext.client import AsyncClient, BadRequest, Client

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
NOWHERE = "http://127.0.0.1:9"


def attempt(flavour: str, call: Callable[[Any], Any]) -> None:
    """Call, and drive what it returns (a value, an awaitable, an iterator) one step."""
    cls = AsyncClient if flavour == "async" else Client
    c = cls(KEY, base_url=f"{NOWHERE}/v2", serverless_url=f"{NOWHERE}/v2", max_retries=0)

    async def drive() -> None:
        result = call(c)
        if inspect.isawaitable(result):
            await result
        elif hasattr(result, "__anext__"):
            await result.__anext__()
        elif hasattr(result, "__next__"):
            next(result)

    asyncio.run(drive())


BAD_INPUT: list[tuple[Callable[[Any], Any], str]] = [
    (lambda c: c.pods.logs("p1", tail=-1), "tail must be a whole number 0..5000, got -1"),
    (lambda c: c.pods.logs("p1", tail=True), "tail must be a whole number"),
    (lambda c: c.pods.logs("p1", tail=5001), "got 5001"),
    (lambda c: c.pods.logs("p1", since="yesterday"), "since must be an RFC 3339 date-time"),
    (lambda c: c.pods.logs("p1", since=17), "since must be a datetime or an RFC 3339"),
    (lambda c: c.pods.logs("p1", source="stderr"), "source must be 'container' or 'system'"),
    (lambda c: c.pods.logs(""), "pod id must be a non-empty string"),
    (lambda c: c.pods.follow_logs("", tail=1), "pod id must be a non-empty string"),
    (lambda c: c.pods.follow_logs("p1", tail=-3), "tail must be a whole number"),
    (lambda c: c.pods.follow_logs("p1", since="2026-13-01"), "since must be an RFC 3339"),
    (lambda c: c.endpoints.worker_logs("e1", "", tail=1), "worker id must be a non-empty"),
    (lambda c: c.pods.logs("p1", quiet=0), "quiet must be a number of seconds > 0, got 0"),
    (lambda c: c.endpoints.follow_worker_logs("", "w1"), "endpoint id must be a non-empty"),
    (lambda c: c.endpoints.worker_logs("e1", "w1", tail=-1), "tail must be a whole number"),
    (lambda c: c.endpoints.workers(""), "endpoint id must be a non-empty string"),
    (lambda c: c.endpoints.releases(""), "endpoint id must be a non-empty string"),
    (lambda c: c.clusters.get(""), "cluster id must be a non-empty string"),
    (lambda c: c.registry_delegations.delete(""), "delegation id must be a non-empty"),
    (lambda c: c.ssh_keys.add("ssh-rsa"), "key 0 is not a public key line"),
]


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize(("call", "fragment"), BAD_INPUT, ids=[f for _, f in BAD_INPUT])
def test_bad_input_is_refused_in_one_line_before_sending(
    flavour: str, call: Callable[[Any], Any], fragment: str
) -> None:
    with pytest.raises(BadRequest) as caught:
        attempt(flavour, call)
    assert fragment in str(caught.value) and caught.value.sent is False
    assert "\n" not in str(caught.value)


def test_the_refusals_would_have_noticed_a_request() -> None:
    """The premise of this file: a request to NOWHERE fails as a connection error."""
    from nbext.client import ConnectionError

    with pytest.raises(ConnectionError):
        attempt("sync", lambda c: c.pods.logs("p1"))


PASTED_KEY: list[Callable[[Any], Any]] = [
    lambda c: c.pods.logs("p1", source=KEY),
    lambda c: c.pods.follow_logs("p1", source=KEY),
    lambda c: c.endpoints.follow_worker_logs("e1", "w1", since=KEY),
]


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("call", PASTED_KEY, ids=["logs", "follow_logs", "follow_worker_logs"])
def test_a_key_pasted_into_a_log_argument_is_masked_in_the_refusal(
    flavour: str, call: Callable[[Any], Any]
) -> None:
    """Followers are made as every other method is, so their refusals are masked too."""
    with pytest.raises(BadRequest) as caught:
        attempt(flavour, call)
    text = str(caught.value)
    assert KEY not in text and KEY[-20:] not in text and "must be" in text
    assert caught.value.__context__ is None and caught.value.sent is False
