"""Batch jobs against the emulator, in one run: the calls a sweep makes, and a batch
against ``map`` over the same inputs on the same workers.

    .venv/bin/python benchmarks/batches.py [--inputs 5000] [--db] [--no-rate-limit]

The emulator runs in a child process (as in ``client_vs_sdk``: the server does not share
the GIL with the client measured), its echo endpoint with the default 3 workers and its
default rate limits; ``--db`` gives it a SQLite file, as ``--db`` does on the command
line. Each input is a prompt of about 100 bytes. Measured:

1. create and finalize: ``endpoint.batch(inputs)``: every input checked and encoded, sent
   in calls of at most 10 MiB, then ``/finalize``. Goal < 1 s.
2. the batch until done (``batch.wait()``, polled at the client's pace: every 10 % of the
   time waited), from the create on: compared with (4).
3. reading every result: ``batch.results()``, a page of 1,000 at a time, each priced
   (the endpoint's price read once). Goal < 2 s.
4. ``map`` over the same inputs at its default concurrency, each result checked.
   Goal: the batch (2) within 1.5x of it.

Both go through the client, ``nbext.Client``, as a user's sweep does.
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.connection
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KEY = "rpa_BENCH000000000000000000000000000000000000"


def serve(conn: multiprocessing.connection.Connection, db: str | None, limits: bool) -> None:
    from nbext.emulator import Emulator, EmulatorServer

    emulator = Emulator(api_key=KEY, db=db, rate_limit=limits)
    emulator.deploy("echo", endpoint_id="echo")
    server = EmulatorServer(emulator).start()
    conn.send(server.url)
    conn.recv()  # stop
    server.stop()


def prompts(n: int) -> list[dict[str, Any]]:
    return [{"prompt": f"Question {i}: what is {i} times seven? " + "Think step by step. " * 3,
             "i": i} for i in range(n)]  # fmt: skip


def run_batch(url: str, inputs: list[dict[str, Any]]) -> dict[str, float]:
    from nbext import Client

    with Client(KEY, serverless_url=url + "/v2") as client:
        started = time.perf_counter()
        batch = client.endpoint("echo").batch(inputs)  # checked, split, created, finalized
        submitted = time.perf_counter()
        batch.wait(timeout=600)
        finished = time.perf_counter()
        results = batch.results()
        read = time.perf_counter()
    assert [r.output for r in results] == inputs, "a result is missing or out of order"
    return {"create+finalize": submitted - started, "batch": finished - started,
            "read": read - finished}  # fmt: skip


def run_map(url: str, inputs: list[dict[str, Any]]) -> float:
    from nbext import Client

    with Client(KEY, serverless_url=url + "/v2") as client:
        started = time.perf_counter()
        results = list(client.endpoint("echo").map(inputs))
        elapsed = time.perf_counter() - started
    assert sorted((i, r.output == inputs[i]) for i, r in results) == [
        (i, True) for i in range(len(inputs))
    ]
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=5000)
    parser.add_argument("--db", action="store_true", help="the emulator with a SQLite file")
    parser.add_argument("--no-rate-limit", action="store_true", help="the emulator's limits off")
    args = parser.parse_args()
    inputs = prompts(args.inputs)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db") if args.db else None
        ctx = multiprocessing.get_context("spawn")
        conn, child = ctx.Pipe()
        process = ctx.Process(target=serve, args=(child, db, not args.no_rate_limit))
        process.start()
        url = conn.recv()
        try:
            run_batch(url, prompts(100))  # warm: connections, workers, imports
            batch = run_batch(url, inputs)
            mapped = run_map(url, inputs)
        finally:
            conn.send("stop")
            process.join(20)
    load = os.getloadavg()[0]
    store = "SQLite (--db)" if args.db else "memory"
    limits = "off" if args.no_rate_limit else "on"
    print(f"{args.inputs} inputs, store {store}, rate limits {limits}, load {load:.2f}")
    print(f"1. create + finalize:  {batch['create+finalize']:.3f} s  (goal < 1 s)")
    print(f"2. batch until done:   {batch['batch']:.3f} s")
    print(f"3. read every result:  {batch['read']:.3f} s  (goal < 2 s)")
    print(f"4. map, same inputs:   {mapped:.3f} s")
    ratio = batch["batch"] / mapped
    print(f"   batch / map:        {ratio:.2f}  (goal <= 1.5)")
    ok = batch["create+finalize"] < 1 and batch["read"] < 2 and ratio <= 1.5
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
