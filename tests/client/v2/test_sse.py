"""The Server-Sent Events reading of log streams, with framing servers really send."""

from __future__ import annotations

import httpx
import pytest

from nbext.client import APIError
from nbext.client._calls import Call
from nbext.client._resources.logs import read_events
from nbext.client._retry import Kind
from nbext.client._sse import Event, parse

LINE = '{"ts":"2026-01-01T00:00:01.000Z","source":"container","line":"%s"}'


def test_events_with_ids_and_the_retry_hint() -> None:
    parsed = parse(b"retry: 1000\n\nid: a/1\ndata: one\n\nid: a/2\ndata: two\n\n")
    assert parsed.events == [Event("one", "a/1"), Event("two", "a/2")]
    assert parsed.retry_ms == 1000


def test_crlf_cr_comments_and_multi_line_data() -> None:
    body = (
        b": keep-alive\r\nid: 7\r\ndata: first\r\ndata: second\r\n\r\n"
        b"data: x\r\revent: y\rdata: z\r\r"
    )
    parsed = parse(body)
    assert parsed.events == [Event("first\nsecond", "7"), Event("x", "7"), Event("z", "7", "y")]


def test_an_event_cut_before_its_blank_line_is_not_dispatched() -> None:
    parsed = parse("id: 1\ndata: whole\n\nid: 2\ndata: cut")
    assert parsed.events == [Event("whole", "1")]


def test_a_byte_order_mark_and_fields_without_a_space() -> None:
    parsed = parse("\ufeffretry:250\n\nid:9\ndata:{}\n\n".encode())
    assert parsed.retry_ms == 250 and parsed.events == [Event("{}", "9")]


def test_bad_retry_values_and_unknown_fields_are_ignored() -> None:
    parsed = parse("retry: soon\nretry: -5\nwhat: ever\ndata: x\n\n")
    assert parsed.retry_ms is None and parsed.events == [Event("x", "")]


def test_blocks_without_data_are_no_events() -> None:
    parsed = parse("id: 1\n\nevent: ping\n\ndata:\n\n\n\n")
    assert parsed.events == []


CALL = Call(
    "GET", "pods/p1/logs", "pods.logs", Kind.IDEMPOTENT, "", management=True, subject="pod 'p1'"
)


def test_log_lines_carry_their_cursor_and_the_hint_in_seconds() -> None:
    body = f"retry: 1500\n\nid: c1\ndata: {LINE % 'hello'}\n\n".encode()
    lines, retry = read_events(CALL, httpx.Response(200, content=body))
    assert [(e.line, e.source, e.cursor) for e in lines] == [("hello", "container", "c1")]
    assert retry == 1.5


@pytest.mark.parametrize("data", ["not json", "[1, 2]", '{"line": "no ts"}'])
def test_an_unreadable_event_is_an_api_error_naming_the_call(data: str) -> None:
    body = f"id: c1\ndata: {data}\n\n".encode()
    with pytest.raises(APIError, match=r"GET pods/p1/logs \(pod 'p1'\) answered 200 with a log"):
        read_events(CALL, httpx.Response(200, content=body))
