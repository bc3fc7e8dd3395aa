"""The local emulator of the service: both interfaces, real queue semantics, offline.

``Emulator`` holds the state, ``create_app`` serves it over HTTP, ``EmulatorServer`` runs
that on a loopback port in a background thread (what notebooks use), and
``python -m nbext.emulator`` serves it standalone.
"""

from .api import create_app
from .domain.clock import Clock, FakeClock, RealClock
from .domain.handlers import JobContext, current_job
from .domain.images import DEMOS
from .emulator import Emulator, generate_api_key, mask_key
from .server import EmulatorServer

__all__ = [
    "DEMOS",
    "Clock",
    "Emulator",
    "EmulatorServer",
    "FakeClock",
    "JobContext",
    "RealClock",
    "create_app",
    "current_job",
    "generate_api_key",
    "mask_key",
]
