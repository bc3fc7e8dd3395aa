"""Management error answers become the client's errors, and the key shows nowhere.

REST v2 answers problem documents (``detail``): 400 or 422 for bad input (naming the
field and the rule), 401 for a missing or wrong key, 404 for an unknown id. Each maps to
the one hierarchy (BadRequest, Unauthorized, NotFound) and carries the service's words
and what the call was about.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from nbext.client import BadRequest, NbextError, NotFound, Unauthorized, mask

from ..conftest import KEY
from ..test_secrets import SECRETS, WRONG_KEY, leaks, walk
from .conftest import V2Harness

pytestmark = pytest.mark.anyio


async def test_400_carries_the_services_message(v2: V2Harness) -> None:
    c = v2.client
    path = "network-volumes"
    vol = await v2.call(c.network_volumes.create, name="v", size=50, data_center="EU-RO-1")
    with pytest.raises(BadRequest) as info:
        await v2.call(c.network_volumes.update, vol.id, size=10)
    error = info.value
    assert (error.status, error.sent, error.method) == (400, True, "PATCH")
    assert error.path == f"{path}/{vol.id}"
    assert error.body and "size" in error.body  # the service's own words
    assert str(error).startswith(f"400 on PATCH {path}/{vol.id} (network volume ")
    assert "size" in str(error) and "\n" not in str(error)
    assert error.endpoint_id is None  # not an endpoint's error


async def test_404_names_the_missing_record(v2: V2Harness) -> None:
    c = v2.client
    for fn, what in (
        (c.templates.get, "template 'ghost'"),
        (c.pods.get, "pod 'ghost'"),
        (c.pods.start, "pod 'ghost'"),
        (c.endpoints.get, "endpoint 'ghost'"),
        (c.network_volumes.get, "network volume 'ghost'"),
        (c.registry_auths.get, "container registry auth 'ghost'"),
    ):
        with pytest.raises(NotFound) as info:
            await v2.call(fn, "ghost")
        assert info.value.status == 404 and f"({what})" in str(info.value), str(info.value)


async def test_401_names_the_key_only_by_its_mask(v2: V2Harness) -> None:
    wrong = v2.new_client(api_key=WRONG_KEY)
    try:
        for fn in (wrong.pods.list, wrong.billing.pods):
            with pytest.raises(Unauthorized) as info:
                await v2.call(fn)
            text = str(info.value)
            assert info.value.status == 401 and f"[key sent: {mask(WRONG_KEY)}" in text
            assert not leaks(text)
        with pytest.raises(Unauthorized):
            await v2.call(wrong.templates.create, name="t", image="i")
        assert await v2.call(v2.client.templates.list) == []  # nothing was made
    finally:
        await v2.call(wrong.close)  # (in sync-asgi this closes the shared bridge: last)


async def provoke(h: V2Harness) -> list[BaseException]:
    """One of each failure a management call can end in."""
    caught: list[BaseException] = []
    c = h.client

    async def expect(fn: Any, *args: Any, **kw: Any) -> None:
        try:
            await h.call(fn, *args, **kw)
        except NbextError as exc:
            caught.append(exc)
        else:
            raise AssertionError(f"{fn} did not fail")

    wrong = h.new_client(api_key=WRONG_KEY)
    dead = h.new_client(base_url="http://127.0.0.1:9/v2", max_retries=1, transport=None)
    try:
        await expect(wrong.templates.list)  # 401
        await expect(c.pods.get, "nope")  # 404
        await expect(c.templates.create, name=KEY, image="i", disk=0)  # 422 from the service
        await expect(c.billing.pods, bucket_size=KEY)  # refused locally, quoting the input
        await expect(c.pods.create, image="i", extra_body={"key": KEY, "nan": float("nan")})
        await expect(dead.pods.list)  # connection refused, retried
        await expect(dead.templates.create, name="t", image="i")  # refused, never sent
    finally:
        await h.call(wrong.close)
        await h.call(dead.close)
    return caught


async def test_the_key_is_in_no_error_repr_or_log_record(
    v2: V2Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await v2.call(v2.client.templates.create, name="ok", image="i")  # a success logs too
    caught = await provoke(v2)
    assert len(caught) == 7
    assert {type(e).__name__ for e in caught} >= {
        "Unauthorized",
        "NotFound",
        "BadRequest",
        "ConnectionError",
    }
    for error in caught:
        assert not leaks("\n".join(walk(error, set()))), type(error)
    for resource in ("templates", "pods", "endpoints", "network_volumes", "registry_auths"):
        assert not leaks(repr(getattr(v2.client, resource)))
    records = [r.getMessage() for r in caplog.records] + [str(r.args) for r in caplog.records]
    assert records and not [text for text in records if any(s in text for s in SECRETS)]


async def test_a_refusal_that_quotes_the_input_masks_a_key_pasted_into_a_field(
    v2: V2Harness,
) -> None:
    """A choice's refusal quotes the value given; the client's own key is still masked."""
    with pytest.raises(BadRequest) as info:
        await v2.call(v2.client.billing.pods, bucket_size=KEY)
    text = "\n".join(walk(info.value, set()))
    assert not leaks(text) and f"got '{mask(KEY)}'" in str(info.value)
    assert info.value.sent is False
    with pytest.raises(BadRequest) as other:  # any other value is quoted as given
        await v2.call(v2.client.billing.pods, bucket_size="minute")
    assert "got 'minute'" in str(other.value)
