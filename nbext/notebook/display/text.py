"""Turning job data into short human text: durations, JSON, stream chunks, metrics;
shared by the panels' HTML and ``text/plain`` forms, so both say the same."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nbext.models import SPLIT_KEY

COMPACT_CHARS = 120
"""How much of an output the one-line summary shows."""
EXPANDED_CHARS = 100_000
"""How much of an output the expandable view shows (the whole value is in ``-o NAME``)."""


MISSING = "–"
"""What a panel or a listing shows where there is no value (yet)."""


def format_ms(ms: float | None) -> str:
    """``12 ms``, ``1.23 s``, ``2 min 5 s``, ``1 h 2 min``; ``–`` when unknown."""
    if ms is None:
        return MISSING
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, sec = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def to_json(value: Any, *, indent: int | None = None) -> str:
    """JSON text of ``value``; values JSON cannot express fall back to ``repr``."""
    separators = (", ", ": ") if indent is None else None
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    except (TypeError, ValueError):
        return repr(value)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis that says how much is left."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} characters)"


def compact_json(value: Any, limit: int = COMPACT_CHARS) -> str:
    """One line of JSON, at most ``limit`` characters (plus the ellipsis note)."""
    return shorten(" ".join(to_json(value).split("\n")), limit)


def chunk_text(output: Any, after: str = "") -> str:
    """What one stream chunk adds to the panel's text, following the piece ``after``:
    a string, or ``{"text": ...}``'s text (many LLM workers' shape); anything else as a
    JSON line of its own, so no chunk is invisible or glued to a word."""
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping) and "text" in output:
        text = output["text"]
        if isinstance(text, str):
            return text
        if isinstance(text, list) and all(isinstance(t, str) for t in text):
            return "".join(text)
    newline = "\n" if after and not after.endswith("\n") else ""
    return newline + to_json(output) + "\n"


METRIC_LABELS: tuple[tuple[str, str, str], ...] = (
    ("input_tokens", "in", "{:,}"),
    ("output_tokens", "out", "{:,}"),
    ("avg_gen_throughput", "gen", "{:.1f} tok/s"),
    ("avg_prompt_throughput", "prompt", "{:.1f} tok/s"),
    ("running", "running", "{}"),
    ("pending", "pending", "{}"),
    ("swapped", "swapped", "{}"),
    ("gpu_kv_cache_usage", "GPU KV", "{:.0%}"),
    ("cpu_kv_cache_usage", "CPU KV", "{:.0%}"),
    ("scenario", "", "{}"),
)
"""The job interface's sample metrics fields (docs/behaviour.md#images), in reading order."""
HIDDEN_METRICS = frozenset({"stream_index", SPLIT_KEY})


def metrics_line(metrics: Mapping[str, Any]) -> str:
    """The latest chunk's metrics on one line: ``tokens in 12 · out 40 · gen 35.2 tok/s``;
    known fields first with units, then other numbers by name, bookkeeping keys left out."""
    tokens = [
        f"{label} {fmt.format(metrics[key])}"
        for key, label, fmt in METRIC_LABELS[:2]
        if _is_number(metrics.get(key))
    ]
    parts = ["tokens " + " / ".join(tokens)] if tokens else []
    for key, label, fmt in METRIC_LABELS[2:]:
        value = metrics.get(key)
        if value is not None and (key == "scenario" or _is_number(value)):
            parts.append(f"{label} {fmt.format(value)}" if label else fmt.format(value))
    known = {key for key, _, _ in METRIC_LABELS} | HIDDEN_METRICS
    parts += [
        f"{key} {value}"
        for key, value in sorted(metrics.items())
        if key not in known and (_is_number(value) or isinstance(value, str))
    ]
    return " · ".join(parts)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
