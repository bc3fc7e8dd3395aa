"""Where the time of a rate-limited batch goes: one ``map`` of 3,000 echo jobs under the
default limits (part 4 of ``client_vs_sdk.py``), traced answer by answer.

    .venv/bin/python benchmarks/limited_batch_trace.py [N]

/runsync admits 2,000 a 10 s window, so the first 2,000 submissions go at once and the
rest wait for the window to free. Printed: when the first and the 2,000th answers came,
the 429s, when the rest resumed and how fast they went, against how fast the first
2,000 went. The client's debug log (one line per request, with its status) is the trace.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import client_vs_sdk as bench  # the same server and batch as part 4


class Answers(logging.Handler):
    """When each request was answered, and with what status."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.rows.append((time.perf_counter(), record.getMessage()))


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    remote = bench.Remote()
    answers = Answers()
    log = logging.getLogger("nbext.client")
    try:
        from nbext import Client

        with Client(bench.KEY, serverless_url=remote.url + "/v2") as client:
            remote.do("rate_limit", False)
            list(client.endpoint("echo").map({"i": i} for i in range(200)))  # warm
            log.setLevel(logging.DEBUG)
            log.addHandler(answers)
            started = time.perf_counter()
            elapsed, _, _ = bench.rate_limited_batch(client, remote, n)
            log.removeHandler(answers)
    finally:
        remote.stop()
    ok = [t - started for t, line in answers.rows if "-> 200 " in line]
    limited = [t - started for t, line in answers.rows if "-> 429 " in line]
    least = bench.least_time(n, 2000)
    first, full = ok[0], ok[1999]
    print(
        f"load average {os.getloadavg()[0]:.1f}; {n} jobs in {elapsed:.2f} s "
        f"-> {elapsed / least:.3f} of {least:.0f} s"
    )
    print(
        f"answers 200: {len(ok)}, first at {first:.2f} s, 2,000th at {full:.2f} s "
        f"-> {1999 / (full - first):.0f} jobs/s"
    )
    if limited:
        print(f"answers 429: {len(limited)}, from {limited[0]:.2f} s to {limited[-1]:.2f} s")
    if len(ok) > 2001:
        rest = ok[2000:]
        print(
            f"the rest resumed at {rest[0]:.2f} s (the first answer's slot freed at "
            f"{first + 10:.2f} s), last at {rest[-1]:.2f} s "
            f"-> {(len(rest) - 1) / (rest[-1] - rest[0]):.0f} jobs/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
