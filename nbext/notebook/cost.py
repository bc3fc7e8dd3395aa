"""What a job cost, in the notebook: asked of the client once per job, kept on its record,
never shown as zero when unknown (docs/behaviour.md#what-a-job-costs).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from nbext.client import JobCost, NbextError, usd_text

if TYPE_CHECKING:
    from .connection import Service
    from .registry import JobRecord

ESTIMATE_NOTE = (
    "estimate: execution time x the catalog's price; cold starts and idle time not included"
)
REPORTED_NOTE = "reported by the service in the job's output"


def _unpriced(record: JobRecord) -> bool:
    """Whether the record's job has ended and its cost has not been asked for yet."""
    result = record.result
    return record.cost is None and result is not None and result.status.is_final


def record_cost(service: Service, record: JobRecord) -> JobCost | None:
    """The record's cost, asked of the kernel's blocking client the first time."""
    if _unpriced(record) and record.result is not None:
        try:
            record.cost = service.client.endpoint(record.endpoint_id).cost(record.result)
        except NbextError:
            return None  # asked again next time
    return record.cost


async def record_cost_async(service: Service, record: JobRecord) -> JobCost | None:
    """``record_cost`` from the kernel's event loop (a panel following in the background)."""
    if _unpriced(record) and record.result is not None:
        endpoint = service.async_client().endpoint(record.endpoint_id)
        try:
            record.cost = await endpoint.cost(record.result)
        except NbextError:
            return None
    return record.cost


def cost_text(cost: JobCost | None) -> str:
    """``cost $0.000307 (estimate)``; empty when unknown."""
    if cost is None:
        return ""
    return f"cost {usd_text(cost.usd)} ({cost.source})"


def cost_html(cost: JobCost | None) -> str:
    """``cost_text`` for a panel, with how it was made in the tooltip; empty when unknown."""
    if cost is None:
        return ""
    how = f"{ESTIMATE_NOTE}: {cost}" if cost.estimate else f"{REPORTED_NOTE}: {cost}"
    return (
        f'<span class="nbext-cost" title="{html.escape(how)}">{html.escape(cost_text(cost))}</span>'
    )


def total_text(costs: list[JobCost | None]) -> str:
    """A map's running total: ``spent $0.0123 on 12 jobs (estimate)``, naming the jobs of
    unknown cost (so it is never taken for the whole); empty with no cost."""
    known = [c for c in costs if c is not None]
    if not known:
        return ""
    total = sum(c.usd for c in known)
    kinds = sorted({c.source for c in known})
    plural = "s" if len(known) != 1 else ""
    line = f"spent {usd_text(total)} on {len(known):,} job{plural} ({' and '.join(kinds)})"
    unknown = len(costs) - len(known)
    return line + (f"; {unknown} of unknown cost" if unknown else "")
