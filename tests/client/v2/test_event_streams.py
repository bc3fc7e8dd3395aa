"""Log streams as servers really send them, through the client's own HTTP path.

``Scripted`` is the network, not the service: each request gets the next canned answer,
and the requests are kept (their ``Last-Event-ID``). Framing comes from the SSE
specification: CR, LF and CRLF line ends, comments, multi-line data, fields without a
space, an event cut before its blank line. The client's clock is a test clock, so the
``retry`` hints a follower waits are recorded, never slept.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from nbext.client import APIError, AsyncClient, Client, NotFound

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
BASE = "https://rest.example/v2"


def data(line: str, ts: str = "2026-01-01T00:00:01.000Z", source: str = "container") -> str:
    return json.dumps({"ts": ts, "source": source, "line": line})


class Clock:
    """The client's clock in these tests: sleeping records the wait and moves time."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def _to(self, instant: float) -> None:
        self.slept.append(round(instant - self.t, 6))
        self.t = max(self.t, instant)


class SyncClock(Clock):
    def sleep_until(self, instant: float) -> None:
        self._to(instant)


class AsyncClock(Clock):
    async def sleep_until(self, instant: float) -> None:
        self._to(instant)


class Scripted(httpx.MockTransport):
    """Answers request n with ``answers[n]``: bytes (an event stream) or a status."""

    def __init__(self, *answers: bytes | int) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        super().__init__(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers[len(self.requests) - 1]
        if isinstance(answer, int):
            problem = {"title": "Not Found", "status": answer, "detail": "pod p1 not found"}
            return httpx.Response(
                answer, json=problem, headers={"content-type": "application/problem+json"}
            )
        return httpx.Response(200, content=answer, headers={"content-type": "text/event-stream"})


def run(flavour: str, transport: Scripted, use: Any) -> tuple[Any, Clock]:
    """``use(client)`` with a sync or an async client on ``transport``; its result."""
    if flavour == "sync":
        clock: Clock = SyncClock()
        with Client(KEY, base_url=BASE, transport=transport, clock=clock) as client:  # type: ignore[arg-type]
            result = use(client)
            return (list(result) if hasattr(result, "__next__") else result), clock

    async def main() -> Any:
        async with AsyncClient(KEY, base_url=BASE, transport=transport, clock=aclock) as client:  # type: ignore[arg-type]
            result = use(client)
            if hasattr(result, "__aiter__"):
                return [item async for item in result]
            return await result

    aclock = AsyncClock()
    return asyncio.run(main()), aclock


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_odd_framing(flavour: str) -> None:
    body = (
        ": a comment, then CRLF lines and two data lines in one event\r\n"
        f"id: c1\r\ndata: {data('one')}\r\n\r\n"
        f"id:c2\rdata:{data('two')}\r\r"
        "retry: 10\n\n"
        f"event: log\nid: c3\ndata: {data('three')}\n\n"
        f"id: c4\ndata: {data('cut before its blank line')}"
    ).encode()
    lines, _ = run(flavour, Scripted(body), lambda c: c.pods.logs("p1"))
    assert [(x.line, x.cursor) for x in lines] == [("one", "c1"), ("two", "c2"), ("three", "c3")]


def test_multi_line_data_is_joined_with_newlines(flavour: str) -> None:
    body = (
        'id: c1\ndata: {"ts": "2026-01-01T00:00:01Z",\ndata: "source": "system", "line": "x"}\n\n'
    )
    lines, _ = run(flavour, Scripted(body.encode()), lambda c: c.pods.logs("p1"))
    assert [(x.line, x.source) for x in lines] == [("x", "system")]


def test_the_query_and_headers_sent(flavour: str) -> None:
    transport = Scripted(b"")
    run(
        flavour,
        transport,
        lambda c: c.pods.logs("p1", tail=5, source="system", since="2026-01-01T01:00:00+01:00"),
    )
    sent = transport.requests[0]
    assert sent.url.path == "/v2/pods/p1/logs"
    assert sent.url.params.multi_items() == [
        ("source", "system"),
        ("tail", "5"),
        ("since", "2026-01-01T00:00:00.000Z"),
    ]
    assert sent.headers["accept"] == "text/event-stream" and "last-event-id" not in sent.headers


def test_an_event_that_is_not_a_log_line_is_an_api_error(flavour: str) -> None:
    with pytest.raises(APIError, match=r"GET pods/p1/logs \(pod 'p1'\) sent a log event it cannot"):
        run(flavour, Scripted(b"id: 1\ndata: not json\n\n"), lambda c: c.pods.logs("p1"))


def test_a_success_that_is_not_an_event_stream_is_an_api_error(flavour: str) -> None:
    class Json(Scripted):
        def _answer(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, json={"lines": []})

    with pytest.raises(APIError, match="content type 'application/json', not an event stream"):
        run(flavour, Json(), lambda c: c.pods.logs("p1"))


def test_a_follower_resumes_from_the_last_cursor_after_the_hint(flavour: str) -> None:
    transport = Scripted(
        f"retry: 250\n\nid: c1\ndata: {data('one')}\n\nid: c2\ndata: {data('two')}\n\n".encode(),
        b": nothing new\n\n",
        f"id: c3\ndata: {data('three')}\n\n".encode(),
        404,
    )
    lines, clock = run(flavour, transport, lambda c: c.pods.follow_logs("p1", tail=2))
    assert [x.line for x in lines] == ["one", "two", "three"]
    sent = transport.requests
    assert sent[0].url.params["tail"] == "2" and "last-event-id" not in sent[0].headers
    assert [r.headers["last-event-id"] for r in sent[1:]] == ["c2", "c2", "c3"]
    assert all("tail" not in r.url.params for r in sent[1:])  # the cursor says where
    assert clock.slept == [0.25, 0.25, 0.25]  # the server's hint, on the client's clock


def test_a_hint_of_zero_does_not_make_a_busy_loop(flavour: str) -> None:
    transport = Scripted(f"retry: 0\n\nid: c1\ndata: {data('one')}\n\n".encode(), 404)
    _, clock = run(flavour, transport, lambda c: c.pods.follow_logs("p1"))
    assert clock.slept == [0.1]


def test_without_a_hint_a_follower_waits_three_seconds(flavour: str) -> None:
    transport = Scripted(f"id: c1\ndata: {data('one')}\n\n".encode(), 404)
    _, clock = run(flavour, transport, lambda c: c.pods.follow_logs("p1"))
    assert clock.slept == [3.0]


def test_a_follower_of_a_pod_that_never_was_raises(flavour: str) -> None:
    with pytest.raises(NotFound, match="pod 'p1'"):
        run(flavour, Scripted(404), lambda c: c.pods.follow_logs("p1"))
