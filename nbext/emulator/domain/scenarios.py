"""Teaching scenarios: an endpoint given the troubles of a real fleet, deterministically
(docs/behaviour.md#teaching-scenarios; hooks: docs/architecture.md#a-job-through-the-emulator)."""

from __future__ import annotations

import random
from typing import Any, ClassVar, NamedTuple

from nbext.models.enums import SCENARIOS

from .workers import Worker, WorkerState, backoff

CRASH_LINE = "Worker is unhealthy, exiting (the crash-loop scenario: it exits at start)"
"""The last log line of a crash-looping worker, as the service's SDK says it."""


class ScenarioError(ValueError):
    """A scenario that cannot be: unknown name, unknown or bad parameter."""


class Hold(NamedTuple):
    """Where a worker's start waits instead of booting, how long, and what it says."""

    state: WorkerState
    seconds: float
    line: str | None = None


class Scenario:
    """An endpoint's scenario: its parameters, and hooks that change nothing; each
    scenario overrides the hook of its trouble."""

    name: ClassVar[str]
    """Its entry in ``SCENARIOS``, which holds its parameters' defaults."""

    def __init__(self, params: dict[str, float], set_at: float = 0.0) -> None:
        self.params = params
        self.set_at = set_at

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        return f"{self.name} ({shown})" if shown else self.name

    def hold(self, worker: Worker, now: float) -> Hold | None:
        """Where ``worker``'s start waits (None: it boots)."""
        return None

    def job_error(self) -> str | None:
        """Why the job starting now fails on purpose (None: it runs)."""
        return None

    def chunk_gap(self) -> float:
        """Seconds between a stream's chunks as they are passed on."""
        return 0.0


class ColdStart(Scenario):
    """Each new worker initializes for ``seconds`` before it takes a job."""

    name = "cold-start"

    def hold(self, worker: Worker, now: float) -> Hold | None:
        seconds = self.params["seconds"]
        return Hold(WorkerState.INITIALIZING, seconds) if seconds > 0 else None


class CrashLoop(Scenario):
    """Every worker exits as it starts: unhealthy, its last line kept, restarted with
    backoff while a job waits (``Fleet.restart``); no job starts."""

    name = "crash-loop"

    def hold(self, worker: Worker, now: float) -> Hold | None:
        return Hold(WorkerState.UNHEALTHY, backoff(worker.restarts), CRASH_LINE)


class Throttled(Scenario):
    """No GPU is free for ``seconds`` from when it is set: new workers are throttled."""

    name = "throttled"

    def hold(self, worker: Worker, now: float) -> Hold | None:
        until = self.set_at + self.params["seconds"]
        return Hold(WorkerState.THROTTLED, until - now) if now < until else None


class Flaky(Scenario):
    """A ``fraction`` of jobs fail, chosen by a ``seed``ed draw: the same on every run."""

    name = "flaky"

    def __init__(self, params: dict[str, float], set_at: float = 0.0) -> None:
        super().__init__(params, set_at)
        self._rng = random.Random(int(params["seed"]))

    def job_error(self) -> str | None:
        if self._rng.random() < self.params["fraction"]:
            return f"the flaky scenario failed this job on purpose ({self.describe()})"
        return None


class SlowStream(Scenario):
    """A stream's chunks are passed on ``seconds`` apart."""

    name = "slow-stream"

    def chunk_gap(self) -> float:
        return self.params["seconds"]


KINDS: dict[str, type[Scenario]] = {
    kind.name: kind for kind in (ColdStart, CrashLoop, Throttled, Flaky, SlowStream)
}
"""The class of each of ``SCENARIOS`` (a test holds them equal)."""


def parse(text: str, now: float = 0.0) -> Scenario:
    """``NAME`` or ``NAME:key=value,...`` as a scenario; a one-line ScenarioError else."""
    name, _, rest = text.strip().partition(":")
    if name not in KINDS:
        raise ScenarioError(f"unknown scenario {name!r}; the scenarios are {', '.join(SCENARIOS)}")
    kind = KINDS[name]
    values = dict(SCENARIOS[name])
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in values:
            known = ", ".join(SCENARIOS[name]) or "none"
            raise ScenarioError(
                f"scenario {name}: {item!r} is not a parameter of it (parameters: {known})"
            )
        values[key] = _number(name, key, value)
    if kind is Flaky and not 0 <= values["fraction"] <= 1:
        fraction = values["fraction"]
        raise ScenarioError(f"scenario flaky: fraction must be from 0 to 1, got {fraction:g}")
    return kind(values, set_at=now)


def _number(name: str, key: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"scenario {name}: {key} must be a number, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise ScenarioError(f"scenario {name}: {key} must be a number >= 0, got {value!r}")
    return number
