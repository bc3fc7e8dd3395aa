"""``Management``: every management resource, over one store and one clock.

The areas refer to each other (a template names a registry auth, an endpoint a template,
a volume cannot go while a pod uses it), so each holds this façade and asks it for the
others. Nothing here knows about HTTP; the routers under ``api/v1`` call these methods,
those under ``api/v2`` the v2 areas of ``m.v2`` (``V2State``) over them.
"""

from __future__ import annotations

from ..clock import Clock
from ..job_service import JobService
from ..store_port import Store
from .billing import Billing
from .endpoints import Endpoints
from .network_volumes import NetworkVolumes
from .pods import Pods
from .registry_auths import RegistryAuths
from .templates import Templates
from .usage import UsageLedger
from .v2_state import V2State


class Management:
    """Templates, pods, endpoint records, network volumes, registry auths and billing."""

    def __init__(self, clock: Clock, store: Store, jobs: JobService) -> None:
        self.clock = clock
        self.store = store
        self.jobs = jobs
        self.usage = UsageLedger(store, clock)
        self.registry_auths = RegistryAuths(self)
        self.templates = Templates(self)
        self.volumes = NetworkVolumes(self)
        self.pods = Pods(self)
        self.endpoints = Endpoints(self)
        self.billing = Billing(self.usage, clock)
        jobs.on_execution.append(self.endpoints.record_execution)
        self.v2 = V2State(self)
        """What only the v2 interface shows: SSH keys, clusters, logs, v2-only fields."""

    def restore(self) -> None:
        """Take back every stored record; the endpoints go back into the job interface.

        Call before ``JobService.restore``: stored jobs need their endpoints.
        """
        self.usage.load()
        for book in (
            self.registry_auths.book,
            self.templates.book,
            self.volumes.book,
            self.pods.book,
            self.endpoints.book,
        ):
            book.load()
        self.endpoints.restore()
        self.v2.load()
