"""The management interface: one resource per area, hung off the clients.

``Client`` and ``AsyncClient`` inherit ``SyncManagement`` / ``AsyncManagement``, which
make ``client.templates``, ``client.pods``, ``client.endpoints``,
``client.network_volumes``, ``client.registry_auths`` and ``client.billing`` on first
use (no request is made until a method is called), and REST v2's own resources:
``client.catalog``, ``client.ssh_keys``, ``client.clusters`` and
``client.registry_delegations``.

Which interface each resource speaks is decided once, from the client's base URL: each
is handed its area's v2 version object, or the v1 one (``VERSIONS``; ``rest``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import cast

from .._twins import AsyncDriver, SyncDriver
from .billing import AsyncBilling, Billing, BillingV1, BillingV2, Moment
from .catalog import AsyncCatalog, Catalog
from .clusters import AsyncClusters, Clusters
from .delegations import AsyncRegistryDelegations, RegistryDelegations
from .endpoints import AsyncEndpoints, Endpoints, EndpointsV1, EndpointsV2
from .network_volumes import (
    AsyncNetworkVolumes,
    NetworkVolumes,
    NetworkVolumesV1,
    NetworkVolumesV2,
)
from .pods import AsyncPods, Pods, PodsV1, PodsV2
from .registry_auths import AsyncRegistryAuths, RegistryAuths, RegistryAuthsV1, RegistryAuthsV2
from .rest import V1, V2
from .ssh_keys import AsyncSshKeys, SshKeys
from .templates import AsyncTemplates, Templates, TemplatesV1, TemplatesV2
from .wire import UpdateMethod


@dataclass(frozen=True)
class Versions:
    """What each resource of a client asks about its interface: one version object per
    area, and ``plain`` for REST v2's own areas (catalog, SSH keys, clusters...)."""

    templates: TemplatesV2
    pods: PodsV2
    endpoints: EndpointsV2
    network_volumes: NetworkVolumesV2
    registry_auths: RegistryAuthsV2
    billing: BillingV2
    plain: V2


VERSIONS = {
    "v2": Versions(
        TemplatesV2(),
        PodsV2(),
        EndpointsV2(),
        NetworkVolumesV2(),
        RegistryAuthsV2(),
        BillingV2(),
        V2(),
    ),
    "v1": Versions(
        TemplatesV1(),
        PodsV1(),
        EndpointsV1(),
        NetworkVolumesV1(),
        RegistryAuthsV1(),
        BillingV1(),
        V1(),
    ),
}
"""The two interfaces a client can speak; the client takes one when it is made, from its
base URL (``ClientConfig.management_api``), and hands each resource its part."""


class SyncManagement:
    """The management resources of a blocking client (a mixin of ``Client``)."""

    _versions: Versions

    @cached_property
    def templates(self) -> Templates:
        return Templates(cast(SyncDriver, self), self._versions.templates)

    @cached_property
    def pods(self) -> Pods:
        return Pods(cast(SyncDriver, self), self._versions.pods)

    @cached_property
    def endpoints(self) -> Endpoints:
        return Endpoints(cast(SyncDriver, self), self._versions.endpoints)

    @cached_property
    def network_volumes(self) -> NetworkVolumes:
        return NetworkVolumes(cast(SyncDriver, self), self._versions.network_volumes)

    @cached_property
    def registry_auths(self) -> RegistryAuths:
        return RegistryAuths(cast(SyncDriver, self), self._versions.registry_auths)

    @cached_property
    def billing(self) -> Billing:
        return Billing(cast(SyncDriver, self), self._versions.billing)

    @cached_property
    def catalog(self) -> Catalog:
        return Catalog(cast(SyncDriver, self), self._versions.plain)

    @cached_property
    def ssh_keys(self) -> SshKeys:
        return SshKeys(cast(SyncDriver, self), self._versions.plain)

    @cached_property
    def clusters(self) -> Clusters:
        return Clusters(cast(SyncDriver, self), self._versions.plain)

    @cached_property
    def registry_delegations(self) -> RegistryDelegations:
        return RegistryDelegations(cast(SyncDriver, self), self._versions.plain)


class AsyncManagement:
    """The management resources of an ``AsyncClient`` (a mixin)."""

    _versions: Versions

    @cached_property
    def templates(self) -> AsyncTemplates:
        return AsyncTemplates(cast(AsyncDriver, self), self._versions.templates)

    @cached_property
    def pods(self) -> AsyncPods:
        return AsyncPods(cast(AsyncDriver, self), self._versions.pods)

    @cached_property
    def endpoints(self) -> AsyncEndpoints:
        return AsyncEndpoints(cast(AsyncDriver, self), self._versions.endpoints)

    @cached_property
    def network_volumes(self) -> AsyncNetworkVolumes:
        return AsyncNetworkVolumes(cast(AsyncDriver, self), self._versions.network_volumes)

    @cached_property
    def registry_auths(self) -> AsyncRegistryAuths:
        return AsyncRegistryAuths(cast(AsyncDriver, self), self._versions.registry_auths)

    @cached_property
    def billing(self) -> AsyncBilling:
        return AsyncBilling(cast(AsyncDriver, self), self._versions.billing)

    @cached_property
    def catalog(self) -> AsyncCatalog:
        return AsyncCatalog(cast(AsyncDriver, self), self._versions.plain)

    @cached_property
    def ssh_keys(self) -> AsyncSshKeys:
        return AsyncSshKeys(cast(AsyncDriver, self), self._versions.plain)

    @cached_property
    def clusters(self) -> AsyncClusters:
        return AsyncClusters(cast(AsyncDriver, self), self._versions.plain)

    @cached_property
    def registry_delegations(self) -> AsyncRegistryDelegations:
        return AsyncRegistryDelegations(cast(AsyncDriver, self), self._versions.plain)


__all__ = [
    "VERSIONS",
    "AsyncBilling",
    "AsyncCatalog",
    "AsyncClusters",
    "AsyncEndpoints",
    "AsyncManagement",
    "AsyncNetworkVolumes",
    "AsyncPods",
    "AsyncRegistryAuths",
    "AsyncRegistryDelegations",
    "AsyncSshKeys",
    "AsyncTemplates",
    "Billing",
    "Catalog",
    "Clusters",
    "Endpoints",
    "Moment",
    "NetworkVolumes",
    "Pods",
    "RegistryAuths",
    "RegistryDelegations",
    "SshKeys",
    "SyncManagement",
    "Templates",
    "UpdateMethod",
]
