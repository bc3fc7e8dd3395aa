"""The output as a person wants to read it: every blob replaced by a short tag.

A megabyte of base64 tells a reader nothing and can stall the page; its tag (``<PNG
512×512, 340 KB>``) says what it is. Long plain strings are cut too.
"""

from __future__ import annotations

from typing import Any

from .detect import MAX_DEPTH, SCALARS, describe_bytes, detect, join_key

DEFAULT_MAX_TEXT = 2000
"""Characters of a plain string a preview keeps before cutting it."""


def preview(output: Any, max_text: int | None = DEFAULT_MAX_TEXT) -> Any:
    """A copy of ``output`` with each media blob replaced by its tag; ``output`` is not changed.

    Strings longer than ``max_text`` characters (None: no limit) end in
    ``… (N characters)``; bytes that are not media become ``<N bytes>``.
    """
    return _preview(output, "", 0, max_text)


def _preview(value: Any, path: str, depth: int, max_text: int | None) -> Any:
    if isinstance(value, str):
        found = detect(value, path)
        if found is not None and found.source != "url":
            return found.tag
        if max_text is not None and len(value) > max_text:
            return f"{value[:max_text]}… ({len(value):,} characters)"
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        found = describe_bytes(data, path, "bytes")
        return found.tag if found is not None else f"<{len(data):,} bytes>"
    if depth >= MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {
            k: v if type(v) in SCALARS else _preview(v, join_key(path, k), depth + 1, max_text)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [
            v if type(v) in SCALARS else _preview(v, f"{path}[{i}]", depth + 1, max_text)
            for i, v in enumerate(value)
        ]
    return value
