"""Which JSON values the emulator can store and serve back exactly as they came; any
other, stored, would break every later read (docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import json
from typing import Any

from .errors import InvalidInput

MAX_DEPTH = 200
"""Deepest nesting a body may have: what pydantic's JSON parser (and so the client)
reads, and well inside what Python's encoder writes back without a recursion error."""

Path = list[str | int]


def printable(text: str) -> str:
    """``text`` with anything that is not valid Unicode as a ``\\u`` escape."""
    return text.encode("utf-8", "backslashreplace").decode()


def where(path: Path, root: str = "body") -> str:
    """``input.items[3].name``: a field's place, as a 400 names it."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{printable(part)}" if out else printable(part)
    return out or root


def too_deep() -> str:
    return f"request body is nested more than {MAX_DEPTH} levels deep; flatten it"


def check_text(value: Any) -> None:
    """400 naming the first string or key in ``value`` that is not valid Unicode."""
    stack: list[tuple[Any, Path]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            _check_string(item, path)
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_string(key, [*path, key], what="key")
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, i]) for i, child in enumerate(item))


def _check_string(text: str, path: Path, what: str = "text") -> None:
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise InvalidInput(
            f"{where(path)}: {what} holds a lone surrogate (\\u{ord(bad):04x}), which is not "
            "valid Unicode and cannot be stored; nothing was stored"
        ) from None


def check_depth(value: Any) -> None:
    """400 when ``value`` nests deeper than ``MAX_DEPTH``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise InvalidInput(too_deep())
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def unservable(value: Any) -> str | None:
    """Why ``value`` (a handler's output or chunk) cannot be sent as JSON, or None."""
    try:
        json.dumps(value, ensure_ascii=False).encode()
        check_depth(value)
    except (InvalidInput, RecursionError):  # check_depth's, or too deep for the encoder
        return f"it is nested more than {MAX_DEPTH} levels deep"
    except UnicodeEncodeError as exc:
        return (
            f"it holds text that is not valid Unicode "
            f"(\\u{ord(exc.object[exc.start]):04x}, a lone surrogate)"
        )
    except (TypeError, ValueError) as exc:
        return printable(str(exc))
    return None
