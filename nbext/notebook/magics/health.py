"""``%runpod health ENDPOINT [--watch SECONDS | --stop]``: counts now, or a live chart of
them until stopped."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.client import NbextError

from ..errors import one_line
from ..ipython import argument, magic_arguments
from ..uipoll import running_loop
from ..widgets.health import HealthPanel
from .commands import subcommand
from .common import Magics, check_name, store, usage_errors

if TYPE_CHECKING:
    import argparse

    from nbext.client import AsyncEndpoint


MIN_WATCH = 0.1
"""The shortest interval between two health samples."""
WATCHING: list[HealthPanel] = []
"""The panels whose watch runs (``--stop`` stops them)."""


async def watch(panel: HealthPanel, endpoint: AsyncEndpoint, every: float) -> None:
    """Sample ``endpoint``'s health every ``every`` seconds until the panel stops; then
    the cell keeps the chart as static HTML."""
    WATCHING.append(panel)
    try:
        while panel.running:
            try:
                panel.add(await endpoint.health())
            except NbextError as exc:
                panel.set_error(one_line(str(exc)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(panel.stopped.wait(), timeout=every)
    finally:
        WATCHING.remove(panel)
        panel.stop()  # ended by itself (the loop cancelled it): the chart turns static


@subcommand("health", "an endpoint's job and worker counts; --watch for a live chart")
@magic_arguments("runpod health")
@argument("endpoint", nargs="?", help="the endpoint id")
@argument("-o", "--output", help="store the panel in this variable (.frame() is its history)")
@argument(
    "--watch",
    type=float,
    metavar="SECONDS",
    help="keep sampling every SECONDS in the background and chart the history "
    "(until the panel's Stop button, --stop, or the panel is closed)",
)
@argument(
    "--stop",
    action="store_true",
    help="stop watching ENDPOINT (every watch without ENDPOINT); the chart stays",
)
def health(magics: Magics, args: argparse.Namespace) -> None:
    """Jobs (in queue, in progress, completed, failed, retried) and workers (idle,
    running) of ENDPOINT. With ``--watch`` the panel keeps updating while other cells run."""
    name = check_name(args.output)
    if args.stop:
        if args.watch is not None or args.output:
            raise UsageError("--stop takes only the ENDPOINT whose watch to stop")
        chosen = [p for p in WATCHING if args.endpoint in (None, p.endpoint_id)]
        for panel in chosen:
            panel.stop()
        whose = f" of {args.endpoint}" if args.endpoint else ""
        print(f"stopped {len(chosen)} health watch{'es' * (len(chosen) != 1)}{whose}")
        return
    if args.endpoint is None:
        raise UsageError("health needs an endpoint id (or --stop)")
    if args.watch is not None and args.watch < MIN_WATCH:
        raise UsageError(f"--watch must be at least {MIN_WATCH} seconds, got {args.watch:g}")
    loop = running_loop() if args.watch is not None else None
    if args.watch is not None and loop is None:
        raise UsageError(
            "--watch updates the panel from the kernel's event loop, and none is running "
            "here (a Jupyter kernel has one); run %runpod health ENDPOINT for a snapshot"
        )
    with usage_errors(f"endpoint {args.endpoint!r}"):
        service = magics.connection.service()
        first = service.client.endpoint(args.endpoint).health()
    panel = HealthPanel(args.endpoint, watching=args.watch is not None)
    panel.add(first)
    panel.show()  # a snapshot is final at once: the cell keeps plain HTML
    if loop is not None:
        endpoint = service.async_client().endpoint(args.endpoint)
        panel.task = loop.create_task(watch(panel, endpoint, args.watch))
    store(magics, name, panel)
