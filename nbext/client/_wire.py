"""HTTP/1.1 as bytes: requests written, responses read. Sans-I/O: no sockets, no clock.

The client's own connections (``_sockets`` for ``Client``, ``_aio`` for ``AsyncClient``)
use this instead of httpx's stack because a batch sends thousands of small requests a
second, and per request httpx spends about ten times what the exchange itself costs
(URL and header objects, cookie jars, h11's event machinery, a pool that rescans every
connection on each event). The job interface needs little of HTTP: one origin, JSON
bodies of known length, keep-alive. What it needs is written here once, for both.

Responses are read per RFC 9112: a status line, headers, then a body framed by
``Transfer-Encoding: chunked``, by ``Content-Length``, or by the connection's close;
interim 1xx answers are skipped; gzip and deflate bodies are decoded.
"""

from __future__ import annotations

import http
import json
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
"""Longest status line plus headers accepted; a longer head is not a service's answer."""
ACCEPT_ENCODING = "gzip, deflate"
NO_BODY_STATUSES = frozenset({204, 304})
HEAD, LENGTH, CHUNKED, CLOSE = range(4)
"""What the parser reads next: the head, or a body framed by length, chunks or close."""


class ProtocolError(Exception):
    """The peer sent bytes that are not an HTTP/1.1 response (or stopped mid-way)."""


@dataclass(frozen=True)
class Origin:
    """Where requests go: scheme, host, port, and the path every request starts with."""

    scheme: str
    host: str
    port: int
    prefix: str
    """The URL's path without its trailing slash (``/v2``), prepended to each call's path."""
    host_header: str

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @classmethod
    def parse(cls, url: str) -> Origin:
        """``http(s)://host[:port][/prefix]``; anything else raises ValueError."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ValueError(f"only http and https URLs are supported, got {url!r}")
        host = parts.hostname
        if not host:
            raise ValueError(f"URL {url!r} names no host")
        default = 443 if scheme == "https" else 80
        port = parts.port or default
        shown = f"[{host}]" if ":" in host else host
        host_header = shown if port == default else f"{shown}:{port}"
        return cls(scheme, host, port, parts.path.rstrip("/"), host_header)


def encode_request(
    method: str, target: str, host: str, headers: list[tuple[str, str]], body: bytes | None
) -> bytes:
    """One request as it goes on the wire: head and body in a single buffer.

    A single buffer is one ``send``: the server reads the whole request in one go, and no
    small segment waits on Nagle's algorithm.
    """
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


class Reply:
    """A complete HTTP response: what the client's flows read of an answer.

    It has the attributes of ``httpx.Response`` that the flows use (``status_code``,
    ``headers`` with lower-case names, ``json()``, ``text``, ``reason_phrase``), so the
    flows read answers from either transport the same way.
    """

    __slots__ = ("content", "headers", "reason_phrase", "status_code")

    def __init__(
        self, status_code: int, reason_phrase: str, headers: dict[str, str], content: bytes
    ) -> None:
        self.status_code = status_code
        self.reason_phrase = reason_phrase
        self.headers = headers
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content)

    @property
    def text(self) -> str:
        charset = "utf-8"
        for param in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return f"<Reply [{self.status_code} {self.reason_phrase}]>"


class ResponseParser:
    """Reads one response from the bytes a connection receives, fed as they arrive.

    ``feed(data)`` returns the ``Reply`` once it is complete (None until then);
    ``feed_eof()`` says the peer closed, which completes a close-delimited body and is an
    error anywhere else. After a reply, ``leftover`` holds bytes that arrived beyond it
    (a server must not send any unasked; the connection is then not reused) and
    ``keep_alive`` says whether the connection may carry another request.

    Written for the common case first: a whole ``Content-Length`` answer in one read
    costs one search for the head's end, one split of its lines and one slice.
    """

    __slots__ = (
        "_body",
        "_buffer",
        "_chunk_left",
        "_headers",
        "_mode",
        "_reason",
        "_remaining",
        "_status",
        "keep_alive",
        "leftover",
        "no_body",
        "started",
    )

    def __init__(self, *, no_body: bool = False) -> None:
        self.no_body = no_body
        """The request was HEAD: the answer has headers only, whatever they say."""
        self._buffer = b""
        self._mode = HEAD
        self._status = 0
        self._reason = ""
        self._headers: dict[str, str] = {}
        self._body = bytearray()
        self._remaining = 0
        self._chunk_left = 0
        self.keep_alive = False
        self.leftover = b""
        self.started = False
        """Whether any byte of the answer has arrived (a request answered by nothing
        at all was perhaps never read by the server)."""

    def feed(self, data: bytes) -> Reply | None:
        if data:
            self.started = True
            self._buffer = self._buffer + data if self._buffer else data
        while True:
            mode = self._mode
            if mode == HEAD:
                if not self._read_head():
                    return None
            elif mode == LENGTH:
                buffer, size = self._buffer, self._remaining
                if len(buffer) < size:
                    return None
                self._buffer = buffer[size:]
                return self._finish(buffer[:size] if len(buffer) > size else buffer)
            elif mode == CHUNKED:
                if self._read_chunks():
                    return self._finish(bytes(self._body))
                return None
            else:  # CLOSE: the body runs to the end of the connection
                self._body += self._buffer
                self._buffer = b""
                return None

    def feed_eof(self) -> Reply:
        """The peer closed the connection; the reply if that completes it."""
        if self._mode == CLOSE:
            self._body += self._buffer
            self._buffer = b""
            self.keep_alive = False
            return self._finish(bytes(self._body))
        if not self.started:
            raise ProtocolError("Server disconnected without sending a response.")
        raise ProtocolError("Server disconnected in the middle of a response.")

    # ---- the head ------------------------------------------------------------------------

    def _read_head(self) -> bool:
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD:
                raise ProtocolError(f"response head over {MAX_HEAD} bytes")
            return False
        lines = buffer[:end].decode("latin-1").split("\r\n")
        self._buffer = buffer[end + 4 :]
        first = lines[0]
        code = first[9:12]
        if (
            first[:7] != "HTTP/1."
            or first[8:9] != " "
            or len(code) != 3
            or not code.isdigit()
            or first[12:13] not in ("", " ")
        ):
            raise ProtocolError(f"not an HTTP/1.x status line: {first[:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        name = ""
        for line in lines[1:]:
            if line[:1] in (" ", "\t") and name:  # obsolete line folding: a continuation
                headers[name] += " " + line.strip()
                continue
            key, colon, value = line.partition(":")
            if not colon or not key or key[-1:] in (" ", "\t"):
                raise ProtocolError(f"malformed response header line: {line[:80]!r}")
            name = key.lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if 100 <= status < 200:  # interim (100 Continue, 103 Early Hints): the real one follows
            return True
        self._status, self._reason, self._headers = status, first[13:], headers
        connection = headers.get("connection")
        if first[7] == "0":  # HTTP/1.0: keep-alive only when asked for
            self.keep_alive = connection is not None and "keep-alive" in connection.lower()
        else:
            self.keep_alive = connection is None or "close" not in connection.lower()
        self._choose_framing()
        return True

    def _choose_framing(self) -> None:
        headers = self._headers
        if self.no_body or self._status in NO_BODY_STATUSES:
            self._mode, self._remaining = LENGTH, 0
            return
        encoding = headers.get("transfer-encoding")
        if encoding is not None:
            if encoding.lower().rsplit(",", 1)[-1].strip() == "chunked":
                self._mode, self._chunk_left = CHUNKED, -1
            else:
                self._mode, self.keep_alive = CLOSE, False
            return
        length = headers.get("content-length")
        if length is None:
            self._mode, self.keep_alive = CLOSE, False
            return
        if not length.isdigit():  # also repeated values ("5, 5"): same or not, refuse
            values = {v.strip() for v in length.split(",")}
            if len(values) != 1 or not (length := values.pop()).isdigit():
                raise ProtocolError(f"invalid Content-Length: {headers['content-length']!r}")
        self._mode, self._remaining = LENGTH, int(length)

    # ---- chunked bodies ------------------------------------------------------------------

    def _read_chunks(self) -> bool:
        """Consume what the buffer holds of a chunked body; True once it (and trailers) end."""
        buffer = self._buffer
        try:
            while True:
                if self._chunk_left == -1:  # a size line is due
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        if len(buffer) > MAX_HEAD:
                            raise ProtocolError("chunk size line too long")
                        return False
                    size_text = buffer[:end].split(b";", 1)[0].strip()
                    buffer = buffer[end + 2 :]
                    try:
                        size = int(size_text, 16)
                    except ValueError:
                        raise ProtocolError(f"invalid chunk size: {size_text[:20]!r}") from None
                    if size < 0:
                        raise ProtocolError("negative chunk size")
                    self._chunk_left = size if size else -2
                elif self._chunk_left == -2:  # after the last chunk: trailers, a blank line
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        if len(buffer) > MAX_HEAD:
                            raise ProtocolError("chunked trailer too long")
                        return False
                    buffer = buffer[end + 2 :]
                    if end == 0:
                        return True
                else:  # data of the current chunk, then its CRLF
                    need = self._chunk_left + 2
                    if len(buffer) < need:
                        return False
                    if buffer[need - 2 : need] != b"\r\n":
                        raise ProtocolError("chunk data not followed by CRLF")
                    self._body += buffer[: self._chunk_left]
                    buffer = buffer[need:]
                    self._chunk_left = -1
        finally:
            self._buffer = buffer

    # ---- done ----------------------------------------------------------------------------

    def _finish(self, body: bytes) -> Reply:
        self.leftover = self._buffer
        if self.leftover:
            self.keep_alive = False
        headers = self._headers
        coding = headers.get("content-encoding")
        if coding and body:
            coding = coding.strip().lower()
            if coding != "identity":
                body = _decode(coding, body)
        return Reply(self._status, self._reason or _phrase(self._status), headers, body)


def _decode(coding: str, body: bytes) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if coding == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:  # some servers send raw deflate without the zlib wrapper
                return zlib.decompress(body, -zlib.MAX_WBITS)
    except zlib.error as exc:
        raise ProtocolError(f"cannot decode a {coding} body: {exc}") from None
    return body  # a coding we did not ask for: hand it over as it came, as httpx does


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""
