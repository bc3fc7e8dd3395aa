"""Stream chunks no larger than the interface allows (docs/behaviour.md#streaming)."""

from __future__ import annotations

import json
from typing import Any

from nbext.models import SPLIT_KEY, STREAM_CHUNK_LIMIT


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def wire_size(value: Any) -> int:
    """Bytes of ``value`` as the emulator serialises it in a response."""
    return len(_compact(value).encode())


def split_text(text: str, limit: int) -> list[str]:
    """Cut ``text`` into pieces whose JSON string form is at most ``limit`` bytes each."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        size = min(len(text) - start, max(1, limit - 2))
        while True:
            piece = text[start : start + size]
            size_bytes = wire_size(piece)
            if size_bytes <= limit:
                break
            # Scale by bytes per character (multi-byte text and escapes): subtracting the
            # overshoot collapsed to one character a piece for text over 2 bytes a character.
            size = max(1, min(size - 1, size * limit // size_bytes))
        pieces.append(piece)
        start += size
    return pieces


def to_chunks(
    output: Any, metrics: dict[str, Any], first_index: int, limit: int = STREAM_CHUNK_LIMIT
) -> list[dict[str, Any]]:
    """The wire chunks for one yielded value, numbered from ``first_index``."""
    if wire_size(output) <= limit:
        return [{"output": output, "metrics": {**metrics, "stream_index": first_index}}]
    encoding = "text" if isinstance(output, str) else "json"
    parts = split_text(output if isinstance(output, str) else _compact(output), limit)
    return [
        {
            "output": part,
            "metrics": {
                **metrics,
                "stream_index": first_index + k,
                SPLIT_KEY: {"part": k, "parts": len(parts), "encoding": encoding},
            },
        }
        for k, part in enumerate(parts)
    ]
