"""Client-side pacing of a batch's submissions, learned from the service's 429s.

The service admits a fixed number of /runsync (or /run) per endpoint in any 10-second
window. A batch that ignores this gets a 429 for every submission past the limit and,
told only a whole-second ``Retry-After``, comes back in a stampede. ``SubmitGate``
instead learns the limit from the first 429 (how many of its own submissions the window
held) and from then on lets a submission go exactly when one of the window's slots frees.

The service's ``Retry-After`` is a minimum, never shortened by what the gate knows: the
gate's window is a guess (the emulator's and the documented one), the service's may
differ, and a request sent before the wait it asked for has passed is refused again at
best and counted against the caller at worst. So a 429 pauses the whole batch for its
``Retry-After`` (``rejected`` says how an answer already on its way is counted); the learned
limit only decides how the slots are given out once that wait is over.

Time stamps decide everything, and the service's and ours differ: the service admits a
request somewhere between our sending it and our reading its answer. So a submission
counts in our window from when it was *sent* until its answer arrives, and from then on
from the answer's arrival, the latest moment the service can have admitted it. Our
window therefore never holds fewer submissions than the service's: a learned limit can
only be too high (costing one more 429, which the gate absorbs), never too low (which
would strand the batch's last submissions for a whole window). A /runsync answer comes
when its job ends or its hold does, so its slot is kept longer than the service keeps
it: the gate errs late by up to the hold, never early.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

RATE_WINDOW = 10.0
"""The service's rate-limit window ("per 10 seconds", docs/behaviour.md)."""
RESUME_MARGIN = 0.01
"""Extra wait after a slot should have freed: timer slack, not flight time (the answer
stamps already cover that)."""
IN_FLIGHT_RECHECK = 0.005
"""When the slot to wait for belongs to a submission still in flight, look again this
soon: its answer, due in milliseconds, tells when the slot frees."""
NO_RETRY_AFTER_PAUSE = 1.0
"""The longest pause after a 429 that says nothing of when to come back."""
KEEP = 2.0
"""Seconds a submission is remembered after it left our window: a 429 is judged by the
window as it was when that request was *sent*, which may be a moment ago."""


@dataclass(eq=False)
class Ticket:
    """One submission let through by the gate."""

    sent: float
    """When the gate let it go."""
    time: float
    """When it counts from in the window: ``sent`` until answered, then the answer."""
    answered: bool = False


class SubmitGate:
    """Paces one batch's submissions; shared by all its workers (threads or tasks).

    Free-running until the first 429. Then nothing goes before that 429's
    ``Retry-After`` has passed, and from then on the window holds ``learned_limit``
    submissions: the next goes when the oldest counted one leaves the window. The limit
    is forgotten one window after the last 429, so a limit that grows (more running
    workers raise it) is found again.

    Protocol: ``acquire`` until it gives a ticket; after the delay it gives with it,
    ``go`` (or ``acquire`` again if that says no); send; then ``admitted`` for any
    answer but 429 (the service counted the request), ``rejected`` for a 429.
    """

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self._lock = threading.Lock()
        self._tickets: deque[Ticket] = deque()
        """Submissions in sending order: ``_left`` of them have left the window but are
        still remembered (``KEEP``), the rest count in it."""
        self._left = 0
        self._limit: int | None = None
        self._limit_until = float("-inf")
        self._paused_until = float("-inf")
        self.rejections = 0

    @property
    def learned_limit(self) -> int | None:
        return self._limit

    def in_window(self, now: float) -> int:
        """How many of our submissions may still count in the service's window."""
        with self._lock:
            self._advance(now)
            return len(self._tickets) - self._left

    def _advance(self, now: float) -> None:
        tickets = self._tickets
        forget = now - self.window - KEEP
        while tickets and tickets[0].answered and tickets[0].time <= forget:
            tickets.popleft()
            self._left = max(0, self._left - 1)
        horizon = now - self.window - RESUME_MARGIN
        left = self._left
        while left < len(tickets) and tickets[left].answered and tickets[left].time <= horizon:
            left += 1
        self._left = left

    def acquire(self, now: float) -> tuple[float, Ticket | None]:
        """``(delay, ticket)``: submit after ``delay`` seconds (0: at once), then ``go``.
        ``(seconds, None)``: ask again after that long.

        A worker that must wait for a slot is given the next one to free, held for it
        meanwhile, rather than every waiting worker the same one: waking all of a
        batch's workers for each slot, and all but one going back to sleep, costs the
        client more than the submissions do.
        """
        with self._lock:
            self._advance(now)
            if now < self._paused_until:
                return self._paused_until - now, None
            limit = self._limit if now < self._limit_until else None
            at = now
            counting = len(self._tickets) - self._left
            if limit is not None and counting >= limit:
                blocking = self._tickets[len(self._tickets) - limit]
                if not blocking.answered:
                    if blocking.sent > now:  # held for a worker that has not sent yet
                        return blocking.sent + self.window + RESUME_MARGIN - now, None
                    return IN_FLIGHT_RECHECK, None
                at = max(now, blocking.time + self.window + RESUME_MARGIN)
            ticket = Ticket(at, at)
            self._tickets.append(ticket)
            return at - now, ticket

    def go(self, ticket: Ticket, now: float) -> bool:
        """Whether a slot held for ``delay`` may be used now: not if a 429 paused the
        batch meanwhile (the slot is then given up, and the worker asks again)."""
        with self._lock:
            if ticket.sent < self._paused_until:
                self._withdraw(ticket)
                return False
            ticket.sent = ticket.time = max(ticket.sent, now)
            return True

    def _withdraw(self, ticket: Ticket) -> None:
        try:
            index = self._tickets.index(ticket)
        except ValueError:
            return
        del self._tickets[index]
        if index < self._left:
            self._left -= 1

    def admitted(self, ticket: Ticket, now: float) -> None:
        """The service answered (not 429): the submission counts from ``now`` at the latest."""
        with self._lock:
            ticket.time, ticket.answered = now, True

    def rejected(self, ticket: Ticket, now: float, retry_after: float | None) -> None:
        """The submission got 429: learn the limit, pause every worker.

        The pause lasts the ``Retry-After`` the service asked for, at least. Without
        one, the batch waits until the oldest submission of the window leaves it, at
        most ``NO_RETRY_AFTER_PAUSE``.

        The service judged the request by its window at some moment after we sent it;
        everything that may have been in that window counts: submissions answered less
        than a window before it was sent, and those sent before it still in flight
        (they reached the service first). Counting too many only costs another 429.

        A 429 for a submission sent before the current pause began is old news (it was
        in flight when an earlier 429 arrived): it teaches no limit, and its
        ``Retry-After`` is counted from its sending. It answers for the window the
        pause already waits out; counted from its arrival, a burst of such answers
        would push the pause out by the time each spent on its way back (on a
        simulated clock, by however far another worker's sleep moved time meanwhile).
        """
        with self._lock:
            self.rejections += 1
            self._withdraw(ticket)
            if ticket.sent < self._paused_until:
                if retry_after is not None:
                    self._paused_until = max(self._paused_until, ticket.sent + retry_after)
                return
            since = ticket.sent - self.window - RESUME_MARGIN
            counted = [
                t
                for t in self._tickets
                if (t.time > since if t.answered else t.sent <= ticket.sent)
            ]
            resume = now + NO_RETRY_AFTER_PAUSE
            if counted:
                self._limit = len(counted)
                self._limit_until = now + self.window
                # an unanswered one was admitted by now at the latest
                oldest = min(t.time if t.answered else now for t in counted)
                resume = min(resume, oldest + self.window + RESUME_MARGIN)
            if retry_after is not None:
                resume = now + retry_after
            self._paused_until = max(self._paused_until, resume, now + 0.001)
