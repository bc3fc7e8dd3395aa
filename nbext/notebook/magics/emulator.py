"""``%runpod local ...``: the user's local service (docs/behaviour.md#the-local-service);
``%runpod emulator scenario ENDPOINT NAME``: its teaching scenarios, from a cell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.models.enums import SCENARIOS

from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, usage_errors

if TYPE_CHECKING:
    import argparse


OFF = "off"


@subcommand("local", "the local service every notebook shares: status, start, stop, restart, log")
@magic_arguments("runpod local")
@argument(
    "action",
    nargs="?",
    default="status",
    choices=["status", "start", "stop", "restart", "log"],
    help="status (the default): since when it runs, its data, endpoints and kernels; "
    "start; stop (its data is kept); restart; log: its last lines",
)
@argument("-n", "--lines", type=int, default=50, help="log: how many lines (default 50)")
def local_command(magics: Magics, args: argparse.Namespace) -> None:
    """The user's local service, which every kernel without an API key joins and which
    outlives them: its state (``status``), ``start`` it, ``stop`` it (what it holds is kept
    for its next start), ``restart`` it (after an upgrade of nbext, say), or read its ``log``.
    Example::

        %runpod local status
        %runpod local log -n 20
    """
    from nbext import service  # POSIX file locks: imported where used

    try:
        if args.action == "start":
            print(f"nbext: {service.join().describe()}")
        elif args.action == "restart":
            print(f"nbext: {service.restart().describe()}")
            magics.connection.rejoin()
        elif args.action == "stop":
            stopped = service.stop()
            print(
                f"stopped the local service (pid {stopped.pid}); it starts again at the "
                "next command that needs it"
                if stopped
                else "no local service runs"
            )
        elif args.action == "log":
            print("\n".join(service.log_lines(args.lines)) or "the log is empty")
        else:
            info = service.status()
            print(
                "\n".join(service.describe(info))
                if info
                else "no local service runs: it starts at the first command of a kernel with "
                "no API key, or with `%runpod local start`"
            )
    except (service.ServiceError, service.ServiceFileError) as exc:
        raise UsageError(str(exc)) from None


@subcommand("emulator", "give an endpoint of the local emulator a teaching scenario, or end it")
@magic_arguments("runpod emulator")
@argument("action", choices=["scenario"], help="what to do (scenario: set or end one)")
@argument("endpoint", help="the endpoint id")
@argument(
    "name",
    nargs="?",
    help=f"{', '.join(SCENARIOS)}; off ends the scenario; none given: show the endpoint's",
)
@argument(
    "params",
    nargs="*",
    metavar="KEY=VALUE",
    help="the scenario's parameters: "
    + "; ".join(f"{name} {' '.join(p) or '(none)'}" for name, p in SCENARIOS.items()),
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
    with usage_errors():
        service = magics.connection.local("teaching scenarios need")
    endpoints = {e["id"]: e for e in service.control("GET", "/_emulator/endpoints")}
    if args.endpoint not in endpoints:
        known = ", ".join(sorted(endpoints)) or "none"
        raise UsageError(f"endpoint {args.endpoint!r} not found; the emulator's endpoints: {known}")
    if args.name is None:
        shown = endpoints[args.endpoint]["scenario"] or "none (a healthy fleet)"
        print(f"endpoint {args.endpoint}: scenario {shown}")
        return
    if args.name == OFF and args.params:
        raise UsageError(f"'off' takes no parameters, got {' '.join(args.params)}")
    params = f":{','.join(args.params)}" if args.params else ""
    text = None if args.name == OFF else f"{args.name}{params}"
    with usage_errors():
        described = service.control(
            "PUT", f"/_emulator/endpoints/{args.endpoint}/scenario", {"scenario": text}
        )["scenario"]
    if text is None:
        print(f"endpoint {args.endpoint}: scenario ended; its workers are healthy again")
    else:
        print(f"endpoint {args.endpoint}: scenario {described} (end it with: off)")
