"""The state only v2 exposes, over the same store and clock as everything else.

SSH keys, ECR delegations, instant clusters, worker logs, and volumes, registries and
billing in v2's terms (``V2Volumes``, ``V2Registries``, ``V2Billing``): the rules of
their bodies and their views. Templates, endpoints and pods are kept in v2's shape
(``m.templates``, ``m.endpoints``, ``m.pods``). ``Management`` holds one of these as
``m.v2``, built before the pods, which read the clusters and SSH keys, and restored with
the rest when an emulator restarts on its database.
"""

from __future__ import annotations

from ..clock import Clock
from ..store_port import Store
from .account import SshKeys
from .breakdown import Breakdown
from .clusters import Clusters
from .delegations import Delegations
from .logs import WorkerLogs
from .network_volumes import NetworkVolumes
from .registry_auths import RegistryAuths
from .usage import UsageLedger
from .v2_billing import V2Billing
from .v2_storage import V2Registries, V2Volumes


class V2State:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        usage: UsageLedger,
        volumes: NetworkVolumes,
        auths: RegistryAuths,
    ) -> None:
        self.ssh_keys = SshKeys(store)
        self.delegations = Delegations(store, clock)
        self.clusters = Clusters(store, clock, usage)
        self.worker_logs = WorkerLogs(clock)
        self.breakdown = Breakdown(usage, clock)
        self.volumes = V2Volumes(volumes)
        self.registries = V2Registries(auths)
        self.billing = V2Billing(clock, self.breakdown, volumes)

    def load(self) -> None:
        for book in (self.ssh_keys.book, self.delegations.book, self.clusters.book):
            book.load()
