"""The v2 resources' sync and async twins accept the same arguments, documented alike."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from nbext.client import (
    AsyncCatalog,
    AsyncClusters,
    AsyncEndpoints,
    AsyncPods,
    AsyncRegistryDelegations,
    AsyncSshKeys,
    Catalog,
    Clusters,
    Endpoints,
    Pods,
    RegistryDelegations,
    SshKeys,
)

PAIRS: list[tuple[type, type]] = [
    (Catalog, AsyncCatalog),
    (SshKeys, AsyncSshKeys),
    (Clusters, AsyncClusters),
    (RegistryDelegations, AsyncRegistryDelegations),
]
FOLLOWERS = [(Pods, AsyncPods, "follow_logs"), (Endpoints, AsyncEndpoints, "follow_worker_logs")]


def operations(cls: type) -> dict[str, Any]:
    return {name: v for name, v in vars(cls).items() if not name.startswith("_") and callable(v)}


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_twins_have_the_same_methods_and_signatures(sync: type, async_: type) -> None:
    sync_ops, async_ops = operations(sync), operations(async_)
    assert sorted(sync_ops) == sorted(async_ops) and sync_ops
    for name, method in sync_ops.items():
        twin = async_ops[name]
        assert inspect.iscoroutinefunction(twin) and not inspect.iscoroutinefunction(method)
        assert inspect.signature(method).parameters == inspect.signature(twin).parameters
        assert method.__doc__ and method.__doc__ == twin.__doc__
        assert method.__qualname__ == f"{sync.__name__}.{name}"


@pytest.mark.parametrize(("sync", "async_", "name"), FOLLOWERS)
def test_followers_are_iterators_both_ways(sync: type, async_: type, name: str) -> None:
    method, twin = getattr(sync, name), getattr(async_, name)
    assert inspect.signature(method).parameters == inspect.signature(twin).parameters
    assert str(inspect.signature(method).return_annotation) == "Generator[LogEvent, None, None]"
    assert str(inspect.signature(twin).return_annotation) == "AsyncGenerator[LogEvent, None]"
    assert "stop" in inspect.signature(method).parameters and method.__doc__ == twin.__doc__
