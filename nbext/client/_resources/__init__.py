"""The management interface: one resource per area, hung off the clients.

``Client`` and ``AsyncClient`` inherit ``SyncManagement`` / ``AsyncManagement``, which
make ``client.templates``, ``client.pods``, ``client.endpoints``,
``client.network_volumes``, ``client.registry_auths``, ``client.billing``,
``client.catalog``, ``client.ssh_keys``, ``client.clusters`` and
``client.registry_delegations`` on first use (no request is made until a method is
called). Each is handed the client's interface: REST v2 (``rest.V2``), or the frozen
v1 adapter (``v1.V1``) when v1 was asked for.
"""

from __future__ import annotations

from functools import cached_property
from typing import cast

from .._twins import AsyncDriver, SyncDriver
from .billing import AsyncBilling, Billing, Moment
from .catalog import AsyncCatalog, Catalog
from .clusters import AsyncClusters, Clusters
from .delegations import AsyncRegistryDelegations, RegistryDelegations
from .endpoints import AsyncEndpoints, Endpoints
from .network_volumes import AsyncNetworkVolumes, NetworkVolumes
from .pods import AsyncPods, Pods
from .registry_auths import AsyncRegistryAuths, RegistryAuths
from .rest import V2
from .ssh_keys import AsyncSshKeys, SshKeys
from .templates import AsyncTemplates, Templates
from .v1 import V1


def interface(management_api: str, serverless_url: str) -> V2:
    """The interface a client speaks, as its configuration names it."""
    return V1(serverless_url) if management_api == "v1" else V2()


class SyncManagement:
    """The management resources of a blocking client (a mixin of ``Client``)."""

    _api: V2

    @cached_property
    def templates(self) -> Templates:
        return Templates(cast(SyncDriver, self), self._api)

    @cached_property
    def pods(self) -> Pods:
        return Pods(cast(SyncDriver, self), self._api)

    @cached_property
    def endpoints(self) -> Endpoints:
        return Endpoints(cast(SyncDriver, self), self._api)

    @cached_property
    def network_volumes(self) -> NetworkVolumes:
        return NetworkVolumes(cast(SyncDriver, self), self._api)

    @cached_property
    def registry_auths(self) -> RegistryAuths:
        return RegistryAuths(cast(SyncDriver, self), self._api)

    @cached_property
    def billing(self) -> Billing:
        return Billing(cast(SyncDriver, self), self._api)

    @cached_property
    def catalog(self) -> Catalog:
        return Catalog(cast(SyncDriver, self), self._api)

    @cached_property
    def ssh_keys(self) -> SshKeys:
        return SshKeys(cast(SyncDriver, self), self._api)

    @cached_property
    def clusters(self) -> Clusters:
        return Clusters(cast(SyncDriver, self), self._api)

    @cached_property
    def registry_delegations(self) -> RegistryDelegations:
        return RegistryDelegations(cast(SyncDriver, self), self._api)


class AsyncManagement:
    """The management resources of an ``AsyncClient`` (a mixin)."""

    _api: V2

    @cached_property
    def templates(self) -> AsyncTemplates:
        return AsyncTemplates(cast(AsyncDriver, self), self._api)

    @cached_property
    def pods(self) -> AsyncPods:
        return AsyncPods(cast(AsyncDriver, self), self._api)

    @cached_property
    def endpoints(self) -> AsyncEndpoints:
        return AsyncEndpoints(cast(AsyncDriver, self), self._api)

    @cached_property
    def network_volumes(self) -> AsyncNetworkVolumes:
        return AsyncNetworkVolumes(cast(AsyncDriver, self), self._api)

    @cached_property
    def registry_auths(self) -> AsyncRegistryAuths:
        return AsyncRegistryAuths(cast(AsyncDriver, self), self._api)

    @cached_property
    def billing(self) -> AsyncBilling:
        return AsyncBilling(cast(AsyncDriver, self), self._api)

    @cached_property
    def catalog(self) -> AsyncCatalog:
        return AsyncCatalog(cast(AsyncDriver, self), self._api)

    @cached_property
    def ssh_keys(self) -> AsyncSshKeys:
        return AsyncSshKeys(cast(AsyncDriver, self), self._api)

    @cached_property
    def clusters(self) -> AsyncClusters:
        return AsyncClusters(cast(AsyncDriver, self), self._api)

    @cached_property
    def registry_delegations(self) -> AsyncRegistryDelegations:
        return AsyncRegistryDelegations(cast(AsyncDriver, self), self._api)


__all__ = [
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
    "interface",
]
