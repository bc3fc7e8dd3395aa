"""When a batch item first asks /status after /run, learned from the batch itself.

The fewest calls a job can cost is two: /run, and one /status that finds it done.
Fast jobs on an idle endpoint are done before their id has even come back, so the look
can follow /run at once. On a busy endpoint (more jobs in flight than it has workers)
a job waits in the queue first; a look right away only says IN_QUEUE and costs a /stream
long-poll and a second /status after it (four calls where going straight to the
long-poll costs three). So the ``Lookout`` learns two things from the items it sees:

- how long after its /run answer a job tends to end: the first look waits about that
  long, never more than 50 ms, the floor of the client's promise to notice a job's end
  within max(50 ms, 10 % of the time waited), so a job that ended sooner is still
  noticed in time;
- whether looking pays at all: when most looks miss even so (jobs longer than that),
  items skip the look and long-poll /stream straight away, and one item in
  ``PROBE_EVERY`` still looks, to notice when looking starts paying again.

One ``Lookout`` serves all of a batch's workers (threads or tasks); a lost update
between threads only blurs its figures a little.
"""

from __future__ import annotations

LONGEST_DELAY = 0.05
"""The latest a first look may come: the floor of the notice promise (``_flows.MIN_POLL``)."""
LOOK_THRESHOLD = 0.5
"""Keep looking while at least this share of looks find the job done: a hit saves a
call on the long-poll route, a miss costs one."""
LOOK_WEIGHT = 1 / 16
"""Weight of the newest look in the running share (about the last 16 count)."""
PROBE_EVERY = 16
"""While looking does not pay, every so many items look anyway."""
GROW = 1.3
"""After a miss, look this much later than that job took to end."""
SHRINK = 0.99
"""After a hit, look a little sooner: jobs may have become faster."""


class Lookout:
    """Learns per batch when (and whether) to look at a job's /status after /run."""

    def __init__(self) -> None:
        self.share = 1.0
        """Running share of looks that found the job done."""
        self.delay = 0.0
        """Seconds after the /run answer that the next look waits."""
        self._items = 0

    def plan(self) -> float | None:
        """Seconds to wait before looking at the next item, or None: do not look."""
        self._items += 1
        if self.share >= LOOK_THRESHOLD or self._items % PROBE_EVERY == 0:
            return self.delay
        return None

    def saw(self, done: bool, took: float | None = None) -> None:
        """A look found the job ``done``, or not; then it ended ``took`` s after /run."""
        self.share += ((1.0 if done else 0.0) - self.share) * LOOK_WEIGHT
        if done:
            self.delay *= SHRINK
        elif took is not None:
            self.delay = min(LONGEST_DELAY, max(self.delay, took * GROW))
