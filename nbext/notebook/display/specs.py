"""The column spec of every listing: names, dtypes, order.

Column names are the records' Python names (``start_ssh``), nested fields joined with
dots (``workers.min``), as ``pandas.json_normalize`` names them: ``df["workers.max"]``.
Timings of jobs stay in the service's unit (milliseconds) and say so in their names.
A wide listing (a pod has some thirty fields) names the few a cell shows by default
(``shown``): what tells the rows apart and what they cost; ``--all`` shows the rest.
"""

from __future__ import annotations

from nbext.models import JobStatus

from .frames import Column, ListingSpec

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
"""``%runpod jobs``: the jobs this kernel submitted, and its requests to load-balancing
endpoints (a ``request`` and its HTTP ``status`` in place of an id and a state), newest
first."""

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

TEMPLATES = ListingSpec(
    "templates",
    (
        Column("id"),
        Column("name"),
        Column("image"),
        Column("serverless", "bool"),
        Column("category", "category"),
        Column("disk", "int"),
        Column("mounts.persistent.size", "int"),
        Column("mounts.persistent.path"),
        Column("ports", "object"),
        Column("public", "bool"),
        Column("registry"),
    ),
    hidden=frozenset({"env", "mounts.network"}),
    sort=("name", True),
    shown=("id", "name", "image", "serverless", "category", "disk", "mounts.persistent.size"),
)
"""``%runpod templates``. Every listing of a management record has REST v2's field
names (``nbext.models.v2``), nested ones flattened with dots; ``env`` is never shown
(it holds passwords as often as not)."""

POD_STATES = ("PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED")

PODS = ListingSpec(
    "pods",
    (
        Column("id"),
        Column("name"),
        Column("status", "category", categories=POD_STATES),
        Column("image"),
        Column("gpu.id", "category"),
        Column("gpu.count", "int"),
        Column("cpu.id", "category"),
        Column("cpu.vcpu_count", "int"),
        Column("cost", "float"),
        Column("started_at", "datetime"),
        Column("created_at", "datetime"),
        Column("template"),
        Column("locked", "bool"),
        Column("disk", "int"),
        Column("mounts.persistent.size", "int"),
    ),
    hidden=frozenset({"env", "ssh", "runtime"}),
    sort=("name", True),
    shown=("id", "name", "status", "image", "gpu.id", "gpu.count", "cost", "started_at"),
)

ENDPOINTS = ListingSpec(
    "endpoints",
    (
        Column("id"),
        Column("name"),
        Column("type", "category"),
        Column("image"),
        Column("gpu.pools", "object"),
        Column("gpu.count", "int"),
        Column("cpu", "object"),
        Column("workers.min", "int"),
        Column("workers.max", "int"),
        Column("workers.idle_timeout", "int"),
        Column("scaling.type", "category"),
        Column("scaling.queue_delay", "float"),
        Column("scaling.request_count", "int"),
        Column("timeout", "int"),
        Column("flashboot", "category"),
        Column("created_at", "datetime"),
        Column("request_urls.base"),  # a load-balancing endpoint's
    ),
    hidden=frozenset({"env"}),
    sort=("name", True),
    shown=(
        "id",
        "name",
        "type",
        "image",
        "gpu.pools",
        "workers.min",
        "workers.max",
        "scaling.type",
        "created_at",
    ),
)

VOLUMES = ListingSpec(
    "volumes",
    (
        Column("id"),
        Column("name"),
        Column("size", "int"),
        Column("data_center", "category"),
        Column("type", "category"),
    ),
    sort=("name", True),
)

REGISTRY_AUTHS = ListingSpec(
    "registry-auths",
    (Column("id"), Column("name")),
    sort=("name", True),
)

MANAGEMENT: dict[str, tuple[ListingSpec, str]] = {
    "templates": (TEMPLATES, "the account's templates, endpoints' ones included"),
    "pods": (PODS, "the account's pods"),
    "endpoints": (ENDPOINTS, "the account's serverless endpoints"),
    "network_volumes": (VOLUMES, "the account's network volumes"),
    "registry_auths": (REGISTRY_AUTHS, "container registry credentials"),
}
"""A management resource's client attribute (``client.network_volumes``) -> its listing's
spec and summary: ``%runpod <spec name>`` lists it (``magics/listings.py``)."""


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
"""``%runpod billing summary|pods|serverless|volumes``: one row per time bucket (and
group), in USD."""

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
