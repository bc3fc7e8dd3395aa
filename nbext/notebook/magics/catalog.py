"""``%runpod gpus``: the service's GPU types with memory, prices and availability, cheapest
first in the cloud asked for (the filters are the client's ``catalog.gpus``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..display import to_frame
from ..display.specs import GPUS
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, check_name, number_option, store_and_show, usage_errors
from .listings import ALL_HELP, management

if TYPE_CHECKING:
    import argparse


PRICE_COLUMN = {"secure": "secure_usd_hr", "community": "community_usd_hr"}
"""The price a row is sorted by, per cloud."""


@subcommand("gpus", "the GPU types on offer: memory, prices, availability (a DataFrame)")
@magic_arguments("runpod gpus")
@argument("--available", action="store_true", help="only the types available now")
@argument(
    "--min-vram",
    type=number_option("--min-vram"),
    metavar="GB",
    help="only types with at least GB of memory",
)
@argument(
    "--max-price",
    type=number_option("--max-price", float),
    metavar="USD",
    help="only types costing at most USD per GPU-hour (in --cloud; without it, in the "
    "cheaper of the secure and community clouds)",
)
@argument(
    "--cloud",
    choices=sorted(PRICE_COLUMN),
    help="price and availability in this cloud (default: secure)",
)
@argument("--all", action="store_true", help=ALL_HELP)
@argument("-o", "--output", help="store the whole DataFrame in this variable")
def gpus(magics: Magics, args: argparse.Namespace) -> None:
    """The service's GPU types, cheapest first: memory (GB), the price per GPU-hour in the
    secure and community clouds and on serverless, whether they are available now, and
    the most GPUs one pod can have. For example ``%runpod gpus --min-vram 24 --available``."""
    name = check_name(args.output)
    catalog = management(magics, "catalog", "gpus")
    with usage_errors("gpus"):
        records = catalog.gpus(
            available=args.available,
            min_vram_gb=args.min_vram,
            max_price=args.max_price,
            cloud=args.cloud.upper() if args.cloud else None,
        )
    frame = to_frame(records, GPUS)
    if args.cloud is not None and len(frame):
        by = PRICE_COLUMN[args.cloud]
        frame = frame.sort_values(by, kind="stable").reset_index(drop=True)
    store_and_show(magics, name, frame, "gpus", None if args.all else GPUS.default_columns)
