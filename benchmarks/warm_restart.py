"""A warm worker across a kernel restart: the first job of a new kernel, on a worker
script whose model takes 4 s to load, beside the same script's cold first job in the
same run.

    .venv/bin/python benchmarks/warm_restart.py [--rounds 3] [--load-s 4]

Each round: a new local service (folders of this run's own), a first kernel deploys the
script (``nbext.deploy(path, workers={"idleTimeout": 120})``, which waits for its first worker) and
runs one job: the baseline, timed from the deploy cell to the job's result, is what a
kernel restart cost when the worker died with the kernel (deploy again, load again).
It then shuts down, as a kernel restart does. A second, new kernel runs one job on the
same endpoint, timed from sending the job cell to its result in the notebook. The
service keeps the worker warm for its idle timeout, as the service does, so the second
job should take a small fraction of the first.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from jupyter_client.manager import KernelManager

SCRIPT = """
import time
import runpod

time.sleep({load_s})  # the model's load: the cold start

def handler(job):
    return {{"ok": True}}

runpod.serverless.start({{"handler": handler}})
"""
JOB_CELL = "%%runpod_job slow_model -o out\n{}"


def run_kernel(folder: Path, env: dict[str, str], setup: list[str], timed: list[str]) -> float:
    """A new kernel in ``folder``: ``setup`` cells, then ``timed`` and the job cell, timed
    together; shut down."""
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env=env, cwd=str(folder), stderr=subprocess.DEVNULL)  # TCP warning
    client = manager.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        for cell in setup:
            reply = client.execute_interactive(cell, timeout=120, output_hook=lambda _: None)
            assert reply["content"]["status"] == "ok", (cell, reply["content"])
        started = time.monotonic()
        for cell in [*timed, JOB_CELL]:
            reply = client.execute_interactive(cell, timeout=120, output_hook=lambda _: None)
            assert reply["content"]["status"] == "ok", (cell, reply["content"])
        elapsed = time.monotonic() - started
        check = client.execute_interactive(
            "assert out == {'ok': True}", timeout=30, output_hook=lambda _: None
        )
        assert check["content"]["status"] == "ok", "the job's output did not reach the notebook"
        return elapsed
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def one_round(load_s: float) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        (folder / "slow_model.py").write_text(textwrap.dedent(SCRIPT.format(load_s=load_s)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUNPOD")}
        env.update(
            HOME=str(folder),
            NBEXT_RUNTIME_DIR=str(folder / "run"),
            NBEXT_DATA_DIR=str(folder / "data"),
        )
        deploy = "import nbext\nnbext.deploy('slow_model.py', workers={'idleTimeout': 120})"
        try:
            cold = run_kernel(folder, env, ["%load_ext nbext"], [deploy])
            warm = run_kernel(folder, env, ["%load_ext nbext"], [])
        finally:
            stop(folder / "run")
        return cold, warm


def stop(runtime: Path) -> None:
    """End this round's service by its process id."""
    import json

    path = runtime / "service.json"
    if not path.exists():
        return
    pid = json.loads(path.read_text())["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load-s", type=float, default=4.0)
    args = parser.parse_args()
    colds, warms = [], []
    for n in range(args.rounds):
        cold, warm = one_round(args.load_s)
        colds.append(cold)
        warms.append(warm)
        print(f"round {n + 1}: deploy and first job {cold:.3f} s, after the restart {warm:.3f} s")
    cold, warm = statistics.median(colds), statistics.median(warms)
    print(
        f"median of {args.rounds}: cold {cold:.3f} s, after a kernel restart {warm:.3f} s, "
        f"ratio {warm / cold:.3f} (model load {args.load_s:g} s)"
    )
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
