"""What the v2 resources refuse before sending anything: a v1 client, and bad input.

The clients here point at a port nothing listens on: had anything been sent, the error
would be a ConnectionError, not the refusal each test expects.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from nbext.client import AsyncClient, BadRequest, Client, UnsupportedOperation

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
NOWHERE = "http://127.0.0.1:9"

V2_ONLY: list[tuple[str, Callable[[Any], Any]]] = [
    ("catalog.gpus", lambda c: c.catalog.gpus(available=True)),
    ("catalog.gpu", lambda c: c.catalog.gpu("NVIDIA A40")),
    ("catalog.cpus", lambda c: c.catalog.cpus()),
    ("catalog.cpu", lambda c: c.catalog.cpu("cpu3c")),
    ("catalog.datacenters", lambda c: c.catalog.datacenters()),
    ("catalog.datacenter", lambda c: c.catalog.datacenter("EU-RO-1")),
    ("catalog.templates", lambda c: c.catalog.templates()),
    ("pods.logs", lambda c: c.pods.logs("p1", tail=5)),
    ("pods.follow_logs", lambda c: c.pods.follow_logs("p1")),
    ("endpoints.workers", lambda c: c.endpoints.workers("e1")),
    ("endpoints.releases", lambda c: c.endpoints.releases("e1")),
    ("endpoints.worker_logs", lambda c: c.endpoints.worker_logs("e1", "w1")),
    ("endpoints.follow_worker_logs", lambda c: c.endpoints.follow_worker_logs("e1", "w1")),
    ("ssh_keys.list", lambda c: c.ssh_keys.list()),
    ("ssh_keys.set", lambda c: c.ssh_keys.set([])),
    ("ssh_keys.add", lambda c: c.ssh_keys.add("ssh-ed25519 AAAA me")),
    ("ssh_keys.remove", lambda c: c.ssh_keys.remove("ssh-ed25519 AAAA me")),
    ("clusters.list", lambda c: c.clusters.list()),
    ("clusters.get", lambda c: c.clusters.get("c1")),
    ("clusters.update", lambda c: c.clusters.update("c1", name="x")),
    ("clusters.delete", lambda c: c.clusters.delete("c1")),
    ("clusters.pods", lambda c: c.clusters.pods("c1")),
    (
        "clusters.create",
        lambda c: c.clusters.create(
            name="c", type="RAY", gpu_type_id="g", gpu_count_per_pod=1, pod_count=2
        ),
    ),
    ("registry_delegations.list", lambda c: c.registry_delegations.list()),
    (
        "registry_delegations.create",
        lambda c: c.registry_delegations.create("arn:aws:ecr:us-east-2:418399314813:repository/a"),
    ),
    ("registry_delegations.delete", lambda c: c.registry_delegations.delete("d1")),
]


def client(flavour: str, version: str) -> Any:
    cls = AsyncClient if flavour == "async" else Client
    return cls(
        KEY,
        base_url=f"{NOWHERE}/{version}",
        serverless_url=f"{NOWHERE}/v2",
        max_retries=0,
        management_api=version,
    )


def attempt(flavour: str, version: str, call: Callable[[Any], Any]) -> None:
    """Call, and drive what it returns (a value, an awaitable, an iterator) one step."""
    c = client(flavour, version)

    async def drive() -> None:
        result = call(c)
        if inspect.isawaitable(result):
            await result
        elif hasattr(result, "__anext__"):
            await result.__anext__()
        elif hasattr(result, "__next__"):
            next(result)

    asyncio.run(drive())


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize(("operation", "call"), V2_ONLY, ids=[op for op, _ in V2_ONLY])
def test_a_v1_client_refuses_v2_resources_in_one_line(
    flavour: str, operation: str, call: Callable[[Any], Any]
) -> None:
    c = client(flavour, "v1")
    with pytest.raises(UnsupportedOperation) as caught:
        result = call(c)  # followers refuse when called, before being iterated
        if inspect.isawaitable(result):
            asyncio.run(result)
    message = str(caught.value)
    assert message.startswith(f"{operation} needs the management interface REST v2")
    assert "management_api" in message and "RUNPOD_MANAGEMENT_API" in message
    assert "\n" not in message


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
        attempt(flavour, "v2", call)
    assert fragment in str(caught.value) and caught.value.sent is False
    assert "\n" not in str(caught.value)


def test_the_refusals_would_have_noticed_a_request() -> None:
    """The premise of this file: a request to NOWHERE fails as a connection error."""
    from nbext.client import ConnectionError

    with pytest.raises(ConnectionError):
        attempt("sync", "v2", lambda c: c.pods.logs("p1"))


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
        attempt(flavour, "v2", call)
    text = str(caught.value)
    assert KEY not in text and KEY[-20:] not in text and "must be" in text
    assert caught.value.__context__ is None and caught.value.sent is False
