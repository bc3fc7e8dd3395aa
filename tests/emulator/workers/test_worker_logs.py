"""Worker logs bounded by bytes: a cap per line (with a mark saying how much was cut), a
budget per worker, a bound on the workers kept; and a real worker flooding its log while
the emulator's memory is measured."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import httpx
import pytest

from nbext.emulator import RealClock
from nbext.emulator.domain.worker_output import (
    LINE_BYTES,
    LOG_LINES,
    WORKER_BYTES,
    WORKERS_KEPT,
    WorkerOutput,
    cut_mark,
)
from nbext.emulator.workers.supervisor import read_lines

from .conftest import KEY, SCRIPTS, standalone, until

MB = 1_048_576


def test_lines_are_read_whole_up_to_the_cap_and_the_rest_is_counted() -> None:
    long = b"a" * (LINE_BYTES + 5000)
    stream = io.BufferedReader(io.BytesIO(b"one\n" + long + b"\n" + b"y" * LINE_BYTES + b"\ntail"))
    assert list(read_lines(stream)) == [
        (b"one", 0),
        (b"a" * LINE_BYTES, 5000),
        (b"y" * LINE_BYTES, 0),  # exactly the cap: nothing cut
        (b"tail", 0),  # the last line, with no newline
    ]
    endless = io.BufferedReader(io.BytesIO(b"z" * (3 * MB)))  # a line that never ends
    assert list(read_lines(endless)) == [(b"z" * LINE_BYTES, 3 * MB - LINE_BYTES)]


def test_a_long_line_keeps_its_start_and_says_how_much_was_cut() -> None:
    output = WorkerOutput(RealClock())
    output.write("ep", "w1", "b" * LINE_BYTES, cut=200 * MB - LINE_BYTES)
    output.write("ep", "w1", "é" * LINE_BYTES)  # 2 bytes each: cut here, on a character
    first, second = output.lines("ep")
    assert first == "[w1] " + "b" * LINE_BYTES + cut_mark(200 * MB - LINE_BYTES)
    assert first.endswith(" … [209,698,816 more bytes cut: lines keep 16,384]")
    assert second == "[w1] " + "é" * (LINE_BYTES // 2) + cut_mark(LINE_BYTES)


def test_a_worker_keeps_its_last_lines_within_its_byte_budget() -> None:
    output = WorkerOutput(RealClock())
    for i in range(200):  # 200 lines of 16 KB: 3 MB written
        output.write("ep", "w1", f"{i:04d} " + "c" * (LINE_BYTES - 5))
    assert output.size() <= WORKER_BYTES
    kept = output.log("ep", "w1")
    assert kept is not None and 0 < len(kept) < 200
    assert kept[-1].text.startswith("0199 ") and kept[-1].seq == 200  # the newest, numbered on
    for _ in range(2 * LOG_LINES):  # short lines: the line count bounds them too
        output.write("ep", "w2", "")
    assert len(output.log("ep", "w2") or []) <= LOG_LINES


def test_only_the_workers_that_wrote_last_keep_their_logs() -> None:
    output = WorkerOutput(RealClock())
    for i in range(WORKERS_KEPT + 5):
        output.write("ep", f"w{i}", "x" * 1000)
    assert output.log("ep", "w0") == []  # known, its lines no longer kept
    assert output.log("ep", f"w{WORKERS_KEPT + 4}") != []
    assert output.size() <= WORKERS_KEPT * WORKER_BYTES


def memory_kb(pid: int) -> dict[str, int]:
    """``VmRSS`` (now) and ``VmHWM`` (peak) of a process, in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


RSS_GROWTH_BOUND_MB = 48
"""What a log flood may add to the emulator's memory: the budget of the logs it keeps
(``WORKERS_KEPT * WORKER_BYTES`` at most, 1 MB here with one worker) and what reading
and serving costs, far under the flood itself (300 MB)."""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_log_flood_costs_the_emulator_a_bounded_memory(tmp_path: Path) -> None:
    flooding = ("--worker", f"flood={SCRIPTS / 'flood_worker.py'}")
    with (
        standalone(*flooding, env={**os.environ, "RUNPOD_API_KEY": KEY}) as (proc, url),
        httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as http,
    ):

        def flood(n: int, **data: int) -> str:
            done = http.post("/v2/flood/runsync", json={"input": {"n": n, **data}}).json()
            assert done["status"] == "COMPLETED", done
            worker = done["output"]["worker"]

            def ended() -> str:
                path = f"/v2/serverless/flood/workers/{worker}/logs"
                text = http.get(path, params={"tail": 30}).text
                return text if f"flood done {n}" in text else ""

            return until(ended, what=f"the end of flood {n} in the worker's log")

        flood(0, lines=2, size=100)  # warm: a worker, the routes, the log, served once
        before = memory_kb(proc.pid)
        flood(1, lines=100, size=MB)  # 100 lines of 1 MB
        after_lines = memory_kb(proc.pid)
        tail = flood(2, line=200 * MB)  # one line of 200 MB
        after = memory_kb(proc.pid)
    assert "more bytes cut" in tail
    growth_mb = (after["VmHWM"] - before["VmRSS"]) / 1024
    print(
        f"emulator RSS before {before['VmRSS'] / 1024:.1f} MB, after 100 x 1 MB lines "
        f"{after_lines['VmRSS'] / 1024:.1f} MB, after one 200 MB line "
        f"{after['VmRSS'] / 1024:.1f} MB, peak {after['VmHWM'] / 1024:.1f} MB "
        f"(growth to peak {growth_mb:.1f} MB)"
    )
    assert growth_mb < RSS_GROWTH_BOUND_MB
