"""What the cells of one kernel share: its ``Connection`` and the media limits
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nbext import media

from .connection import Connection


@dataclass
class MediaOutput:
    """What the media of one job's output may add to the saved notebook, and where the
    full size of an item kept small is written."""

    limits: media.Limits = field(default_factory=media.Limits)
    full_size_dir: str = "nbext-media"
    """Relative to the working directory (the notebook's folder in JupyterLab); empty:
    nowhere, and the output says how to get the full size from Python."""


MEDIA = MediaOutput()

_current: Connection | None = None


def current() -> Connection:
    """The kernel's connection, made from the environment on first use."""
    global _current
    if _current is None:
        _current = Connection()
    return _current


def set_current(connection: Connection | None) -> Connection | None:
    """Make ``connection`` the kernel's; returns the previous one (tests restore it)."""
    global _current
    previous, _current = _current, connection
    return previous
