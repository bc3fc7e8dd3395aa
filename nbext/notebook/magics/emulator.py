"""``%runpod emulator scenario ENDPOINT NAME [KEY=VALUE ...]``: the local emulator's
teaching scenarios, set and ended from a cell.

A class or a demo meets each cause of a job that waits (a cold start, a crash loop, no
GPU free, jobs that fail, a slow stream) on purpose, in the notebook that explains it,
and ends it with ``off``. Only the emulator embedded in this kernel has scenarios; on the
cloud the troubles are real, and the command says so in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..errors import one_line
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, usage_errors

if TYPE_CHECKING:
    import argparse

    from nbext.emulator import Emulator


OFF = "off"


@subcommand("emulator", "give an endpoint of the local emulator a teaching scenario, or end it")
@magic_arguments("runpod emulator")
@argument("action", choices=["scenario"], help="what to do (scenario: set or end one)")
@argument("endpoint", help="the endpoint id")
@argument(
    "name",
    nargs="?",
    help="cold-start, crash-loop, throttled, flaky or slow-stream; off ends the scenario; "
    "none given: show the endpoint's scenario",
)
@argument(
    "params",
    nargs="*",
    metavar="KEY=VALUE",
    help="the scenario's parameters, e.g. seconds=20 (cold-start, throttled, slow-stream), "
    "fraction=0.5 seed=3 (flaky)",
)
def emulator_command(magics: Magics, args: argparse.Namespace) -> None:
    """Give ENDPOINT deterministic troubles on the emulator's clock: its workers
    initialize for a while (cold-start), exit at start and restart with backoff
    (crash-loop), wait for a GPU (throttled), or a seeded fraction of its jobs fail
    (flaky), or its stream's chunks come far apart (slow-stream). Workers not running a
    job start again under the new scenario. Example::

        %runpod emulator scenario echo cold-start seconds=20
        %runpod emulator scenario echo off
    """
    emulator = local_emulator(magics)
    endpoints = emulator.jobs.endpoints
    if args.endpoint not in endpoints:
        known = ", ".join(sorted(endpoints)) or "none"
        raise UsageError(f"endpoint {args.endpoint!r} not found; the emulator's endpoints: {known}")
    if args.name is None:
        scenario = endpoints[args.endpoint].scenario
        shown = scenario.describe() if scenario is not None else "none (a healthy fleet)"
        print(f"endpoint {args.endpoint}: scenario {shown}")
        return
    if args.name == OFF and args.params:
        raise UsageError(f"'off' takes no parameters, got {' '.join(args.params)}")
    params = f":{','.join(args.params)}" if args.params else ""
    text = None if args.name == OFF else f"{args.name}{params}"
    try:
        described = emulator.set_scenario(args.endpoint, text)
    except ValueError as exc:
        raise UsageError(one_line(str(exc))) from None
    if text is None:
        print(f"endpoint {args.endpoint}: scenario ended; its workers are healthy again")
    else:
        print(f"endpoint {args.endpoint}: scenario {described} (end it with: off)")


def local_emulator(magics: Magics) -> Emulator:
    """The kernel's embedded emulator; a one-line error when connected to the cloud."""
    with usage_errors():
        emulator = magics.connection.local("teaching scenarios need").emulator
    assert emulator is not None, "the local service runs an emulator"
    return emulator
