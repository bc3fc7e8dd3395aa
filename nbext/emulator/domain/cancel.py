"""The flag that tells a running handler to stop: cancelled, timed out or removed.

Every job attempt gets one, so it is on the emulator's hot path: a ``threading.Event``
builds a lock and a condition when it is made (its share of a batch of echo jobs was
about 4 % of the emulator's CPU, sampled with py-spy), yet almost no handler ever
blocks on the flag; they read ``current_job().cancelled``. ``CancelFlag`` is a plain
boolean until someone calls ``wait``, and only then makes the ``Event`` that the waiter
sleeps on.
"""

from __future__ import annotations

import threading

_making = threading.Lock()
"""Serialises making a flag's Event against setting the flag, so that a waiter can never
sleep on an Event made after the flag was set (see ``set`` and ``wait``)."""


class CancelFlag:
    """A one-way flag, safe to read, set and wait on from any thread.

    ``is_set``, ``set`` and ``wait`` behave as ``threading.Event``'s do (a flag is never
    cleared: a new attempt gets a new flag).
    """

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: threading.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        with _making:
            event = self._event
        if event is not None:
            event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the flag is set or ``timeout`` seconds pass; return ``is_set()``."""
        if self._set:
            return True
        with _making:
            event = self._event
            if event is None:
                event = self._event = threading.Event()
            if self._set:  # set before the Event existed: ``set`` found none to set
                event.set()
        return event.wait(timeout)

    def __repr__(self) -> str:
        return f"CancelFlag(set={self._set})"


STOPPED = CancelFlag()
STOPPED.set()
"""The flag of a job whose execution ended: set, like the flag its handler was given, but
shared, so a retained job keeps no flag of its own. A new attempt gets a new flag."""
