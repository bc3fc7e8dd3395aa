"""The Jupyter surface: ``%load_ext nbext``, ``%%runpod_job``, ``%runpod``, live panels.

``%load_ext nbext`` registers the magics and says which service the kernel talks to.
From Python: ``deploy`` makes a notebook function an endpoint, ``run_many`` runs many
inputs as jobs, ``client()`` is the kernel's client, whose calls the panels follow.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from IPython.core.error import UsageError

from nbext.client import Client, ConfigError, NbextError
from nbext.models import JobResult

from . import awaiting, colab
from .connection import Connection, quiet_emulator_log
from .deploy import deploy
from .errors import NotebookError
from .follow import JobFollower
from .interrupts import Interrupted
from .kernel import current, set_current
from .magics import RunpodMagics
from .map import run_many, run_many_async
from .widgets import HealthPanel, JobPanel, MapPanel

__all__ = [
    "Connection",
    "HealthPanel",
    "Interrupted",
    "JobFollower",
    "JobPanel",
    "MapPanel",
    "NotebookError",
    "RunpodMagics",
    "client",
    "current",
    "deploy",
    "load_ipython_extension",
    "run_many",
    "run_many_async",
    "set_current",
    "unload_ipython_extension",
    "wait_background",
]


def client() -> Client:
    """The client of the service this kernel talks to (the emulator started if needed).

    Calls on it are seen by the kernel's panels: ``client().endpoint("sleep").job(id)
    .cancel()`` in a cell makes every panel of that job show CANCELLED, and a
    ``retry()`` of a job this kernel submitted is followed to its end like
    ``%runpod retry``. After ``%runpod connect``, call it again for the new service.
    """
    return current().client


async def wait_background(timeout: float | None = None) -> list[JobResult | None]:
    """Wait until every job this kernel follows in the background has ended.

    ``await nbext.notebook.wait_background()`` in a cell makes a notebook run top to
    bottom (headless, in CI) see the outcome of its ``--background`` jobs. Returns their
    final results (None for a job removed or no longer waited for).
    """
    tasks: list[asyncio.Task[JobResult | None]] = []
    for record in current().registry:
        follower = record.follower
        if follower is not None and follower.task is not None and follower.following:
            tasks.append(follower.task)
    if not tasks:
        return []
    async with asyncio.timeout(timeout):
        return list(await asyncio.gather(*tasks))


def load_ipython_extension(ipython: Any, connection: Connection | None = None) -> RunpodMagics:
    """Register the magics (configurable with ``%config RunpodMagics``); say which service.

    ``connection`` replaces the kernel's (tests bind one to their own emulator).
    """
    if connection is not None:
        set_current(connection)
    try:
        connection = current()
    except ConfigError as exc:  # the user can fix it, then %load_ext nbext again
        raise UsageError(f"nbext: {exc}") from None
    quiet_emulator_log()
    colab.enable_widgets()
    if connection.config.api_key is None:
        key, said = colab.secret_key()
        if said is not None:
            print(said)
        if key is not None:
            with contextlib.suppress(NbextError):  # said by the banner below
                connection.use_key(key, colab.SOURCE)
    magics = RunpodMagics(ipython, connection=connection)
    ipython.register_magics(magics)
    awaiting.install(ipython)  # in a kernel that allows it, Cancel works mid-cell
    ipython.configurables[:] = [
        c for c in ipython.configurables if not isinstance(c, RunpodMagics)
    ] + [magics]
    with contextlib.suppress(ValueError):
        ipython.events.unregister("pre_run_cell", _rejoin)
    ipython.events.register("pre_run_cell", _rejoin)
    if magics.connection.mode == "local" and not magics.connection.private:
        with contextlib.suppress(NbextError):  # said again by the command that needs it
            magics.connection.service()  # joined now, so the banner says which
    print(magics.connection.banner())
    return magics


def _rejoin(*_: Any) -> None:
    """Before each cell: a local service that has gone is noticed and joined anew."""
    with contextlib.suppress(NbextError):
        current().rejoin()


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext nbext``: close the clients; the local service runs on."""
    awaiting.uninstall(ipython)
    with contextlib.suppress(ValueError):
        ipython.events.unregister("pre_run_cell", _rejoin)
    connection = set_current(None)
    if connection is not None:
        connection.close()
