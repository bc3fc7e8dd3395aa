"""Checks of a demo's input fields: one line that names the field and the range."""

from __future__ import annotations

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
    value: Any, name: str, default: float, low: float, high: float, where: str = "input."
) -> float:
    """``input.<name>`` (``where``: what holds it) as a float in ``[low, high]``, or
    ``default`` when absent."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{where}{name} must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)
