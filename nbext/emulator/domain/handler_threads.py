"""Threads for synchronous handlers, whose capacity comes back when a handler hangs
(Python cannot stop a thread, so a fixed pool ran dry: docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")

_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class HandlerThreads(Executor):
    """An executor of daemon threads, at most ``limit`` of them running live jobs."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("handler threads must be >= 1")
        self.limit = limit
        self._numbers = itertools.count(1)
        self._work: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Semaphore(0)
        self._threads = 0
        self._written_off: set[Future[Any]] = set()
        self._shutdown = False

    @property
    def threads(self) -> int:
        """Threads alive, written-off ones included."""
        return self._threads

    @property
    def stuck(self) -> int:
        """Threads still running a handler whose job ended without it."""
        return len(self._written_off)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("the emulator is closed; no handler can start")
            self._work.put((future, fn, args, kwargs))
            if not self._idle.acquire(blocking=False):  # else an idle thread will take it
                self._start_thread_if_room()
        return future

    def _start_thread_if_room(self) -> None:
        """Start one more thread if fewer than ``limit`` run live jobs (lock held)."""
        if self._threads - len(self._written_off) < self.limit:
            self._threads += 1
            name = f"nbext-handler-{next(self._numbers)}"
            threading.Thread(target=self._run, name=name, daemon=True).start()

    def write_off(self, future: Future[Any]) -> None:
        """The job of the handler behind ``future`` ended while it runs on: its thread
        stops counting against the limit (and work waiting for a thread gets one)."""
        with self._lock:
            if not future.running() or future in self._written_off:
                return
            self._written_off.add(future)
            if not self._work.empty():
                self._start_thread_if_room()

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:  # shut down: pass it on to the next thread, and stop
                self._work.put(None)
                with self._lock:
                    self._threads -= 1
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # the handler's; the future carries it
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            with self._lock:
                self._written_off.discard(future)
                if self._threads - len(self._written_off) > self.limit:
                    self._threads -= 1  # one too many since a stuck handler came back
                    return
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work; threads end when idle. Never waits, whatever ``wait`` says
        (``Executor``'s signature): a stuck handler must not hold up the emulator's stop."""
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        item = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            self._work.put(None)
