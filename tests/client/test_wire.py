"""HTTP/1.1 as bytes: the response reader and request writer, without any socket."""

from __future__ import annotations

import gzip
import zlib

import pytest

from nbext.client._wire import Origin, ProtocolError, Reply, ResponseParser, encode_request

BODY = b'{"id":"j1","status":"COMPLETED","output":{"i":1}}'


def head(status: str = "200 OK", *headers: str, version: str = "HTTP/1.1") -> bytes:
    return ("\r\n".join([f"{version} {status}", *headers]) + "\r\n\r\n").encode("latin-1")


def whole(body: bytes = BODY, *extra: str) -> bytes:
    return head("200 OK", f"content-length: {len(body)}", *extra) + body


def read_in(pieces: list[bytes], parser: ResponseParser | None = None) -> Reply:
    parser = parser or ResponseParser()
    reply = None
    for piece in pieces:
        assert reply is None, "a reply came before all its bytes"
        reply = parser.feed(piece)
    assert reply is not None
    return reply


def test_a_content_length_answer_in_one_piece_or_byte_by_byte() -> None:
    data = whole(BODY, "Content-Type: application/json", "X-Request-Id: r-1")
    for pieces in ([data], [data[i : i + 1] for i in range(len(data))]):
        parser = ResponseParser()
        reply = read_in(pieces, parser)
        assert reply.status_code == 200 and reply.reason_phrase == "OK"
        assert reply.content == BODY and reply.json()["output"] == {"i": 1}
        assert reply.headers["x-request-id"] == "r-1"  # names are lower-cased
        assert parser.keep_alive and parser.leftover == b""


def test_chunked_with_extensions_and_trailers_in_any_split() -> None:
    data = (
        head("200 OK", "Transfer-Encoding: chunked")
        + b"5;name=value\r\nhello\r\n"
        + b"7\r\n, world\r\n"
        + b"0\r\nX-Trailer: yes\r\n\r\n"
    )
    for size in (1, 3, 7, len(data)):
        parser = ResponseParser()
        reply = read_in([data[i : i + size] for i in range(0, len(data), size)], parser)
        assert reply.content == b"hello, world"
        assert parser.keep_alive


def test_a_body_without_length_runs_to_the_close() -> None:
    parser = ResponseParser()
    assert parser.feed(head("200 OK") + b"part one, ") is None
    assert parser.feed(b"part two") is None
    reply = parser.feed_eof()
    assert reply.content == b"part one, part two"
    assert not parser.keep_alive


@pytest.mark.parametrize(
    ("version", "connection", "keep"),
    [
        ("HTTP/1.1", None, True),
        ("HTTP/1.1", "close", False),
        ("HTTP/1.1", "Keep-Alive", True),
        ("HTTP/1.0", None, False),
        ("HTTP/1.0", "keep-alive", True),
    ],
)
def test_keep_alive_follows_version_and_connection(
    version: str, connection: str | None, keep: bool
) -> None:
    extra = [f"Connection: {connection}"] if connection else []
    parser = ResponseParser()
    parser.feed(head("200 OK", "Content-Length: 2", *extra, version=version) + b"{}")
    assert parser.keep_alive is keep


def test_interim_answers_are_skipped() -> None:
    data = head("100 Continue") + head("103 Early Hints", "Link: </x>") + whole()
    reply = read_in([data])
    assert reply.status_code == 200 and reply.content == BODY


def test_answers_that_carry_no_body() -> None:
    reply = read_in([head("204 No Content", "Content-Length: 10")])
    assert reply.status_code == 204 and reply.content == b""
    reply = read_in([head("200 OK", "Content-Length: 10")], ResponseParser(no_body=True))
    assert reply.content == b""  # the answer to a HEAD request


def test_gzip_and_deflate_bodies_are_decoded() -> None:
    for coding, packed in (
        ("gzip", gzip.compress(BODY)),
        ("deflate", zlib.compress(BODY)),
        ("deflate", zlib.compress(BODY)[2:-4]),  # raw deflate, as some servers send it
    ):
        data = head("200 OK", f"Content-Length: {len(packed)}", f"Content-Encoding: {coding}")
        assert read_in([data + packed]).content == BODY


def test_reason_phrase_and_text() -> None:
    reply = read_in([head("429", "Content-Length: 0")])
    assert reply.reason_phrase == "Too Many Requests"  # none sent: the standard one
    body = "café".encode("latin-1")
    data = head(
        "400 Bad", f"Content-Length: {len(body)}", "Content-Type: text/plain; charset=latin-1"
    )
    reply = read_in([data + body])
    assert reply.reason_phrase == "Bad" and reply.text == "café"


def test_bytes_beyond_the_answer_make_the_connection_unfit() -> None:
    parser = ResponseParser()
    reply = parser.feed(whole() + b"HTTP/1.1 200 OK\r\n")
    assert reply is not None and parser.leftover.startswith(b"HTTP/1.1")
    assert not parser.keep_alive


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP/1.x status line"),
        (head("200 OK", "no colon here"), "malformed response header line"),
        (head("200 OK", "Bad Name : x"), "malformed response header line"),
        (head("200 OK", "Content-Length: ten"), "invalid Content-Length"),
        (head("200 OK", "Content-Length: 5", "Content-Length: 6"), "invalid Content-Length"),
        (head("200 OK", "Transfer-Encoding: chunked") + b"zz\r\n", "invalid chunk size"),
        (head("200 OK", "Transfer-Encoding: chunked") + b"2\r\nabXY", "not followed by CRLF"),
        (head("200 OK", "Content-Length: 3", "Content-Encoding: gzip") + b"abc", "cannot decode"),
    ],
)
def test_what_is_not_http_is_refused_with_a_reason(data: bytes, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        ResponseParser().feed(data)


def test_repeated_equal_content_lengths_are_one() -> None:
    data = head("200 OK", "Content-Length: 2", "Content-Length: 2") + b"{}"
    assert read_in([data]).content == b"{}"


def test_a_close_before_the_end_is_an_error_that_says_how_far_it_got() -> None:
    with pytest.raises(ProtocolError, match="without sending a response"):
        ResponseParser().feed_eof()
    parser = ResponseParser()
    parser.feed(whole()[:-3])
    with pytest.raises(ProtocolError, match="middle of a response"):
        parser.feed_eof()


def test_an_endless_head_is_refused() -> None:
    parser = ResponseParser()
    parser.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(ProtocolError, match="head over"):
        parser.feed(b"X-Filler: " + b"a" * 70_000)


def test_a_request_is_one_buffer_with_host_and_length() -> None:
    data = encode_request("POST", "/v2/e/run", "api.example:8443", [("A", "b")], b'{"x":1}')
    assert data == (
        b"POST /v2/e/run HTTP/1.1\r\nHost: api.example:8443\r\nA: b\r\n"
        b'Content-Length: 7\r\n\r\n{"x":1}'
    )
    assert encode_request("GET", "/s", "h", [], None) == b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n"


def test_origins() -> None:
    https = Origin.parse("https://api.runpod.ai/v2/")
    assert (https.scheme, https.host, https.port, https.prefix) == (
        "https",
        "api.runpod.ai",
        443,
        "/v2",
    )
    assert https.host_header == "api.runpod.ai"
    local = Origin.parse("http://127.0.0.1:8000/v2")
    assert local.port == 8000 and local.host_header == "127.0.0.1:8000"
    six = Origin.parse("http://[::1]:9/v1")
    assert six.host == "::1" and six.host_header == "[::1]:9"
    for bad in ("ftp://x/v2", "http:///v2", "not a url"):
        with pytest.raises(ValueError):
            Origin.parse(bad)
