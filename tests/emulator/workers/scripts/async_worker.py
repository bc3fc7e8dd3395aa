"""An async handler serving jobs side by side (concurrency_modifier), and an async
generator; a stopped job leaves a marker file, which is how a test sees job-stop arrive."""

import asyncio
import os
import pathlib

import runpod


async def handler(job):
    data = job["input"]
    marks = pathlib.Path(data["dir"])
    (marks / f"started-{job['id']}").touch()
    try:
        if data.get("wait_for"):  # wait until this many jobs have started
            while len(list(marks.glob("started-*"))) < data["wait_for"]:
                await asyncio.sleep(0.02)
        if data.get("hang"):
            while True:
                await asyncio.sleep(0.05)
    except asyncio.CancelledError:
        (marks / f"stopped-{job['id']}").touch()
        raise
    return {"side_by_side": len(list(marks.glob("started-*"))), "pid": os.getpid()}


async def agen_handler(job):
    for i in range(job["input"]["n"]):
        await asyncio.sleep(0)
        yield i


if __name__ == "__main__":
    chosen = agen_handler if os.environ.get("ASYNC_GEN") == "1" else handler
    runpod.serverless.start({"handler": chosen, "concurrency_modifier": lambda current: 3})
