"""``%runpod batch`` (start, attach, cancel) and ``%runpod batches``: the service's batch jobs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..batch import attach_line, follow, follow_async, keep_inputs, kept_inputs
from ..display import show_frame
from ..display.frames import to_frame
from ..display.specs import BATCHES
from ..interrupts import deferred_interrupts
from ..ipython import argument, magic_arguments
from ..map import inputs_of
from ..uipoll import running_loop
from .commands import subcommand
from .common import Magics, check_name, inputs_named, store, store_and_show, usage_errors

if TYPE_CHECKING:
    import argparse

    import pandas as pd

BACKGROUND: set[asyncio.Task[None]] = set()
"""The batches followed in the background (a task the loop holds only weakly)."""
USAGE = "%runpod batch ENDPOINT INPUTS | attach ENDPOINT BATCH_ID | cancel ENDPOINT BATCH_ID"


async def batch_command_async(magics: Magics, args: argparse.Namespace) -> None:
    """``%runpod batch`` in a cell that awaits, where the panel's Cancel is heard."""
    if args.background or args.quiet:
        batch_command(magics, args)
    elif (what := _what(magics, args)) is not None:
        await _followed_async(magics, args, what)


@subcommand(
    "batch",
    "run inputs as a batch the service keeps; attach to one, or cancel it",
    awaited=batch_command_async,
)
@magic_arguments("runpod batch")
@argument("words", nargs="+", help=USAGE.removeprefix("%runpod batch "))
@argument("-o", "--output", help="store the results DataFrame in this variable")
@argument("--background", action="store_true", help="follow in the background; the cell ends")
@argument("-q", "--quiet", action="store_true", help="no panel, no table: a line at the end")
def batch_command(magics: Magics, args: argparse.Namespace) -> None:
    """Start a batch of INPUTS (a list of dicts, or a DataFrame's rows) on ENDPOINT, or
    attach to BATCH_ID, and follow it in a panel; with -o, a DataFrame back: the input's
    columns, id, state, run_ms, output, error, started_at, completed_at. Interrupting
    the kernel detaches (the batch runs on); ``cancel`` cancels it."""
    what = _what(magics, args)
    if what is None:
        return
    if args.background and running_loop() is None:
        raise UsageError(
            "--background needs the kernel's event loop, and none is running here: "
            "%runpod batch without it follows the batch in this cell"
        )
    endpoint, batch_id, items, inputs = what
    service = magics.connection.service()
    with usage_errors(f"batch on {endpoint!r}"), deferred_interrupts(deliver=False) as held:
        handle = service.client.endpoint(endpoint)
        batch = handle.get_batch(batch_id) if batch_id else handle.batch(items)
        if items:
            keep_inputs(batch.id, items)
    if held.received:  # Ctrl-C while it was being sent: it was, and runs on
        print(f"detached from batch {batch.id}, which runs on: {attach_line(batch)}")
        return
    if args.background:  # followed by the async twin; the cell ends now
        what = (endpoint, batch.id, None, inputs)
        task = asyncio.get_running_loop().create_task(_followed_async(magics, args, what))
        BACKGROUND.add(task)
        task.add_done_callback(BACKGROUND.discard)
        print(f"batch {batch.id} followed in the background; from any kernel: {attach_line(batch)}")
        return
    _show(magics, args, follow(batch, inputs, quiet=args.quiet))


async def _followed_async(magics: Magics, args: argparse.Namespace, what: Any) -> None:
    endpoint, batch_id, items, inputs = what
    handle = magics.connection.service().async_client().endpoint(endpoint)
    with usage_errors(f"batch on {endpoint!r}"):
        batch = await (handle.get_batch(batch_id) if batch_id else handle.batch(items))
    if items:
        keep_inputs(batch.id, items)
    _show(magics, args, await follow_async(batch, inputs))


def _what(magics: Magics, args: argparse.Namespace) -> tuple[str, str | None, Any, Any] | None:
    """What the words ask: (endpoint, batch id to attach, inputs to start, their frame);
    None when done here (``cancel``)."""
    check_name(args.output)
    words = args.words
    if len(words) != (3 if words[0] in ("attach", "cancel") else 2):
        raise UsageError(f"usage: {USAGE}")
    if words[0] == "cancel":
        with usage_errors(f"batch {words[2]}"):
            endpoint = magics.connection.service().client.endpoint(words[1])
            record = endpoint.get_batch(words[2]).cancel()
        print(
            f"batch {record.id} {record.status.value}: queued requests dropped, running ones finish"
        )
        return None
    if words[0] == "attach":
        return words[1], words[2], None, kept_inputs(words[2])
    inputs = inputs_named(magics, words[1])
    with usage_errors(f"batch on {words[0]!r}"):
        items, frame = inputs_of(inputs)
    return words[0], None, items, frame


def _show(magics: Magics, args: argparse.Namespace, frame: pd.DataFrame | None) -> None:
    if frame is not None and args.output:
        store(magics, args.output, frame)
        if not args.background and not args.quiet:
            show_frame(frame, magics.display_limit, what="results", stored_as=args.output)


@subcommand("batches", "an endpoint's batches, newest first, as a DataFrame")
@magic_arguments("runpod batches")
@argument("endpoint", help="the endpoint id")
@argument("-o", "--output", help="store the DataFrame in this variable")
def batches_command(magics: Magics, args: argparse.Namespace) -> None:
    """ENDPOINT's batches, newest first: id, status, the request counts, created_at."""
    name = check_name(args.output)
    with usage_errors(f"endpoint {args.endpoint!r}"):
        found = magics.connection.service().client.endpoint(args.endpoint).batches()
    frame = to_frame([b.model_dump() for b in found], BATCHES)
    store_and_show(magics, name, frame, "batches")
