"""``%runpod logs POD_OR_ENDPOINT [--follow]``: a pod's log, or an endpoint's workers' logs
(docs/architecture.md#catalog-and-logs-in-the-notebook)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.client import NbextError, NotFound

from ..errors import did_you_mean, one_line
from ..ipython import argument, magic_arguments
from ..log_rendering import LogLine, Target
from ..uipoll import running_loop
from ..widgets.logs import LogPanel
from .commands import subcommand
from .common import Magics, check_name, number_option, store, usage_errors

if TYPE_CHECKING:
    import argparse

    from nbext.client import Client
    from nbext.models.v2 import LogEvent

    from ..connection import Service

FLUSH_EVERY = 0.1
"""Seconds between two redraws of a followed log (lines arrive in bursts)."""
RESCAN_POLLS = 10
"""An endpoint's workers are listed again every this many poll intervals (5 s by
default): new workers' logs are followed from their first line."""
FOLLOWING: list[LogPanel] = []
"""Panels following now, oldest first (``%runpod logs --stop`` stops them)."""


def as_line(event: LogEvent, worker: str | None = None) -> LogLine:
    return LogLine(ts=event.ts, source=event.source, line=event.line, worker=worker)


def resolve(client: Client, target: str) -> tuple[Target, str]:
    """Whether ``target`` is a pod or an endpoint, and its id: tried as a pod's id, an
    endpoint's, then as the name of exactly one of them (names are what users remember)."""
    with usage_errors("logs"):
        with contextlib.suppress(NotFound):
            client.pods.logs(target, tail=1)
            return "pod", target
        with contextlib.suppress(NotFound):
            client.endpoints.workers(target)
            return "endpoint", target
        endpoints = [(e.id, e.name) for e in client.endpoints.list() if e.id]
        named: list[tuple[Target, str]] = [
            *(("pod", p.id) for p in client.pods.list() if p.name == target and p.id),
            *(("endpoint", i) for i, name in endpoints if name == target),
        ]
    if not named:
        hint = did_you_mean(target, endpoints)
        raise UsageError(f"logs: no pod or endpoint {target!r} (by id or by name){hint}")
    if len(named) > 1:
        which = ", ".join(f"{kind} {found}" for kind, found in named)
        raise UsageError(f"logs: {target!r} names more than one: {which}; give the id")
    return named[0]


def worker_ids(client: Client, endpoint: str, only: str | None) -> list[str]:
    """The endpoint's workers (just ``only`` when given; unknown: a one-line error)."""
    with usage_errors(f"logs of endpoint {endpoint!r}"):
        known = [w.id for w in client.endpoints.workers(endpoint)]
    if only is None:
        return known
    if only not in known:
        listed = ", ".join(known) or "none now"
        raise UsageError(f"logs: endpoint {endpoint!r} has no worker {only!r} (workers: {listed})")
    return [only]


def last_lines(
    client: Client, kind: Target, target: str, workers: list[str], tail: int | None
) -> list[LogLine]:
    """A pod's last lines, or the workers', merged in time order (``tail`` of them in all)."""
    with usage_errors(f"logs of {kind} {target!r}"):
        if kind == "pod":
            return [as_line(e) for e in client.pods.logs(target, tail=tail)]
        lines = [
            as_line(e, worker)
            for worker in workers
            for e in client.endpoints.worker_logs(target, worker, tail=tail)
        ]
    lines.sort(key=lambda line: line.ts)
    return lines[-tail:] if tail else lines


class LogFollower:
    """Feeds ``panel`` from the log stream(s) of a pod or an endpoint's workers; ``run``
    returns when following stops, the panel holding the last lines."""

    def __init__(
        self, panel: LogPanel, service: Service, worker: str | None, tail: int | None, rescan: float
    ) -> None:
        self.panel = panel
        self.service = service
        self.worker = worker
        self.tail = tail
        self.rescan = rescan
        self._workers: dict[str, asyncio.Task[None]] = {}
        FOLLOWING.append(panel)

    async def run(self) -> None:
        panel = self.panel
        self.client = self.service.async_client()  # the one of the loop this runs on
        flusher = asyncio.create_task(self._flush())
        try:
            work = self._pod() if panel.kind == "pod" else self._endpoint()
            main = asyncio.create_task(work)
            stop = asyncio.create_task(panel.stopped.wait())
            try:
                await asyncio.wait({main, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (main, stop, *self._workers.values()):
                    task.cancel()
                await asyncio.gather(main, stop, *self._workers.values(), return_exceptions=True)
            if main.done() and not main.cancelled() and main.exception() is not None:
                error = main.exception()
                if not isinstance(error, NbextError):
                    raise error  # type: ignore[misc]
                panel.set_error(one_line(str(error)))
        finally:
            flusher.cancel()
            with contextlib.suppress(ValueError):
                FOLLOWING.remove(panel)
            if panel.running:  # ended by itself (an error, or the loop cancelled it)
                panel.stop("following ended")
            panel.refresh(force=True)

    async def _flush(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY)
            self.panel.flush()

    async def _feed(self, events: AsyncIterator[LogEvent], worker: str | None) -> None:
        async for event in events:
            self.panel.add([as_line(event, worker)], draw=False)

    async def _pod(self) -> None:
        target = self.panel.target
        await self._feed(self.client.pods.follow_logs(target, tail=self.tail), None)
        self.panel.stop(f"pod {target} is gone")

    async def _endpoint(self) -> None:
        """Follow every worker (or ``--worker``); look for new ones every ``rescan``."""
        target = self.panel.target
        while True:
            try:
                workers = [w.id for w in await self.client.endpoints.workers(target)]
            except NotFound:
                self.panel.stop(f"endpoint {target} is gone")
                return
            for worker in workers:
                if self.worker not in (None, worker) or worker in self._workers:
                    continue
                events = self.client.endpoints.follow_worker_logs(target, worker, tail=self.tail)
                self._workers[worker] = asyncio.create_task(self._feed(events, worker))
            for worker, task in self._workers.items():
                failed = task.exception() if task.done() and not task.cancelled() else None
                if isinstance(failed, NbextError):
                    self.panel.set_error(f"worker {worker}: {one_line(str(failed))}")
                elif failed is not None:
                    raise failed
            live = sum(not task.done() for task in self._workers.values())
            self.panel.set_workers(live)
            await asyncio.sleep(self.rescan)


@atexit.register
def stop_all_at_exit() -> None:
    """The interpreter ends (the kernel shuts down): every follower stops."""
    for panel in list(FOLLOWING):
        with contextlib.suppress(Exception):  # the loop may be closed already
            panel.stop("the kernel shut down")


@subcommand("logs", "a pod's log, or an endpoint's workers' logs; --follow streams them")
@magic_arguments("runpod logs")
@argument("target", nargs="?", help="a pod or an endpoint: its id, or its name")
@argument(
    "--follow",
    action="store_true",
    help="keep showing new lines in a live panel (in the background in Jupyter; "
    "Ctrl-C where the cell must wait) until stopped",
)
@argument("--tail", type=number_option("--tail"), metavar="N", help="the last N lines only")
@argument("--worker", metavar="ID", help="an endpoint's worker: only its lines")
@argument(
    "--max-lines",
    type=number_option("--max-lines"),
    metavar="N",
    help="lines a followed panel keeps (default: the log_max_lines trait)",
)
@argument(
    "--stop",
    action="store_true",
    help="stop following TARGET's log (every followed log without TARGET)",
)
@argument(
    "-o",
    "--output",
    help="store the lines as a DataFrame in this variable (with --follow: the panel; "
    ".frame() gives its lines)",
)
def logs(magics: Magics, args: argparse.Namespace) -> None:
    """The log of a pod, or of an endpoint's workers (each line tagged with its worker),
    as the service keeps them. With ``--follow`` new lines stream into a panel; when
    following stops, the cell keeps the last lines as plain HTML and text."""
    name = check_name(args.output)
    if args.stop:
        if args.follow or args.tail or args.worker or args.output:
            raise UsageError("--stop takes only the TARGET whose following to stop")
        # TARGET is an id, or the name the following was asked by (every log when None)
        FOLLOWING[:] = [p for p in FOLLOWING if p.running]
        chosen = [p for p in FOLLOWING if args.target in (None, p.target, p.name)]
        for panel in chosen:
            panel.stop("stopped by %runpod logs --stop")
        whose = f" of {args.target}" if args.target else ""
        print(f"stopped following {len(chosen)} log{'s' * (len(chosen) != 1)}{whose}")
        return
    if args.target is None:
        raise UsageError("logs needs a pod id or an endpoint id (or --stop)")
    if args.max_lines is not None and not args.follow:
        raise UsageError("--max-lines applies to --follow (without it, use --tail)")
    loop = running_loop() if args.follow else None
    with usage_errors("logs"):
        service = magics.connection.service()
    client = service.client
    kind, target = resolve(client, args.target)
    if kind == "pod" and args.worker is not None:
        raise UsageError(f"--worker applies to an endpoint's workers; {args.target!r} is a pod")
    workers = worker_ids(client, target, args.worker) if kind == "endpoint" else []
    if not args.follow:
        panel = LogPanel(kind, target, name=args.target, max_lines=magics.log_max_lines)
        panel.add(last_lines(client, kind, target, workers, args.tail))
        if kind == "endpoint":
            panel.set_workers(len(workers))
        panel.show()  # final at once: the cell keeps plain HTML
        store(magics, name, panel.frame())
        return
    kept = args.max_lines or magics.log_max_lines
    panel = LogPanel(kind, target, name=args.target, following=True, max_lines=kept)
    if loop is None:  # followed in the cell, which an interrupt stops
        panel.hint = "interrupt the kernel (■) to stop following"
    panel.show()
    store(magics, name, panel)
    rescan = magics.poll_interval * RESCAN_POLLS
    follower = LogFollower(panel, service, args.worker, args.tail, rescan)
    if loop is not None:  # in the background on the kernel's loop
        panel.task = loop.create_task(follower.run())
        return

    async def in_cell() -> None:
        try:
            await follower.run()
        finally:
            await service.aclose()  # its pool belongs to this loop, which ends here

    try:
        asyncio.run(in_cell())
    except KeyboardInterrupt:
        panel.stop("stopped by an interrupt")
