"""The first result: from ``%load_ext nbext`` to the first job's result, as Run All runs a
fresh notebook, beside ``import runpod`` in the same run.

    .venv/bin/python benchmarks/first_result.py [--rounds 7] [--phases]

Two figures, for the two cases a user meets: the user's local service already runs (a
kernel restarted, a second notebook: the kernel joins it), and it must start (the
day's first notebook). The service lives in a runtime folder of this run's own, and is
stopped before each round's "must start" kernel by its process id.

Each round starts a new kernel (ipykernel, started with jupyter_client as JupyterLab
starts it; no key anywhere, so nbext joins or starts the local service) and, once it is
ready, sends guide 01's first two cells at once, as Run All queues them: ``%load_ext
nbext`` and a ``%%runpod_job echo`` cell. The figure is the time from sending them to
the kernel going idle after the job cell, its result shown (and stored: the script
checks the variable). The baseline is the same for a cell that only runs ``import
runpod`` (the service's SDK: where its own quickstart starts), in another new kernel of
the same round. Beside each wall time, the kernel's CPU time for the same cells (every
thread's, and the processes it waited for: ``import runpod`` runs one to read the CPU's
name): on a shared machine it moves less with the other sessions' load. Printed:
the medians, and nbext's over the baseline's.

``--phases`` adds, per round, where the first result's time goes with the service
running, timed inside another new kernel: the notebook layer's import (the client with
it; pandas is left to the first DataFrame, and the cell checks it was not imported),
joining the service, and the job itself.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_client.manager import KernelManager

FIRST_CELLS = (
    "%load_ext nbext",
    '%%runpod_job echo -o reply\n{"message": "hello from my first job", "numbers": [1, 2, 3]}',
)
PHASES = """\
import time as _t
_t1 = _t.perf_counter()
import nbext.notebook
_t2 = _t.perf_counter()
%load_ext nbext
_t3 = _t.perf_counter()
get_ipython().run_cell_magic("runpod_job", "echo -o reply", '{"n": 1}')
_t4 = _t.perf_counter()
assert "pandas" not in __import__("sys").modules, "pandas imported before any DataFrame"
assert "nbext.emulator" not in __import__("sys").modules, "the kernel imported the emulator"
_marks = [_t1, _t2, _t3, _t4]
print([round(b - a, 3) for a, b in zip(_marks, _marks[1:])])
"""
PHASE_NAMES = (
    "import nbext.notebook (the client with it)",
    "%load_ext nbext (joining the running service)",
    "first job",
)
SERVICE = tempfile.TemporaryDirectory(prefix="nbext-first-result-")
"""The local service's folders for this run: never the user's own service."""
SERVICE_ENV = {
    "NBEXT_RUNTIME_DIR": os.path.join(SERVICE.name, "run"),
    "NBEXT_DATA_DIR": os.path.join(SERVICE.name, "data"),
}


def stop_service() -> None:
    """End this run's local service by its process id, if one runs."""
    path = os.path.join(SERVICE_ENV["NBEXT_RUNTIME_DIR"], "service.json")
    try:
        with open(path) as file:
            pid = json.load(file)["pid"]
    except OSError:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


@contextmanager
def kernel() -> Iterator[Any]:
    """A new kernel with no key and a home of its own; its blocking client, once ready.
    Bytecode is written as a user's Python writes it, so a source file changed since its
    ``.pyc`` is compiled once, not in every round (``PYTHONDONTWRITEBYTECODE`` dropped)."""
    drop = ("RUNPOD", "IPYTHON", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    with tempfile.TemporaryDirectory() as home:
        env.update(HOME=home, JUPYTER_CONFIG_DIR=os.path.join(home, ".jupyter"), **SERVICE_ENV)
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(env=env, cwd=home, stderr=subprocess.DEVNULL)  # its TCP warning
        client = manager.blocking_client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            yield client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def run_all(client: Any, cells: tuple[str, ...]) -> tuple[float, list[str]]:
    """Send ``cells`` back to back; seconds until the last one's reply, and what printed."""
    started = time.monotonic()
    ids = [client.execute(source) for source in cells]
    printed: list[str] = []
    pending = set(ids)
    while pending:
        message = client.get_iopub_msg(timeout=60)
        content = message["content"]
        if message["msg_type"] == "stream":
            printed.append(content["text"])
        elif message["msg_type"] == "error":
            raise RuntimeError("\n".join(content["traceback"]))
        elif message["msg_type"] == "status" and content["execution_state"] == "idle":
            pending.discard(message["parent_header"].get("msg_id"))
    elapsed = time.monotonic() - started
    for msg_id in ids:  # every reply, so the next round starts clean
        reply = client.get_shell_msg(timeout=60)
        assert reply["content"]["status"] == "ok", (msg_id, reply["content"])
    return elapsed, printed


def timed(cells: tuple[str, ...], shown: str = "None") -> tuple[float, float, str]:
    """Run all ``cells`` in a new kernel: wall seconds, the kernel's CPU seconds (every
    thread's, and the processes it waited for) and ``shown`` evaluated after them."""
    with kernel() as client:
        run_all(client, ("import os as _os; _cpu = sum(_os.times()[:4])",))
        elapsed, _ = run_all(client, cells)
        _, printed = run_all(client, (f"print(sum(_os.times()[:4]) - _cpu); print({shown})",))
        cpu, text = "".join(printed).splitlines()
        return elapsed, float(cpu), text


def phases() -> list[float]:
    with kernel() as client:
        _, printed = run_all(client, (PHASES,))
        figures: list[float] = eval(printed[-1])  # the list the cell printed
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--phases", action="store_true")
    args = parser.parse_args()
    cold_s: list[tuple[float, float]] = []
    nbext_s: list[tuple[float, float]] = []
    runpod_s: list[tuple[float, float]] = []
    phase_s: list[list[float]] = []
    try:
        for n in range(args.rounds):
            stop_service()
            cold_s.append(first_result())
            nbext_s.append(first_result())
            runpod_s.append(timed(("import runpod",))[:2])
            line = (
                f"round {n + 1}: first result {nbext_s[-1][0]:.3f} s with the service running "
                f"(CPU {nbext_s[-1][1]:.3f} s), {cold_s[-1][0]:.3f} s starting it "
                f"(CPU {cold_s[-1][1]:.3f} s), import runpod "
                f"{runpod_s[-1][0]:.3f} s (CPU {runpod_s[-1][1]:.3f} s)"
            )
            if args.phases:
                phase_s.append(phases())
                line += ", phases " + ", ".join(f"{s:.3f}" for s in phase_s[-1])
            print(line, flush=True)
    finally:
        stop_service()
        SERVICE.cleanup()
    for i, what in enumerate(("wall", "kernel CPU")):
        baseline = statistics.median(r[i] for r in runpod_s)
        for case, rounds in (("service running", nbext_s), ("service starting", cold_s)):
            first = statistics.median(r[i] for r in rounds)
            print(
                f"{what} (median of {args.rounds}), {case}: first result {first:.3f} s, "
                f"import runpod {baseline:.3f} s, ratio {first / baseline:.2f}"
            )
    if args.phases:
        for i, name in enumerate(PHASE_NAMES):
            print(f"  {name}: {statistics.median(p[i] for p in phase_s):.3f} s (median)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


def first_result() -> tuple[float, float]:
    wall, cpu, shown = timed(FIRST_CELLS, "reply['numbers']")
    assert shown == "[1, 2, 3]", shown  # the job's output reached the notebook
    return wall, cpu


if __name__ == "__main__":
    main()
