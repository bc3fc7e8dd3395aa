"""``Management``: every management resource, over one store and one clock, made in
the order of what needs what (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

from typing import Any

from ..clock import Clock
from ..job_service import JobService
from ..store_port import Store
from .account import SshKeys
from .billing import Billing
from .clusters import Clusters
from .delegations import Delegations
from .endpoints import Endpoints
from .logs import WorkerLogs
from .network_volumes import NetworkVolumes
from .pods import Pods
from .records import Book, Served
from .registry_auths import RegistryAuths
from .templates import Templates
from .usage import UsageLedger


class Management:
    """Templates, pods, endpoint records, network volumes, registry auths, SSH keys, ECR
    delegations, instant clusters, worker logs and billing."""

    def __init__(self, clock: Clock, store: Store, jobs: JobService) -> None:
        self.clock = clock
        self.store = store
        self.jobs = jobs
        self.usage = UsageLedger(store, clock)
        self.registry_auths = RegistryAuths(store)
        self.templates = Templates(store, self.registry_auths)
        self.volumes = NetworkVolumes(store, self.usage)
        self.ssh_keys = SshKeys(store)
        self.delegations = Delegations(store, clock)
        self.clusters = Clusters(store, clock, self.usage)
        self.worker_logs = WorkerLogs(clock)
        self.pods = Pods(
            store,
            clock,
            self.usage,
            auths=self.registry_auths,
            templates=self.templates,
            volumes=self.volumes,
            clusters=self.clusters,
            ssh_keys=self.ssh_keys,
        )
        self.endpoints = Endpoints(
            store, clock, jobs, self.usage, templates=self.templates, volumes=self.volumes
        )
        self.billing = Billing(self.usage, clock, self.volumes)
        jobs.on_execution.append(self.worker_logs.record_execution)
        self.served: dict[str, Served[Any]] = {
            area.ROW.segment: area for area in vars(self).values() if isinstance(area, Served)
        }
        """A resource's path under ``/v2`` -> the area whose ``ROW`` it is."""

    def restore(self) -> None:
        """Take back every stored record and endpoint; before ``JobService.restore``, as
        stored jobs need their endpoints."""
        self.usage.load()
        for area in vars(self).values():
            if area is not self.usage and isinstance(getattr(area, "book", None), Book):
                area.book.load()
        self.endpoints.restore()
