"""The live panels (job, health, batch, log): plain HTML updated in place, each with its
``text/plain`` twin; widgets only for their controls (``Controls``)."""

from .health import HealthPanel, chart_svg
from .job import JobPanel
from .map import BatchPanel
from .style import STATE_COLOURS, badge_html
from .throttle import Throttle

__all__ = [
    "STATE_COLOURS",
    "BatchPanel",
    "HealthPanel",
    "JobPanel",
    "Throttle",
    "badge_html",
    "chart_svg",
]
