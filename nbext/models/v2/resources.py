"""v2's management resources as the service returns them (and the emulator serves them).

One model per response schema a client reads. ``RESOURCES`` is the table of management
resources, one row each, from which the client's ``list``/``get``/``delete``, the
emulator's routes and the notebook's listings are made (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import Field

from .._base import WireModel
from .._fields import WireDatetime
from ..listing import Column, ListingSpec
from .states import PodAction, PodStatus


class Problem(WireModel):
    """An RFC 9457 problem document: every v2 error body."""

    title: str = ""
    status: int = 0
    detail: str = ""
    errors: list[str] = Field(default_factory=list)


class PersistentMount(WireModel):
    size: int
    path: str


class NetworkMount(WireModel):
    volume_id: str
    path: str


class Mounts(WireModel):
    persistent: PersistentMount | None = None
    network: list[NetworkMount] | None = None


class Named(WireModel):
    """What a resource is known by: its id and the name it was given (or has, in a catalog)."""

    id: str
    name: str


class ContainerConfig(WireModel):
    """What templates, pods and endpoints share: the container and how it starts."""

    image: str | None = None
    args: str | None = None
    disk: int | None = None
    env: dict[str, str] | None = None
    ports: list[str] | None = None
    registry: str | None = None


class Template(Named, ContainerConfig):
    mounts: Mounts | None = None
    serverless: bool = False
    public: bool = False
    category: str | None = None
    start_ssh: bool | None = None
    start_jupyter: bool | None = None
    allowed_cuda_versions: list[str] | None = None


class GpuConfig(WireModel):
    """A pod's GPU type and count (its request may also bound the host's CUDA version)."""

    id: str
    count: int = 1
    allowed_cuda_versions: list[str] | None = None
    min_cuda_version: str | None = None


class CpuConfig(WireModel):
    id: str
    vcpu_count: int
    memory: int | None = None


class SshEndpoint(WireModel):
    host: str
    port: int
    username: str
    command: str


class PodSsh(WireModel):
    proxy: SshEndpoint | None = None
    direct: SshEndpoint | None = None


class PodCluster(WireModel):
    id: str
    rank: int | None = None
    role: str | None = None
    ip: str | None = None


class Pod(Named, ContainerConfig):
    status: PodStatus
    actions: list[PodAction] = Field(default_factory=list)
    mounts: Mounts | None = None
    gpu: GpuConfig | None = None
    cpu: CpuConfig | None = None
    cloud: str | None = None
    data_center_id: str | None = None
    cuda_version: str | None = None
    ssh: PodSsh | None = None
    cluster: PodCluster | None = None
    template: str | None = None
    cost: float = 0.0
    locked: bool = False
    global_networking: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None
    created_at: WireDatetime | None = None
    started_at: WireDatetime | None = None


class EndpointGpu(WireModel):
    pools: list[str] = Field(default_factory=list)
    excluded_types: list[str] | None = None
    count: int = 1
    allowed_cuda_versions: list[str] = Field(default_factory=list)
    min_cuda_version: str | None = None


class EndpointWorkers(WireModel):
    min: int = 0
    max: int = 0
    idle_timeout: int | None = None


class Scaling(WireModel):
    """How an endpoint adds workers: ``QUEUE_DELAY`` (seconds a job may wait in the queue)
    or ``REQUEST_COUNT`` (requests in flight per worker); only its own value is set."""

    type: str
    queue_delay: float | None = None
    request_count: int | None = None


class RequestUrls(WireModel):
    """Where an endpoint takes requests: a queue endpoint's job operations, or a
    load-balancing endpoint's ``base`` (its worker-defined paths) and ``health``."""

    run: str | None = None
    run_sync: str | None = None
    status: str | None = None
    stream: str | None = None
    cancel: str | None = None
    retry: str | None = None
    purge_queue: str | None = None
    health: str | None = None
    base: str | None = None


class Endpoint(Named, ContainerConfig):
    """A serverless endpoint: ``QUEUE`` (jobs) or ``LOAD_BALANCER`` (``type``)."""

    type: str | None = None
    request_urls: RequestUrls | None = None
    gpu: EndpointGpu | None = None
    cpu: list[CpuConfig] | None = None
    workers: EndpointWorkers
    scaling: Scaling
    data_center_ids: list[str] = Field(default_factory=list)
    network_volumes: list[str] = Field(default_factory=list)
    timeout: int | None = None
    flashboot: str | None = None
    created_at: WireDatetime | None = None


class Worker(WireModel):
    id: str
    status: str
    is_stale: bool = False
    version: int | None = None
    gpu_count: int = 0
    image: str | None = None
    uptime_seconds: int | None = None
    gpu_type_id: str | None = None
    data_center_id: str | None = None
    started_at: WireDatetime | None = None


class Release(WireModel):
    id: str
    version: int | None = None
    source: str
    build_id: str | None = None
    created_by_user_id: str | None = None
    worker_count: int = 0
    created_at: WireDatetime | None = None
    diff: list[dict[str, Any]] = Field(default_factory=list)


class NetworkVolume(Named):
    size: int
    data_center: str
    type: str | None = None


class Registry(Named):
    """A registry auth: its name, never its credentials."""


class EcrDelegation(WireModel):
    id: str
    name: str | None = None
    delegator_user_id: str | None = None
    aws_user: str
    repository: str
    tag: str
    aws_region: str
    docker_registry_uri: str | None = None
    created_at: WireDatetime | None = None


class Availability(Named):
    """A resource's availability in one data centre (or a data centre's for one resource)."""

    availability: str


class GpuType(Named):
    pool: str | None = None
    manufacturer: str | None = None
    memory: int
    secure: bool = True
    community: bool = True
    price: dict[str, float]
    """USD per GPU-hour: ``secure``, ``community``, ``serverless`` (when in a pool)."""
    max_count: dict[str, int]
    availability: str | None = None
    data_centers: list[Availability] | None = None
    cuda_versions: list[dict[str, Any]] | None = None


class CpuType(Named):
    group: str | None = None
    vcpu: dict[str, int]
    ram_gb_per_vcpu: float
    price: dict[str, float]
    availability: str | None = None
    data_centers: list[Availability] | None = None


class DataCenter(Named):
    region: str
    global_network: bool = False
    network_volume_types: list[str] = Field(default_factory=list)
    compliance: list[str] = Field(default_factory=list)
    gpu_availability: list[Availability] | None = None
    cpu_availability: list[Availability] | None = None


class Cluster(Named):
    type: str
    compute: dict[str, Any]
    template: str | None = None
    data_center_id: str | None = None
    pods: dict[str, Any]
    network: dict[str, Any] | None = None
    primary: dict[str, Any] | None = None
    created_at: WireDatetime | None = None


class BillingRecord(WireModel):
    """One bucket's spend; the amounts by category (``gpuAmount``, ...) are extra fields,
    as they differ by billing path; ``amounts()`` collects them."""

    start_time: WireDatetime
    end_time: WireDatetime
    total_amount: float

    def amounts(self) -> dict[str, float]:
        extra = self.model_extra or {}
        return {k: float(v) for k, v in extra.items() if k.endswith("Amount")}


class LogEvent(WireModel):
    """One line of a log stream (the ``data`` of a Server-Sent Event); ``cursor`` is the
    event's ``id``, to resume after it with ``Last-Event-ID``."""

    ts: WireDatetime
    source: str
    line: str
    cursor: str | None = None


M = TypeVar("M", bound=WireModel)

CRUD = frozenset({"list", "get", "create", "update", "delete"})


@dataclass(frozen=True)
class Rest(Generic[M]):
    """One management resource of REST v2: a row of ``RESOURCES``."""

    segment: str
    """Its path under ``/v2``: ``network-volumes``; a record's is ``network-volumes/ID``."""
    list_key: str
    """The key its list answer wraps the records in: ``networkVolumes``."""
    model: type[M]
    attribute: str
    """Its name on a client (``client.network_volumes``) and in operation names."""
    what: str
    """A record as messages name it: ``network volume 'abc'``."""
    operations: frozenset[str] = CRUD
    """Which of ``CRUD`` REST v2 offers on it (more may be the resource's own)."""
    listing: ListingSpec | None = None
    """How ``%runpod <listing.kind>`` lists its records, if it does (REST v2's field
    names, nested ones dotted); it hides ``env``, which holds passwords as often as not."""

    @property
    def id_name(self) -> str:
        """The id's name in the client's methods: ``network_volume_id``."""
        return self.what.replace(" ", "_") + "_id"


TEMPLATES = Rest(
    "templates",
    "templates",
    Template,
    "templates",
    "template",
    listing=ListingSpec(
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
        summary="the account's templates, endpoints' ones included",
    ),
)
PODS = Rest(
    "pods",
    "pods",
    Pod,
    "pods",
    "pod",
    listing=ListingSpec(
        "pods",
        (
            Column("id"),
            Column("name"),
            Column("status", "category", categories=tuple(s.value for s in PodStatus)),
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
        summary="the account's pods",
    ),
)
ENDPOINTS = Rest(
    "serverless",
    "endpoints",
    Endpoint,
    "endpoints",
    "endpoint",
    listing=ListingSpec(
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
        summary="the account's serverless endpoints",
    ),
)
NETWORK_VOLUMES = Rest(
    "network-volumes",
    "networkVolumes",
    NetworkVolume,
    "network_volumes",
    "network volume",
    listing=ListingSpec(
        "volumes",
        (
            Column("id"),
            Column("name"),
            Column("size", "int"),
            Column("data_center", "category"),
            Column("type", "category"),
        ),
        sort=("name", True),
        summary="the account's network volumes",
    ),
)
REGISTRY_DELEGATIONS = Rest(
    "registries/delegations",
    "delegations",
    EcrDelegation,
    "registry_delegations",
    "registry delegation",
    frozenset({"list", "create", "delete"}),
)
REGISTRY_AUTHS = Rest(
    "registries",
    "registries",
    Registry,
    "registry_auths",
    "container registry auth",
    CRUD - {"update"},
    listing=ListingSpec(
        "registry-auths",
        (Column("id"), Column("name")),
        sort=("name", True),
        summary="container registry credentials",
    ),
)
CLUSTERS = Rest("clusters", "clusters", Cluster, "clusters", "cluster")

RESOURCES: tuple[Rest[Any], ...] = (
    TEMPLATES,
    PODS,
    ENDPOINTS,
    NETWORK_VOLUMES,
    REGISTRY_DELEGATIONS,
    REGISTRY_AUTHS,
    CLUSTERS,
)
"""Every management resource with records of its own, one row each (delegations before
registries: their path is under theirs)."""
