"""The column spec of every listing: names, dtypes, order.

Column names are Python style (``image_name``), sources the service's wire names
(``imageName``), so ``df.image_name`` works and the spec says where each came from.
Timings of jobs stay in the service's unit (milliseconds) and say so in their names.
A wide listing (a pod has some thirty fields) names the few a cell shows by default
(``shown``): what tells the rows apart and what they cost; ``--all`` shows the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
        Column("delay_ms", "int"),
        Column("run_ms", "int"),
        Column("cost_usd", "float"),
        Column("cost_is", "category", categories=("estimate", "reported")),
        Column("submitted", "datetime"),
        Column("via", "category"),
        Column("service", "category"),
    ),
    extra="drop",
    sort=("submitted", False),
)
"""``%runpod jobs``: the jobs this kernel submitted, newest first."""

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

RESULT_COLUMNS = (
    Column("id"),
    Column("state", "category", categories=STATES),
    Column("delay_ms", "int"),
    Column("run_ms", "int"),
    Column("output", "object"),
    Column("error", "string"),
)
"""What a map adds to each input's columns (``%runpod map``, ``run_many``)."""

TEMPLATES = ListingSpec(
    "templates",
    (
        Column("id"),
        Column("name"),
        Column("image_name", source="imageName"),
        Column("is_serverless", "bool", source="isServerless"),
        Column("category", "category"),
        Column("container_disk_gb", "int", source="containerDiskInGb"),
        Column("volume_gb", "int", source="volumeInGb"),
        Column("volume_mount_path", source="volumeMountPath"),
        Column("ports", "object"),
        Column("is_public", "bool", source="isPublic"),
        Column("registry_auth_id", source="containerRegistryAuthId"),
    ),
    hidden=frozenset({"env", "readme", "dockerEntrypoint", "dockerStartCmd"}),
    sort=("name", True),
    shown=(
        "id",
        "name",
        "image_name",
        "is_serverless",
        "category",
        "container_disk_gb",
        "volume_gb",
    ),
)


def gpu_name(gpu: Any) -> Any:
    """A pod's GPU type as people say it (``RTX 4090``); its id where the service gives
    no display name (REST v2 answers with the id only)."""
    if not isinstance(gpu, Mapping):
        return None
    return gpu.get("displayName") or gpu.get("id")


PODS = ListingSpec(
    "pods",
    (
        Column("id"),
        Column("name"),
        Column("desired_status", "category", source="desiredStatus"),
        Column("image", source="image"),
        Column("gpu_type", "category", source=lambda pod: gpu_name(pod.get("gpu"))),
        Column("gpu_count", "int", source="gpu.count"),
        Column("cost_per_hr", "float", source="costPerHr"),
        Column("last_started_at", "datetime", source="lastStartedAt"),
        Column("template_id", source="templateId"),
        Column("locked", "bool"),
        Column("interruptible", "bool"),
        Column("vcpu_count", "float", source="vcpuCount"),
        Column("memory_gb", "float", source="memoryInGb"),
        Column("container_disk_gb", "int", source="containerDiskInGb"),
        Column("volume_gb", "int", source="volumeInGb"),
    ),
    hidden=frozenset({"env", "machine", "networkVolume", "portMappings", "savingsPlans", "gpu"}),
    sort=("name", True),
    shown=(
        "id",
        "name",
        "desired_status",
        "image",
        "gpu_type",
        "gpu_count",
        "cost_per_hr",
        "last_started_at",
    ),
)

ENDPOINTS = ListingSpec(
    "endpoints",
    (
        Column("id"),
        Column("name"),
        Column("template_id", source="templateId"),
        Column("image_name", source="template.imageName"),
        Column("compute_type", "category", source="computeType"),
        Column("workers_min", "int", source="workersMin"),
        Column("workers_max", "int", source="workersMax"),
        Column("idle_timeout_s", "int", source="idleTimeout"),
        Column("execution_timeout_ms", "int", source="executionTimeoutMs"),
        Column("gpu_count", "int", source="gpuCount"),
        Column("gpu_type_ids", "object", source="gpuTypeIds"),
        Column("scaler_type", "category", source="scalerType"),
        Column("scaler_value", "int", source="scalerValue"),
        Column("created_at", "datetime", source="createdAt"),
    ),
    hidden=frozenset({"env", "template", "workers"}),
    sort=("name", True),
    shown=(
        "id",
        "name",
        "image_name",
        "compute_type",
        "gpu_type_ids",
        "workers_min",
        "workers_max",
        "created_at",
    ),
)

VOLUMES = ListingSpec(
    "volumes",
    (
        Column("id"),
        Column("name"),
        Column("size_gb", "int", source="size"),
        Column("data_center_id", "category", source="dataCenterId"),
    ),
    sort=("name", True),
)

REGISTRY_AUTHS = ListingSpec(
    "registry-auths",
    (Column("id"), Column("name")),
    sort=("name", True),
)

_BILLING_COMMON = (
    Column("time", "datetime"),
    Column("amount_usd", "float", source="amount"),
    Column("time_billed_ms", "int", source="timeBilledMs"),
    Column("disk_space_billed_gb", "int", source="diskSpaceBilledGb"),
)

BILLING = {
    "pods": ListingSpec(
        "billing pods",
        (
            *_BILLING_COMMON[:1],
            Column("pod_id", "category", source="podId"),
            Column("gpu_type_id", "category", source="gpuTypeId"),
            *_BILLING_COMMON[1:],
        ),
        sort=("time", True),
    ),
    "endpoints": ListingSpec(
        "billing endpoints",
        (
            *_BILLING_COMMON[:1],
            Column("endpoint_id", "category", source="endpointId"),
            Column("gpu_type_id", "category", source="gpuTypeId"),
            *_BILLING_COMMON[1:],
        ),
        sort=("time", True),
    ),
    "volumes": ListingSpec(
        "billing volumes",
        (*_BILLING_COMMON[:2], *_BILLING_COMMON[3:]),
        sort=("time", True),
    ),
}
"""``%runpod billing pods|endpoints|volumes``: one row per time bucket (and group)."""

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
        Column("max_count", "int", source="maxCount.secure"),
        Column("max_count_community", "int", source="maxCount.community"),
        Column("pool", "category"),
        Column("manufacturer", "category"),
    ),
    hidden=frozenset({"dataCenters", "cudaVersions", "price", "maxCount"}),
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
