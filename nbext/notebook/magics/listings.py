"""``%runpod templates | pods | endpoints | volumes | registry-auths`` and ``billing``: the
client's management calls as DataFrames (docs/architecture.md#listings-in-the-notebook)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from nbext.client import NbextError

from ..display import ListingSpec, to_frame
from ..display.specs import BILLING, MANAGEMENT
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, check_name, store_and_show, usage_errors

if TYPE_CHECKING:
    import argparse

    import pandas as pd


def management(magics: Magics, attribute: str, command: str) -> Any:
    """The current service's management resource ``attribute`` (``client.templates``...)."""
    with usage_errors(command):
        service = magics.connection.service()
    return getattr(service.client, attribute)


ALL_HELP = "show every column (by default a cell shows the useful few; -o keeps them all)"


def _listing(attribute: str, spec: ListingSpec) -> None:
    command, summary = spec.kind, spec.summary

    def handler(magics: Magics, args: argparse.Namespace) -> None:
        name = check_name(args.output)
        resource = management(magics, attribute, command)
        with usage_errors(command):
            records = resource.list()
        shown = None if args.all else spec.default_columns
        store_and_show(magics, name, to_frame(records, spec), command, shown)

    # the description first: magic_arguments puts the usage and options after it
    handler.__doc__ = f"{summary[0].upper()}{summary[1:]}, as a DataFrame."
    decorated = magic_arguments(f"runpod {command}")(
        argument("--all", action="store_true", help=ALL_HELP)(
            argument("-o", "--output", help="store the whole DataFrame in this variable")(handler)
        )
    )
    subcommand(command, f"{summary} (a DataFrame)")(decorated)


for _attribute, _spec in MANAGEMENT.items():
    _listing(_attribute, _spec)

BILLING_KINDS = ("pods", "serverless", "summary", "volumes")
"""``%runpod billing KIND``: a method of ``client.billing`` (``network_volumes`` for volumes)."""


@subcommand("billing", "what pods, endpoints (serverless) or volumes cost over time; --plot")
@magic_arguments("runpod billing")
@argument("kind", choices=BILLING_KINDS, help="what to bill (summary: everything)")
@argument("--start", help="start of the period (ISO date or date-time)")
@argument("--end", help="end of the period (ISO date or date-time)")
@argument(
    "--bucket",
    choices=["hour", "day", "week", "month", "year"],
    help="length of each record's time bucket (the service's default: day)",
)
@argument("--plot", action="store_true", help="draw the amount over time (matplotlib)")
@argument("--all", action="store_true", help=ALL_HELP)
@argument("-o", "--output", help="store the whole DataFrame in this variable")
def billing(magics: Magics, args: argparse.Namespace) -> None:
    """Billing records of KIND between --start and --end, one per bucket (and pod or
    endpoint). Records of a pod or an endpoint carry its name too (pod_name,
    endpoint_name), and --plot draws one line per pod or endpoint, labelled by name."""
    name = check_name(args.output)
    check_period(args.start, args.end)
    resource = management(magics, "billing", "billing")
    method = "network_volumes" if args.kind == "volumes" else args.kind
    call: Callable[..., Any] = getattr(resource, method)
    period = {"start_time": args.start, "end_time": args.end, "bucket_size": args.bucket}
    options = {key: value for key, value in period.items() if value is not None}
    with usage_errors(f"billing {args.kind}"):
        records = call(**options)
    spec = BILLING[args.kind]
    frame, added = with_names(to_frame(records, spec), magics)
    shown = None if args.all else spec.default_columns
    columns = None if shown is None else [c for c in frame if c in shown or c in added]
    store_and_show(magics, name, frame, f"billing {args.kind}", columns)
    if args.plot:
        plot_billing(frame, args.kind)


def check_period(start: str | None, end: str | None) -> None:
    """``--start`` and ``--end`` are ISO dates or date-times, in that order."""
    moments: list[datetime] = []
    for option, value in (("--start", start), ("--end", end)):
        if value is None:
            continue
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise UsageError(
                f"{option} {value!r} is not an ISO date or date-time "
                "(e.g. 2026-01-31, or 2026-01-31T12:00:00Z)"
            ) from None
        moments.append(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    if len(moments) == 2 and moments[0] > moments[1]:
        raise UsageError(f"--start ({start}) is after --end ({end})")


NAMED: dict[str, tuple[str, str]] = {
    "pod_id": ("pod_name", "pods"),
    "serverless_id": ("endpoint_name", "endpoints"),
}
"""A billing id column -> the name column added after it, and the client's listing
that knows the names (ids say nothing to a reader; on the cloud they are generated)."""


def with_names(frame: pd.DataFrame, magics: Magics) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with a name column after each id column; the names added. The column is
    there even with no id (an ungrouped bill), so the columns do not depend on how the
    service grouped; a name it cannot give (a pod deleted since) stays missing."""
    added: list[str] = []
    for id_column, (name_column, attribute) in NAMED.items():
        if id_column not in frame:
            continue
        names: dict[str, str] = {}
        if frame[id_column].notna().any():  # else: nothing to ask the service for
            with contextlib.suppress(NbextError):
                resource = management(magics, attribute, "billing")
                names = {item.id: item.name for item in resource.list() if item.id and item.name}
        values = frame[id_column].astype("string").map(names, na_action="ignore")
        position = list(frame.columns).index(id_column) + 1
        frame.insert(position, name_column, values.astype("string"))
        added.append(name_column)
    return frame, added


def plot_billing(frame: pd.DataFrame, kind: str) -> None:
    """Amount over time, one line per pod or endpoint (labelled by name) when records are
    of several."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'nbext[plot]'") from None
    if frame.empty:
        print(f"billing {kind}: no records to plot")
        return
    group = next((c for c in NAMED if c in frame and frame[c].notna().any()), None)
    fig, ax = plt.subplots(figsize=(7, 3))
    if group is None:
        ax.plot(frame["start_time"], frame["total_amount"], marker="o")
    else:
        # The service leaves out buckets where a group spent nothing, which a line would
        # cross as if billed: every group gets every bucket, at 0 where it has no record.
        amounts = frame.pivot_table(
            index="start_time", columns=group, values="total_amount", aggfunc="sum", observed=True
        ).fillna(0.0)
        labels = legend_labels(frame, group, [str(key) for key in amounts.columns])
        for key, label in zip(amounts.columns, labels, strict=True):
            ax.plot(amounts.index, amounts[key], marker="o", label=label)
        ax.legend(title=NAMED[group][0].removesuffix("_name"), fontsize="small")
    ax.set_title(f"billing: {kind}")
    ax.set_ylabel("USD")
    fig.autofmt_xdate()
    plt.show()


def legend_labels(frame: pd.DataFrame, group: str, keys: list[str]) -> list[str]:
    """Each group's name; ``name (id)`` where two share a name; the id where none is known."""
    name_column = NAMED.get(group, ("", ""))[0]
    names: dict[str, str] = {}
    if name_column in frame:
        pairs = frame[[group, name_column]].dropna().astype(str).drop_duplicates()
        names = dict(zip(pairs[group], pairs[name_column], strict=True))
    chosen = [names.get(key, key) for key in keys]
    return [
        f"{label} ({key})" if chosen.count(label) > 1 and label != key else label
        for key, label in zip(keys, chosen, strict=True)
    ]
