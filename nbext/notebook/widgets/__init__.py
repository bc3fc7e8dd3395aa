"""The live panels (job, health, map, log): plain HTML updated in place, each with its
``text/plain`` twin; widgets only for their controls (``Controls``)."""

from .health import HealthPanel, chart_svg
from .job import JobPanel
from .map import MapPanel
from .style import STATE_COLOURS, badge_html
from .throttle import Throttle

__all__ = [
    "STATE_COLOURS",
    "HealthPanel",
    "JobPanel",
    "MapPanel",
    "Throttle",
    "badge_html",
    "chart_svg",
]
