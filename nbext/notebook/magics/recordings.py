"""``%runpod record PATH`` / ``record stop`` and ``%runpod replay PATH``: a class or a demo
recorded on a service, then served by the local service with no key or network
(docs/behaviour.md#recordings)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.client import Recording

from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, number_option, usage_errors

if TYPE_CHECKING:
    import argparse

RECORDING: list[Recording] = []
"""The recording this kernel makes, while it records."""


@subcommand("record", "record this kernel's jobs to a file to replay; `record stop` writes it")
@magic_arguments("runpod record")
@argument("path", help="the file to write (JSON Lines), or `stop` to stop and write it")
def record(magics: Magics, args: argparse.Namespace) -> None:
    """Record every job this kernel's clients submit to the service it is connected to
    (the cloud or the local service) until `%runpod record stop` writes PATH."""
    if args.path == "stop":
        if not RECORDING:
            raise UsageError("nothing is being recorded: start with `%runpod record PATH`")
        recording = RECORDING.pop()
        print(f"recorded {recording.stop()} calls to {recording.path}")
        return
    if RECORDING:
        raise UsageError(f"already recording to {RECORDING[0].path}: `%runpod record stop` first")
    with usage_errors("record"):
        service = magics.connection.service()
    try:
        RECORDING.append(service.client.record(args.path))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"recording this kernel's calls to the {service.mode} service in {RECORDING[0].path}")


@subcommand("replay", "make the local service answer with a recording's outputs and timings")
@magic_arguments("runpod replay")
@argument("path", help="a recording (`%runpod record`)")
@argument(
    "--speed",
    type=number_option("--speed", float),
    default=1.0,
    help="replay N times faster (default 1: as recorded)",
)
@argument("--instant", action="store_true", help="no waits at all")
def replay(magics: Magics, args: argparse.Namespace) -> None:
    """Serve PATH's jobs from the local service: its endpoints answer each recorded input
    with the recorded output, chunks and timing; no key, no network."""
    body = {
        "path": str(Path(args.path).expanduser().resolve()),
        "speed": args.speed,
        "instant": args.instant,
    }
    with usage_errors("replay"):
        service = magics.connection.local("replaying a recording needs")
        answer = service.control("PUT", "/_emulator/replays", body)
    endpoints = ", ".join(answer["endpoints"])
    print(f"replaying {answer['jobs']} recorded calls as endpoints {endpoints}")
