"""``%runpod templates | pods | endpoints | volumes | registry-auths`` and ``billing``.

Each listing is the client's management call plus a column spec (``display.specs``);
the subcommands are made from a table, so a new resource is one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..display import ListingSpec, show_frame, to_frame
from ..display.specs import BILLING, ENDPOINTS, PODS, REGISTRY_AUTHS, TEMPLATES, VOLUMES
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import check_name, store, usage_errors

if TYPE_CHECKING:
    import argparse

    import pandas as pd

    from . import RunpodMagics

LISTINGS: tuple[tuple[str, str, ListingSpec, str], ...] = (
    ("templates", "templates", TEMPLATES, "the account's templates, endpoints' ones included"),
    ("pods", "pods", PODS, "the account's pods"),
    ("endpoints", "endpoints", ENDPOINTS, "the account's serverless endpoints"),
    ("volumes", "network_volumes", VOLUMES, "the account's network volumes"),
    ("registry-auths", "registry_auths", REGISTRY_AUTHS, "container registry credentials"),
)
"""(subcommand, client attribute, column spec, summary)."""


def management(magics: RunpodMagics, attribute: str, command: str) -> Any:
    """The current service's management resource ``attribute`` (``client.templates``...)."""
    with usage_errors(command):
        service = magics.connection.service()
    return getattr(service.client, attribute)


LIST_OPTIONS: dict[str, dict[str, Any]] = {
    "templates": {"include_endpoint_bound_templates": True},
    "endpoints": {"include_template": True},
}
"""Arguments of a listing's ``list`` call: a notebook lists all of the user's templates,
including those bound to endpoints (the service leaves those out by default), and
endpoints with their template, so the ``image_name`` column says what each one runs."""


def _listing(command: str, attribute: str, spec: ListingSpec, summary: str) -> None:
    @magic_arguments(f"runpod {command}")
    @argument("-o", "--output", help="store the whole DataFrame in this variable")
    def handler(magics: RunpodMagics, args: argparse.Namespace) -> None:
        name = check_name(args.output)
        resource = management(magics, attribute, command)
        with usage_errors(command):
            records = resource.list(**LIST_OPTIONS.get(command, {}))
        frame = to_frame(records, spec)
        store(magics, name, frame)
        show_frame(frame, magics.display_limit, what=command, stored_as=name)

    handler.__doc__ = f"{summary[0].upper()}{summary[1:]}, as a DataFrame.\n\n" + str(
        handler.__doc__
    )
    subcommand(command, f"{summary} (a DataFrame)")(handler)


for _row in LISTINGS:
    _listing(*_row)

BILLING_CALLS: dict[str, str] = {
    "pods": "pods",
    "endpoints": "endpoints",
    "volumes": "network_volumes",
}
"""``%runpod billing KIND`` -> the method of ``client.billing``."""


@subcommand("billing", "billing records of pods, endpoints or volumes over time; --plot")
@magic_arguments("runpod billing")
@argument("kind", choices=sorted(BILLING_CALLS), help="what to bill")
@argument("--start", help="start of the period (ISO date or date-time)")
@argument("--end", help="end of the period (ISO date or date-time)")
@argument(
    "--bucket",
    choices=["hour", "day", "week", "month", "year"],
    help="length of each record's time bucket (the service's default: day)",
)
@argument("--group", help="group records by this field (e.g. podId, endpointId, gpuTypeId)")
@argument("--plot", action="store_true", help="draw the amount over time (matplotlib)")
@argument("-o", "--output", help="store the whole DataFrame in this variable")
def billing(magics: RunpodMagics, args: argparse.Namespace) -> None:
    """Billing records of KIND between --start and --end, bucketed and grouped."""
    name = check_name(args.output)
    if args.group is not None and args.kind == "volumes":
        raise UsageError("--group does not apply to volumes (their records are not grouped)")
    resource = management(magics, "billing", "billing")
    call: Callable[..., Any] = getattr(resource, BILLING_CALLS[args.kind])
    options = {
        key: value
        for key, value in (
            ("start_time", args.start),
            ("end_time", args.end),
            ("bucket_size", args.bucket),
            ("grouping", args.group),
        )
        if value is not None
    }
    with usage_errors(f"billing {args.kind}"):
        records = call(**options)
    frame = to_frame(records, BILLING[args.kind])
    store(magics, name, frame)
    show_frame(frame, magics.display_limit, what=f"billing {args.kind}", stored_as=name)
    if args.plot:
        plot_billing(frame, args.kind)


def plot_billing(frame: pd.DataFrame, kind: str) -> None:
    """Amount over time, one line per group when the records are grouped."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'nbext[plot]'") from None
    if frame.empty:
        print(f"billing {kind}: no records to plot")
        return
    group = next(
        (
            c
            for c in ("pod_id", "endpoint_id", "gpu_type_id")
            if c in frame and frame[c].notna().any()
        ),
        None,
    )
    fig, ax = plt.subplots(figsize=(7, 3))
    if group is None:
        ax.plot(frame["time"], frame["amount_usd"], marker="o")
    else:
        # The service leaves out buckets where a group spent nothing; plotted as they come,
        # a line would run straight across such a gap as if that time had been billed.
        # Every group gets every bucket any group has, at 0 where it has no record.
        amounts = frame.pivot_table(
            index="time", columns=group, values="amount_usd", aggfunc="sum", observed=True
        ).fillna(0.0)
        for key in amounts.columns:
            ax.plot(amounts.index, amounts[key], marker="o", label=str(key))
        ax.legend(title=group, fontsize="small")
    ax.set_title(f"billing: {kind}")
    ax.set_ylabel("USD")
    fig.autofmt_xdate()
    plt.show()
