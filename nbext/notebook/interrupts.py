"""Ctrl-C in a cell that waits on the service: held back where it would lose a job
(``deferred_interrupts``), and said in one line when it stopped one (``Interrupted``)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from .errors import OneLineError


class Interrupted(OneLineError):
    """Ctrl-C stopped a blocking command; the remote job was cancelled (or said why not).
    Raised, so "Run all" stops at this cell, in one line."""


class Held:
    """What ``deferred_interrupts`` held back: whether Ctrl-C came during the block."""

    def __init__(self) -> None:
        self.received = False


@contextlib.contextmanager
def deferred_interrupts(deliver: bool = True) -> Iterator[Held]:
    """Hold Ctrl-C until the block ends; then raise it (``deliver``) or just report it
    (the caller reads ``held.received``, e.g. to cancel the job it now knows).

    Wraps what must not be cut in half: ``/run`` and the setup after it (else a job
    could run whose id we never learn) and ``/cancel``. Off the main thread, a no-op.
    """
    held = Held()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def hold(_signum: int, _frame: object) -> None:
        held.received = True

    try:
        previous = signal.signal(signal.SIGINT, hold)
    except ValueError:  # not the main interpreter
        yield held
        return
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)
    if held.received and deliver:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt
