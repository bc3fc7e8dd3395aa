"""A worker that floods its log: ``{"lines": n, "size": bytes}`` prints n lines of that
size; ``{"line": bytes}`` prints one line that long. Written in 1 MiB pieces straight to
the pipe, so the worker itself holds 1 MiB whatever it prints; each job ends with a line
``flood done N`` once everything before it is written."""

import os

import runpod

PIECE = b"x" * 1_048_576


def write(size):
    while size > 0:
        chunk = PIECE[: min(size, len(PIECE))]
        written = os.write(1, chunk)
        size -= written


def handler(job):
    data = job["input"]
    for _ in range(data.get("lines", 0)):
        write(data["size"])
        os.write(1, b"\n")
    if "line" in data:
        write(data["line"])
        os.write(1, b"\n")
    os.write(1, f"flood done {data.get('n', 0)}\n".encode())
    return {"worker": os.environ["RUNPOD_POD_ID"]}


runpod.serverless.start({"handler": handler})
