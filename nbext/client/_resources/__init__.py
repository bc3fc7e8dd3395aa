"""The management interface: one resource per area (``client.pods``...), over REST v2."""

from __future__ import annotations

from typing import Any, Generic, Self, TypeVar, overload

from .._twins import Resource
from .billing import AsyncBilling, Billing, Moment
from .catalog import AsyncCatalog, Catalog
from .clusters import AsyncClusters, Clusters
from .endpoints import AsyncEndpoints, Endpoints
from .network_volumes import AsyncNetworkVolumes, NetworkVolumes
from .pods import AsyncPods, Pods
from .registries import (
    AsyncRegistryAuths,
    AsyncRegistryDelegations,
    RegistryAuths,
    RegistryDelegations,
)
from .rest import V2
from .ssh_keys import AsyncSshKeys, SshKeys
from .templates import AsyncTemplates, Templates

R = TypeVar("R", bound=Resource)

__all__ = [
    "AsyncBilling",
    "AsyncCatalog",
    "AsyncClusters",
    "AsyncEndpoints",
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
    "Templates",
]


class Area(Generic[R]):
    """A client's resource of class ``kind``, made on first use and kept."""

    def __init__(self, kind: type[R]) -> None:
        self.kind = kind

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, client: None, owner: type) -> Self: ...

    @overload
    def __get__(self, client: Any, owner: type) -> R: ...

    def __get__(self, client: Any, owner: type) -> Self | R:
        if client is None:
            return self
        made = self.kind(client, client._api)
        client.__dict__[self.name] = made  # the instance's attribute from now on
        return made


class SyncManagement:
    """The management resources of a blocking client (a mixin of ``Client``)."""

    _api: V2
    templates = Area(Templates)
    pods = Area(Pods)
    endpoints = Area(Endpoints)
    network_volumes = Area(NetworkVolumes)
    registry_auths = Area(RegistryAuths)
    billing = Area(Billing)
    catalog = Area(Catalog)
    ssh_keys = Area(SshKeys)
    clusters = Area(Clusters)
    registry_delegations = Area(RegistryDelegations)


class AsyncManagement:
    """The management resources of an ``AsyncClient`` (a mixin)."""

    _api: V2
    templates = Area(AsyncTemplates)
    pods = Area(AsyncPods)
    endpoints = Area(AsyncEndpoints)
    network_volumes = Area(AsyncNetworkVolumes)
    registry_auths = Area(AsyncRegistryAuths)
    billing = Area(AsyncBilling)
    catalog = Area(AsyncCatalog)
    ssh_keys = Area(AsyncSshKeys)
    clusters = Area(AsyncClusters)
    registry_delegations = Area(AsyncRegistryDelegations)
