"""``%runpod health ENDPOINT [--watch SECONDS]``: counts now, or a live chart of them."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.client import NbextError

from ..ipython import argument, magic_arguments
from ..outputs import PanelOutput, show_panel
from ..widgets.health import HealthPanel
from .commands import subcommand
from .common import check_name, one_line, store, usage_errors

if TYPE_CHECKING:
    import argparse

    from nbext.client import AsyncEndpoint

    from . import RunpodMagics

MIN_WATCH = 0.1
"""The shortest interval between two health samples."""


async def watch(
    panel: HealthPanel, endpoint: AsyncEndpoint, every: float, output: PanelOutput | None
) -> None:
    """Sample ``endpoint``'s health every ``every`` seconds until the panel stops; then
    the cell keeps the chart as static HTML."""
    stopped = asyncio.Event()
    panel.on_stop = stopped.set
    try:
        while panel.watching:
            try:
                panel.add(await endpoint.health())
            except NbextError as exc:
                panel.set_error(one_line(str(exc)))
            try:
                await asyncio.wait_for(stopped.wait(), timeout=every)
            except TimeoutError:
                continue
    finally:
        panel.watching = False
        if output is not None:
            output.update()


@subcommand("health", "an endpoint's job and worker counts; --watch for a live chart")
@magic_arguments("runpod health")
@argument("endpoint", help="the endpoint id")
@argument("-o", "--output", help="store the panel in this variable (.frame() is its history)")
@argument(
    "--watch",
    type=float,
    metavar="SECONDS",
    help="keep sampling every SECONDS in the background and chart the history "
    "(stops when the panel's Stop button is pressed or the panel is closed)",
)
def health(magics: RunpodMagics, args: argparse.Namespace) -> None:
    """Jobs (in queue, in progress, completed, failed, retried) and workers (idle,
    running) of ENDPOINT. With ``--watch`` the panel keeps updating while other cells run.
    """
    name = check_name(args.output)
    if args.watch is not None and args.watch < MIN_WATCH:
        raise UsageError(f"--watch must be at least {MIN_WATCH} seconds, got {args.watch:g}")
    if args.watch is not None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise UsageError(
                "--watch updates the panel from the kernel's event loop, and none is running "
                "here (a Jupyter kernel has one); run %runpod health ENDPOINT for a snapshot"
            ) from None
    with usage_errors(f"endpoint {args.endpoint!r}"):
        service = magics.connection.service()
        first = service.client.endpoint(args.endpoint).health()
    panel = HealthPanel(args.endpoint, watching=args.watch is not None)
    panel.add(first)
    output = show_panel(panel)
    if args.watch is None:
        output.update()  # a snapshot is final at once: the cell keeps plain HTML
    else:
        endpoint = service.async_client().endpoint(args.endpoint)
        panel.task = loop.create_task(watch(panel, endpoint, args.watch, output))
    store(magics, name, panel)
