"""The service's own SDK (``runpod``) driven line by line, in a process of its own.

Why a separate process: ``runpod`` reads ``RUNPOD_ENDPOINT_BASE_URL`` once, at import
(into ``runpod.endpoint_url_base``, which each ``Endpoint`` copies when created), and
importing it reconfigures the root logger; neither may leak into the test process.

Protocol: one JSON command per stdin line, ``{"op": ..., ...}``; one JSON answer per
stdout line, ``{"ok": result}`` or ``{"error": exception class, "message": text}``. The
test process answers nothing itself: it owns the emulator and moves its fake clock
while a command here is blocked in the SDK.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import runpod

KEY = os.environ["SDK_AGENT_API_KEY"]
jobs: dict[str, runpod.endpoint.runner.Job] = {}


def endpoint(command: dict[str, Any]) -> runpod.Endpoint:
    return runpod.Endpoint(command["endpoint"], api_key=command.get("key", KEY))


def perform(command: dict[str, Any]) -> Any:
    op = command["op"]
    if op == "base_url":
        return runpod.endpoint_url_base
    if op == "run":
        job = endpoint(command).run(command["request"])
        jobs[job.job_id] = job
        return job.job_id
    if op == "run_sync":
        return endpoint(command).run_sync(command["request"], timeout=command["timeout"])
    if op == "health":
        return endpoint(command).health()
    if op == "purge_queue":
        return endpoint(command).purge_queue()
    job = jobs[command["job"]]
    if op == "status":
        return job.status()
    if op == "output":
        return job.output(timeout=command["timeout"])
    if op == "stream":
        return list(job.stream())
    if op == "cancel":
        return job.cancel()
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    print(json.dumps({"ok": "ready"}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        try:
            answer = {"ok": perform(command)}
        except Exception as exc:
            answer = {"error": type(exc).__name__, "message": str(exc)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
