"""Finding media at any depth of an output, by content rather than by key.

A string is a base64 blob only when its decoded head carries a known signature and the
whole then decodes strictly, so a word or hash in the base64 alphabet is never taken for
a file; only the head is decoded before a match, so a large text costs next to nothing.
"""

from __future__ import annotations

import binascii
import re
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes, urlsplit

from .formats import EXTENSIONS, SNIFF_BYTES, Format, duration, format_for_mime, image_size, sniff
from .found import Media, MediaList, Source

MIN_BLOB_CHARS = 24
"""Shorter strings are never blobs: no media file fits in 18 bytes."""
MAX_DEPTH = 64
"""Deeper nesting is not searched (and a cyclic Python object cannot recurse forever)."""

_HEAD_CHARS = 64  # decodes to 48 bytes >= SNIFF_BYTES
_B64_START = re.compile(r"[A-Za-z0-9+/_-]{4}")
_DATA_URI = re.compile(r"data:([^,;]*)((?:;[^,;]*)*),", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s\"'<>]+", re.IGNORECASE)
_URL_FORMAT_PARAMS = ("response-content-type", "content-type", "mime", "format", "fm", "ext")


SCALARS = frozenset({int, float, bool, type(None)})
"""Types that never hold media: skipped without a call, as long lists of numbers are common."""


def find(output: Any) -> MediaList:
    """Every image, sound and video in ``output`` (JSON values, bytes, nested at any
    depth), which is only read."""
    found: list[Media] = []
    stack: list[tuple[Any, str, int]] = [(output, "", 0)]
    while stack:  # depth first, in document order: children are pushed in reverse
        value, path, depth = stack.pop()
        if isinstance(value, str):
            item = detect(value, path)
        elif isinstance(value, bytes | bytearray | memoryview):
            item = describe_bytes(bytes(value), path, "bytes")
        else:
            item = None
            if depth < MAX_DEPTH:
                stack.extend(reversed(_children(value, path, depth + 1)))
        if item is not None:
            found.append(item)
    return MediaList(found)


def _children(value: Any, path: str, depth: int) -> list[tuple[Any, str, int]]:
    if isinstance(value, dict):
        return [(v, join_key(path, k), depth) for k, v in value.items() if type(v) not in SCALARS]
    if isinstance(value, list | tuple):
        return [(v, f"{path}[{i}]", depth) for i, v in enumerate(value) if type(v) not in SCALARS]
    return []


def join_key(path: str, key: Any) -> str:
    """``path`` extended by a dict key: ``.key`` for a name, ``['some key']`` for others."""
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def detect(text: str, path: str = "") -> Media | None:
    """The media ``text`` holds (a base64 blob, a ``data:`` URI, a media URL), or None."""
    start = text[:5].lower()
    if start == "data:":
        return _data_uri(text, path)
    if start in ("http:", "https"):
        return _url(text.strip(), path)
    return _base64(text, path) if len(text) >= MIN_BLOB_CHARS else None


def describe_bytes(
    data: bytes, path: str, source: Source, declared: Format | None = None
) -> Media | None:
    """A ``Media`` for a file's bytes: their signature decides, else the declared format."""
    fmt = sniff(data[: SNIFF_BYTES * 2]) or declared
    if fmt is None:
        return None
    size = image_size(fmt, data) if fmt.kind == "image" else None
    return Media(
        path=path,
        format=fmt,
        source=source,
        data=data,
        width=size[0] if size else None,
        height=size[1] if size else None,
        duration=duration(fmt, data) if fmt.kind == "audio" else None,
    )


def _base64(text: str, path: str) -> Media | None:
    if not _B64_START.match(text):
        return None
    head = _decode(text[:_HEAD_CHARS], partial=len(text) > _HEAD_CHARS)
    if head is None or sniff(head) is None:
        return None
    data = _decode(text)
    if data is None:
        return None
    return describe_bytes(data, path, "base64")


def _decode(text: str, partial: bool = False) -> bytes | None:
    """Strict base64 (standard or URL-safe alphabet, padding optional); None if not."""
    if "\n" in text or "\r" in text:  # MIME-style line breaks every 76 characters
        text = text.replace("\r", "").replace("\n", "")
    if "-" in text or "_" in text:
        text = text.translate(_URLSAFE)
    if partial:
        text = text[: len(text) - len(text) % 4]
    else:
        text += "=" * (-len(text) % 4)
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


_URLSAFE = str.maketrans("-_", "+/")


def _data_uri(text: str, path: str) -> Media | None:
    match = _DATA_URI.match(text)
    if match is None:
        return None
    declared = format_for_mime(match.group(1)) if match.group(1) else None
    payload = text[match.end() :]
    if ";base64" in match.group(2).lower():
        data = _decode(payload.strip())
    else:
        data = unquote_to_bytes(payload)
    if data is None:
        return None
    return describe_bytes(data, path, "data-uri", declared=declared)


def _url(text: str, path: str) -> Media | None:
    if not _URL.fullmatch(text):
        return None
    parts = urlsplit(text)
    name = parts.path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    fmt = EXTENSIONS.get(ext)
    if fmt is None:
        for key, value in parse_qsl(parts.query):
            if key.lower() in _URL_FORMAT_PARAMS:
                fmt = format_for_mime(value) or EXTENSIONS.get(value.lower())
                if fmt is not None:
                    break
    if fmt is None:
        return None
    return Media(path=path, format=fmt, source="url", url=text)
