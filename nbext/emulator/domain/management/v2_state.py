"""The state only v2 exposes, over the same store and clock as everything else.

SSH keys, ECR delegations, instant clusters, worker logs, and volumes, registries and
billing in v2's terms (``V2Volumes``, ``V2Registries``, ``V2Billing``): the rules of
their bodies and their views. Templates, endpoints and pods are kept in v2's shape
(``m.templates``, ``m.endpoints``, ``m.pods``).
``Management`` holds one of these as ``m.v2``, so it is restored with the rest when an
emulator restarts on its database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .account import SshKeys
from .breakdown import Breakdown
from .clusters import Clusters
from .delegations import Delegations
from .logs import WorkerLogs
from .v2_billing import V2Billing
from .v2_storage import V2Registries, V2Volumes

if TYPE_CHECKING:
    from .facade import Management


class V2State:
    def __init__(self, m: Management) -> None:
        self.ssh_keys = SshKeys(m.store)
        self.delegations = Delegations(m.store, m.clock)
        self.clusters = Clusters(m)
        self.worker_logs = WorkerLogs(m.clock)
        self.breakdown = Breakdown(m.usage, m.clock)
        m.jobs.on_execution.append(self.worker_logs.record_execution)
        self.volumes = V2Volumes(m)
        self.registries = V2Registries(m)
        self.billing = V2Billing(m)

    def load(self) -> None:
        for book in (
            self.ssh_keys.book,
            self.delegations.book,
            self.clusters.book,
        ):
            book.load()
