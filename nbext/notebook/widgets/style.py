"""How a job state looks in a widget: the theme's colours (``nbext.notebook.theme``).

CSS classes are stable names for the browser tests (and for anyone styling the panels):
``nbext-<panel>`` on the container, ``nbext-<part>`` on each part.
"""

from __future__ import annotations

from ..theme import STATE_COLOURS, UNKNOWN_COLOUR, badge_html

__all__ = ["STATE_COLOURS", "UNKNOWN_COLOUR", "badge_html"]
