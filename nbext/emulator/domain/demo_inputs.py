"""Checks of a demo's input fields: one line that names the field and the range."""

from __future__ import annotations

import math
from typing import Any


def integer(value: Any, name: str, default: int, low: int, high: int, where: str = "input.") -> int:
    """``input.<name>`` (``where``: what holds it) as an int in ``[low, high]``, or
    ``default`` when absent."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{where}{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def number(
    value: Any,
    name: str,
    default: float,
    low: float = 0,
    high: float = math.inf,
    where: str = "input.",
) -> float:
    """``input.<name>`` (``where``: what holds it) as a float in ``[low, high]``, or
    ``default`` when absent."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        span = f">= {low:g}" if high == math.inf else f"from {low:g} to {high:g}"
        raise ValueError(f"{where}{name} must be a number {span}, got {value!r}")
    return float(value)


def flag(value: Any, name: str, where: str = "input.") -> bool:
    """``input.<name>`` as true or false; absent (or null) is false."""
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{where}{name} must be true or false, got {value!r}")
    return value is True
