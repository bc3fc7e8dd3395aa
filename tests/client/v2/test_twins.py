"""The v2 log followers' sync and async twins: iterators both ways, with ``stop``.

Every resource's twins, these included, are checked for the same methods, signatures,
help and types in tests/client/test_handle_twins.py.
"""

from __future__ import annotations

import inspect

import pytest

from nbext.client import AsyncEndpoints, AsyncPods, Endpoints, Pods

FOLLOWERS = [(Pods, AsyncPods, "follow_logs"), (Endpoints, AsyncEndpoints, "follow_worker_logs")]


@pytest.mark.parametrize(("sync", "async_", "name"), FOLLOWERS)
def test_followers_are_iterators_both_ways(sync: type, async_: type, name: str) -> None:
    method, twin = getattr(sync, name), getattr(async_, name)
    assert inspect.signature(method).parameters == inspect.signature(twin).parameters
    assert str(inspect.signature(method).return_annotation) == "Generator[LogEvent, None, None]"
    assert str(inspect.signature(twin).return_annotation) == "AsyncGenerator[LogEvent, None]"
    assert "stop" in inspect.signature(method).parameters and method.__doc__ == twin.__doc__
    assert not inspect.iscoroutinefunction(twin)  # async for, not await
