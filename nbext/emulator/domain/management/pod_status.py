"""A pod's observed status on the emulator's clock, which v2 reports beside v1's desired
one (docs/architecture.md#management-areas)."""

from __future__ import annotations

from typing import Any

from nbext.models.v2 import PodStatus

PROVISIONING_S = 3.0
"""From creation until the machine is found and the image pulled."""
STARTING_S = 5.0
"""From the container's start (after provisioning, or a start or restart) until it is up."""
CUDA_DEFAULT = "12.8"
"""What a GPU host of the emulator reports, unless the pod asked for another version."""


def observed_status(running: bool, started_at: float | None, first: bool, now: float) -> PodStatus:
    """What the pod is doing at ``now``, given v1's desired status and start time;
    ``first``: this is the start that created it (so it provisions first)."""
    if not running:
        return PodStatus.EXITED
    if started_at is None:
        return PodStatus.PROVISIONING
    since = now - started_at
    boot = PROVISIONING_S if first else 0.0
    if since < boot:
        return PodStatus.PROVISIONING
    if since < boot + STARTING_S:
        return PodStatus.STARTING
    return PodStatus.RUNNING


def ssh(pod_id: str, running: bool, ip: str | None, mapped: int | None) -> dict[str, Any]:
    """How to reach a running pod over SSH: through the proxy always, directly when port 22
    is mapped on a public address."""
    if not running:
        return {"proxy": None, "direct": None}
    user = f"{pod_id}-{pod_id[:8]}"
    proxy = {
        "host": "ssh.runpod.io",
        "port": 22,
        "username": user,
        "command": f"ssh {user}@ssh.runpod.io -i ~/.ssh/id_ed25519",
    }
    direct = None
    if ip and mapped:
        direct = {
            "host": ip,
            "port": mapped,
            "username": "root",
            "command": f"ssh root@{ip} -p {mapped} -i ~/.ssh/id_ed25519",
        }
    return {"proxy": proxy, "direct": direct}


def runtime(
    now: float, started: float, gpus: int, ports: dict[str, int], ip: str | None
) -> dict[str, Any]:
    """What a running pod reports of itself: uptime, (idle) utilisation, its mapped ports."""
    return {
        "uptime": max(0, int(now - started)),
        "gpus": [{"util": 0, "memoryUtil": 0} for _ in range(gpus)],
        "cpu": {"util": 1},
        "memory": {"util": 3},
        "ports": [
            {"private": int(private), "public": public, "type": "tcp", "ip": ip}
            for private, public in ports.items()
            if private.isdigit()
        ],
    }
