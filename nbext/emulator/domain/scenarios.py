"""Teaching scenarios: an endpoint given the troubles of a real fleet, deterministically.

"Is it broken or just cold?" is the most confusing moment of serverless. A class, a demo
or a test needs to meet each cause on purpose, offline and repeatably, so an endpoint can
be given a scenario (``Emulator.set_scenario``, ``--scenario`` on the command line,
``deploy(scenario=...)``, ``%runpod emulator scenario``):

- ``cold-start``: each new worker initializes for ``seconds`` (default 10) before it
  takes a job;
- ``crash-loop``: every worker exits as it starts; it is restarted with backoff and
  counted ``unhealthy``, its last log line kept, and no job starts;
- ``throttled``: for ``seconds`` (default 30) from when the scenario is set, no GPU is
  free: new workers are ``throttled`` and jobs wait; then they start as usual;
- a crash-looping worker that no job waits for (and not needed for ``workersMin``) is
  not restarted, as the service stops scaling up for an empty queue;
- ``flaky``: a ``fraction`` of jobs (default 0.3) fail, chosen by a ``seed``ed draw;
- ``slow-stream``: a streaming handler's chunks come ``seconds`` (default 2) apart.

Every time is on the emulator's clock, so a fake clock runs a scenario at once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

NAMES = ("cold-start", "crash-loop", "throttled", "flaky", "slow-stream")
DEFAULTS: dict[str, dict[str, float]] = {
    "cold-start": {"seconds": 10.0},
    "crash-loop": {},
    "throttled": {"seconds": 30.0},
    "flaky": {"fraction": 0.3, "seed": 0.0},
    "slow-stream": {"seconds": 2.0},
}
CRASH_LINE = "Worker is unhealthy, exiting (the crash-loop scenario: it exits at start)"
"""The last log line of a crash-looping worker, as the service's SDK says it."""
RESTART_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds before a crashed worker's next start, as the emulator restarts worker scripts."""


class ScenarioError(ValueError):
    """A scenario that cannot be: unknown name, unknown or bad parameter."""


@dataclass
class Scenario:
    """One endpoint's scenario and the state it keeps (the flaky draw, throttling's end)."""

    name: str
    params: dict[str, float]
    set_at: float = 0.0
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(int(self.params.get("seed", 0)))

    @property
    def seconds(self) -> float:
        return self.params.get("seconds", 0.0)

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        return f"{self.name} ({shown})" if shown else self.name

    def throttled_until(self) -> float | None:
        return self.set_at + self.seconds if self.name == "throttled" else None

    def startup_seconds(self) -> float:
        """How long a new worker initializes before it is ready."""
        return self.seconds if self.name == "cold-start" else 0.0

    def fails_next_job(self) -> bool:
        """For ``flaky``: whether the next job to start fails (a seeded draw per job)."""
        return self.name == "flaky" and self._rng.random() < self.params["fraction"]

    def chunk_gap(self) -> float:
        return self.seconds if self.name == "slow-stream" else 0.0


def parse(text: str, now: float = 0.0) -> Scenario:
    """``NAME`` or ``NAME:key=value,...`` as a scenario; a one-line ScenarioError else."""
    name, _, rest = text.strip().partition(":")
    if name not in DEFAULTS:
        raise ScenarioError(f"unknown scenario {name!r}; the scenarios are {', '.join(NAMES)}")
    params = dict(DEFAULTS[name])
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in params:
            known = ", ".join(DEFAULTS[name]) or "none"
            raise ScenarioError(
                f"scenario {name}: {item!r} is not a parameter of it (parameters: {known})"
            )
        params[key] = _number(name, key, value)
    return make(name, now, **params)


def make(name: str, now: float = 0.0, **params: Any) -> Scenario:
    """A scenario from keyword parameters (checked as ``parse`` checks them)."""
    if name not in DEFAULTS:
        raise ScenarioError(f"unknown scenario {name!r}; the scenarios are {', '.join(NAMES)}")
    values = dict(DEFAULTS[name])
    for key, value in params.items():
        if key not in values:
            known = ", ".join(DEFAULTS[name]) or "none"
            raise ScenarioError(f"scenario {name}: no parameter {key!r} (parameters: {known})")
        values[key] = _number(name, key, value)
    if name == "flaky" and not 0 <= values["fraction"] <= 1:
        fraction = values["fraction"]
        raise ScenarioError(f"scenario flaky: fraction must be from 0 to 1, got {fraction:g}")
    return Scenario(name, values, set_at=now)


def _number(name: str, key: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"scenario {name}: {key} must be a number, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise ScenarioError(f"scenario {name}: {key} must be a number >= 0, got {value!r}")
    return number
