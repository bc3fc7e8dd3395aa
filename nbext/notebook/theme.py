"""Every colour a panel uses, as JupyterLab's theme variables (``--jp-*``) with fallbacks
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import html


def jp(name: str, fallback: str) -> str:
    """``var(--jp-NAME, FALLBACK)``."""
    return f"var(--jp-{name}, {fallback})"


MUTED = jp("ui-font-color2", "#757575")
"""Secondary marks (axes, pending states): >= 4.5:1 on every theme's page."""
ERROR = jp("error-color1", "#d32f2f")
BORDER = jp("border-color2", "#e0e0e0")
"""Separators that carry no meaning."""

STATE_COLOURS: dict[str, str] = {
    "SUBMITTING": MUTED,
    "IN_QUEUE": jp("ui-font-color1", "#424242"),
    "IN_PROGRESS": jp("brand-color1", "#1976d2"),
    "COMPLETED": jp("success-color1", "#388e3c"),
    "FAILED": jp("error-color1", "#d32f2f"),
    "CANCELLED": jp("warn-color0", "#e65100"),
    "TIMED_OUT": jp("error-color0", "#b71c1c"),
    "REMOVED": jp("ui-font-color3", "#9e9e9e"),
}
"""The mark of each state (badge border, bar segment). ``SUBMITTING`` and ``REMOVED`` are
the panel's own states: before the service answered, after the job was purged."""
UNKNOWN_COLOUR = MUTED

SERIES_COLOURS: dict[str, str] = {
    "in_queue": MUTED,
    "in_progress": STATE_COLOURS["IN_PROGRESS"],
    "running": STATE_COLOURS["COMPLETED"],
    "idle": jp("info-color1", "#0097a7"),
    "initializing": jp("warn-color0", "#e65100"),
}


def state_colour(state: str) -> str:
    return STATE_COLOURS.get(state, UNKNOWN_COLOUR)


def badge_html(state: str, colour: str | None = None) -> str:
    """The state's name (in the page's text colour) in a pill with the state's colour as
    its border; ``data-state`` lets tests and CSS read the state."""
    name = html.escape(state)
    return (
        f'<span class="nbext-state" data-state="{name}" style="border:2px solid '
        f"{colour or state_colour(state)};border-radius:0.8em;padding:0 0.6em;font-size:0.85em;"
        f'font-weight:600;letter-spacing:0.02em;white-space:nowrap">{name}</span>'
    )
