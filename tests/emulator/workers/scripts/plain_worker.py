"""A worker script as users write them: plain, raised and returned errors, progress, refresh."""

import os
import sys
import time

import runpod
from runpod.serverless import progress_update


def handler(job):
    mode = job["input"].get("mode")
    if mode == "error":
        raise ValueError("boom from handler")
    if mode == "dict_error":
        return {"error": "returned error text"}
    if mode == "progress":
        progress_update(job, "half way")
        while not os.path.exists(job["input"]["release"]):
            time.sleep(0.02)
    if mode == "sleep":
        time.sleep(job["input"]["seconds"])
    if mode == "crash" or (mode == "crash_once" and not os.path.exists(job["input"]["marker"])):
        if mode == "crash_once":
            open(job["input"]["marker"], "w").close()
        print("crashing on purpose", flush=True)
        os._exit(3)
    if mode == "refresh":
        return {"pid": os.getpid(), "refresh_worker": True}
    print(f"handled {job['id']}", flush=True)
    return {"echo": job["input"], "pid": os.getpid(), "worker": os.environ["RUNPOD_POD_ID"]}


if __name__ == "__main__":
    print("plain worker starting", file=sys.stderr, flush=True)
    runpod.serverless.start({"handler": handler})
