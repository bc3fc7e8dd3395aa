"""How a job state looks: one colour per state, and the CSS classes panels carry.

Colours live here, not in each panel, so the badge of a job panel, the counts of a batch
panel and the text of a headless run agree. CSS classes are stable names for the browser
tests (and for anyone styling the panels): ``nbext-<panel>`` on the container,
``nbext-<part>`` on each part.
"""

from __future__ import annotations

import html

STATE_COLOURS: dict[str, str] = {
    "SUBMITTING": "#9ca3af",
    "IN_QUEUE": "#6b7280",
    "IN_PROGRESS": "#2563eb",
    "COMPLETED": "#16a34a",
    "FAILED": "#dc2626",
    "CANCELLED": "#d97706",
    "TIMED_OUT": "#c2410c",
    "REMOVED": "#374151",
}
"""Badge background per state; ``SUBMITTING`` and ``REMOVED`` are the panel's own states
(before the service answered, and after the job was purged or outlived its TTL)."""

UNKNOWN_COLOUR = "#6b7280"


def badge_html(state: str) -> str:
    """A coloured pill with the state's name; ``data-state`` lets tests and CSS read it."""
    colour = STATE_COLOURS.get(state, UNKNOWN_COLOUR)
    name = html.escape(state)
    return (
        f'<span class="nbext-state" data-state="{name}" style="background:{colour};'
        "color:white;border-radius:0.8em;padding:0.1em 0.7em;font-size:0.85em;"
        f'font-weight:600;letter-spacing:0.02em">{name}</span>'
    )
