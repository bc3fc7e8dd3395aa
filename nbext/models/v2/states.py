"""A pod's observed status and the actions each status allows, as v2 publishes them
(v1 spoke of a *desired* status: RUNNING or EXITED)."""

from __future__ import annotations

import enum


class PodStatus(enum.StrEnum):
    PROVISIONING = "PROVISIONING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    ERROR = "ERROR"
    TERMINATED = "TERMINATED"


class PodAction(enum.StrEnum):
    START = "start"
    STOP = "stop"
    RESTART = "restart"
    TERMINATE = "terminate"


A = PodAction
POD_ACTIONS_BY_STATUS: dict[PodStatus, tuple[PodAction, ...]] = {
    PodStatus.PROVISIONING: (A.STOP, A.TERMINATE),
    PodStatus.STARTING: (A.STOP, A.TERMINATE),
    PodStatus.RUNNING: (A.STOP, A.RESTART, A.TERMINATE),
    PodStatus.EXITED: (A.START, A.TERMINATE),
    PodStatus.ERROR: (A.START, A.TERMINATE),
    PodStatus.TERMINATED: (),
}
"""The service's table: which actions each status allows (before the lock is applied)."""
