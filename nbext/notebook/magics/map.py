"""``%runpod map ENDPOINT VAR``: a list of inputs (or a DataFrame's rows) as jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..ipython import argument, magic_arguments
from ..map import DEFAULT_CONCURRENCY, run_many, run_many_async
from .commands import subcommand
from .common import Magics, check_name, inputs_named, positive, store_and_show, usage_errors
from .job import job_option_arguments, job_options

if TYPE_CHECKING:
    import argparse


async def map_command_async(magics: Magics, args: argparse.Namespace) -> None:
    """``%runpod map`` in a cell that awaits, where the panel's Cancel stops the map."""
    name, arguments = _checked(magics, args)
    with usage_errors(f"map on {args.endpoint!r}"):
        frame = await run_many_async(**arguments)
    store_and_show(magics, name, frame, "results")


@subcommand(
    "map",
    "run a list of inputs (or a DataFrame's rows) as jobs; a DataFrame back",
    awaited=map_command_async,
)
@magic_arguments("runpod map")
@argument("endpoint", help="the endpoint id")
@argument("inputs", help="a notebook variable: a list of dicts, or a DataFrame (one job per row)")
@argument("-o", "--output", help="store the results DataFrame in this variable")
@argument(
    "--concurrency",
    type=int,
    default=DEFAULT_CONCURRENCY,
    help=f"jobs in flight at once (default {DEFAULT_CONCURRENCY})",
)
@argument("--deadline", type=float, help="seconds to wait for each job")
@job_option_arguments
@argument("-q", "--quiet", action="store_true", help="no progress panel")
def map_command(magics: Magics, args: argparse.Namespace) -> None:
    """Run every input of INPUTS as a job of ENDPOINT, with a progress bar and counts by
    state; then a DataFrame: the input's columns, id, state, delay_ms, run_ms, output, error."""
    name, arguments = _checked(magics, args)
    with usage_errors(f"map on {args.endpoint!r}"):
        frame = run_many(**arguments)
    store_and_show(magics, name, frame, "results")


def _checked(magics: Magics, args: argparse.Namespace) -> tuple[str | None, dict[str, Any]]:
    """The arguments checked: ``-o`` NAME, and those of ``run_many`` (and its async twin)."""
    name = check_name(args.output)
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    arguments = {
        "endpoint": args.endpoint,
        "inputs": inputs_named(magics, args.inputs),
        "concurrency": args.concurrency,
        "deadline": positive(args.deadline, "--deadline"),
        "options": job_options(args),
        "quiet": args.quiet,
        "connection": magics.connection,
    }
    return name, arguments
