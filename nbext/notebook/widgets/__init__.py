"""The live panels (job, health, map, log): plain HTML updated in place, each with its
``text/plain`` twin; widgets only for their controls (``Controls``)."""

from .health import HealthPanel
from .job import JobPanel
from .map import MapPanel
from .throttle import Throttle

__all__ = ["HealthPanel", "JobPanel", "MapPanel", "Throttle"]
