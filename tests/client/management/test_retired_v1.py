"""A client still asked to speak REST v1 after the service retired it.

The server here is what a retired interface looks like from outside: every v1 path
answers 410 Gone, or 404 with a page that is no record's. The client must say in one
line that v1 is retired and how to switch, not "pod not found".
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from nbext.client import APIError, Client, NotFound

from ..conftest import KEY
from ..test_misbehaving_servers import (
    RawServer,
    answer,
    answering,
    no_proxy_from_the_machine,
    serve,
)

__all__ = ["no_proxy_from_the_machine", "serve"]  # the fixtures, used by name

GONE = answer(
    b'{"message":"REST v1 has been retired"}', "Content-Type: application/json", status="410 Gone"
)
MISSING = answer(
    b"<html>404 page not found</html>", "Content-Type: text/html", status="404 Not Found"
)


def client_on(server: RawServer, version: str = "v1") -> Client:
    return Client(
        KEY,
        base_url=f"{server.url}/{version}",
        serverless_url=f"{server.url}/v2",
        max_retries=0,
        timeout=2.0,
        management_api="v1" if version == "v1" else None,
    )


@pytest.mark.parametrize("reply", [GONE, MISSING], ids=["410", "404"])
def test_a_retired_v1_says_so_and_how_to_switch(
    serve: Callable[..., RawServer], reply: bytes
) -> None:
    server = serve(answering(reply))
    with client_on(server) as client:
        with pytest.raises(APIError) as info:
            client.pods.list()
        with pytest.raises(APIError) as billing:
            client.billing.pods()
    for error in (info.value, billing.value):
        text = str(error)
        assert "\n" not in text and "REST v1 management interface is retired" in text
        assert "RUNPOD_MANAGEMENT_API" in text and "management_api" in text
        assert error.status in (404, 410)
    assert isinstance(info.value, NotFound) == (reply is MISSING)


def test_a_delete_on_a_gone_v1_says_so_too(serve: Callable[..., RawServer]) -> None:
    server = serve(answering(GONE))
    with client_on(server) as client, pytest.raises(APIError) as info:
        client.templates.delete("t1")
    assert info.value.status == 410 and "REST v1 management interface is retired" in str(info.value)


def test_a_404_for_one_record_is_still_that_record_missing(
    serve: Callable[..., RawServer],
) -> None:
    """On an id path a 404 is the record's: v1 may be alive, the pod is not."""
    server = serve(answering(MISSING))
    with client_on(server) as client, pytest.raises(NotFound) as info:
        client.pods.get("abc")
    assert "retired" not in str(info.value) and "pod 'abc'" in str(info.value)


def test_a_v2_client_never_calls_a_404_retirement(serve: Callable[..., RawServer]) -> None:
    server = serve(answering(MISSING))
    with client_on(server, "v2") as client, pytest.raises(NotFound) as info:
        client.pods.list()
    assert "retired" not in str(info.value)
