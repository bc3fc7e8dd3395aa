"""The column spec of every listing: names, dtypes, order
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

from nbext.models import JobStatus
from nbext.models.listing import Column, ListingSpec
from nbext.models.v2 import RESOURCES

STATES: tuple[str, ...] = (*(s.value for s in JobStatus), "REMOVED")
"""Job states in lifecycle order, plus REMOVED (purged, TTL or retention elapsed)."""

JOBS = ListingSpec(
    "jobs",
    (
        Column("id"),
        Column("endpoint", "category"),
        Column("state", "category", categories=STATES),
        Column("request"),
        Column("status", "int"),
        Column("delay_ms", "int"),
        Column("run_ms", "int"),
        Column("cost_usd", "float"),
        Column("cost_is", "category", categories=("estimate", "reported")),
        Column("worker"),
        Column("submitted", "datetime"),
        Column("via", "category"),
        Column("service", "category"),
    ),
    extra="drop",
    sort=("submitted", False),
)
"""``%runpod jobs``: this kernel's jobs, newest first, and its requests to load-balancing
endpoints (a ``request`` and its HTTP ``status`` in place of an id and a state)."""

HEALTH = ListingSpec(
    "health",
    (
        Column("at", "datetime"),
        Column("in_queue", "int"),
        Column("in_progress", "int"),
        Column("completed", "int"),
        Column("failed", "int"),
        Column("retried", "int"),
        Column("idle", "int"),
        Column("running", "int"),
        Column("initializing", "int"),
    ),
    extra="drop",
)
"""A health panel's samples (``panel.frame()``)."""

MAYBE_QUEUED = "MAYBE_QUEUED"
"""The state of a map's input whose submission got no answer (``MaybeQueued``)."""
RESULTS = ListingSpec(
    "results",
    (
        Column("id"),
        Column("state", "category", categories=(*STATES, MAYBE_QUEUED)),
        Column("delay_ms", "int"),
        Column("run_ms", "int"),
        Column("output", "object"),
        Column("error", "string"),
    ),
    extra="drop",
)
"""What a map adds to each input's columns (``%runpod map``, ``run_many``)."""

BATCHES = ListingSpec(
    "batches",
    (
        Column("id"),
        Column("status", "category", categories=("DRAFT", "FINALIZED", "FAILED", "CANCELLED")),
        Column("request_total", "int"),
        Column("request_completed", "int"),
        Column("request_failed", "int"),
        Column("request_in_progress", "int"),
        Column("created_at", "datetime"),
    ),
)
"""``%runpod batches``: an endpoint's batches, newest first (the service's order)."""

MANAGEMENT: dict[str, ListingSpec] = {
    row.attribute: row.listing for row in RESOURCES if row.listing is not None
}
"""A management resource's client attribute (``client.network_volumes``) -> the listing
its row of ``RESOURCES`` gives, which ``%runpod <spec name>`` shows (``magics/listings.py``)."""


def billing(kind: str, *ids: str) -> ListingSpec:
    """A bill: one row per bucket (and pod or endpoint, ``ids``), the amounts by category
    after the total."""
    columns = (
        Column("start_time", "datetime"),
        Column("end_time", "datetime"),
        *(Column(name, "category") for name in ids),
        Column("total_amount", "float"),
    )
    shown = ("start_time", *ids, "total_amount")
    return ListingSpec(f"billing {kind}", columns, sort=("start_time", True), shown=shown)


BILLING = {
    "summary": billing("summary"),
    "pods": billing("pods", "pod_id"),
    "serverless": billing("serverless", "serverless_id"),
    "volumes": billing("volumes"),
}
"""``%runpod billing KIND``: one row per time bucket (and group), in USD."""

AVAILABILITY: tuple[str, ...] = ("NONE", "LOW", "MEDIUM", "HIGH")
"""The catalog's availability levels, lowest first (so sorting by them reads naturally)."""

GPUS = ListingSpec(
    "gpus",
    (
        Column("name"),
        Column("id"),
        Column("memory_gb", "int", source="memory"),
        Column("secure_usd_hr", "float", source="price.secure"),
        Column("community_usd_hr", "float", source="price.community"),
        Column("serverless_usd_hr", "float", source="price.serverless"),
        Column("availability", "category", categories=AVAILABILITY),
        Column("max_count", "int", source="max_count.secure"),
        Column("max_count_community", "int", source="max_count.community"),
        Column("pool", "category"),
        Column("manufacturer", "category"),
    ),
    hidden=frozenset({"data_centers", "cuda_versions", "price", "max_count"}),
    sort=("secure_usd_hr", True),
    shown=(
        "name",
        "id",
        "memory_gb",
        "secure_usd_hr",
        "community_usd_hr",
        "serverless_usd_hr",
        "availability",
        "max_count",
    ),
)
"""``%runpod gpus``: the catalog's GPU types, cheapest first; prices are USD per GPU-hour."""

LOGS = ListingSpec(
    "logs",
    (
        Column("ts", "datetime"),
        Column("worker", "category"),
        Column("source", "category"),
        Column("line"),
    ),
    extra="drop",
)
"""A log's lines (``%runpod logs -o``, ``LogPanel.frame()``), oldest first."""
