"""Sync and async resource classes made from one set of operations.

Each management operation is written once, as a flow builder: a generator function
taking the client's flow context and the caller's arguments (``pods.create``...). A
resource class lists its operations::

    class Pods(SyncResource):
        create = blocking(pods.create)

    class AsyncPods(AsyncResource):
        create = awaiting(pods.create)

``blocking`` makes a method that runs the flow with the client's blocking driver,
``awaiting`` one that awaits the async driver. Both keep the operation's signature and
docstring (for ``help()`` and for type checkers, through ``ParamSpec``), so the twins
cannot differ in what they accept, send, or return.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from .._errors import APIError
from .._flows import Context, Flow

P = ParamSpec("P")
T = TypeVar("T")


class SyncDriver(Protocol):
    """What a sync resource needs of its client: the flow context and a blocking driver."""

    _ctx: Context

    def _run(self, flow: Flow[T]) -> T: ...


class AsyncDriver(Protocol):
    """What an async resource needs of its client: the flow context and an async driver."""

    _ctx: Context

    async def _run(self, flow: Flow[T]) -> T: ...


def name_methods(cls: type) -> None:
    """Give each operation method its attribute's name, so tracebacks and help read right."""
    for name, value in vars(cls).items():
        if callable(value) and getattr(value, "_operation", None) is not None:
            value.__name__ = name
            value.__qualname__ = f"{cls.__qualname__}.{name}"


class SyncResource:
    """One area of the management interface on a blocking ``Client``."""

    def __init__(self, client: SyncDriver) -> None:
        self._client = client

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        name_methods(cls)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


class AsyncResource:
    """One area of the management interface on an ``AsyncClient``."""

    def __init__(self, client: AsyncDriver) -> None:
        self._client = client

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        name_methods(cls)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


def adopt(
    method: Callable[..., Any], operation: Callable[..., Any], awaited: bool, leading: int = 1
) -> None:
    """The operation's docstring and signature, its ``leading`` parameters (``ctx``, and
    what a job handle is about) replaced by ``self``."""
    signature = inspect.signature(operation)
    params = list(signature.parameters.values())[leading:]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    returns = signature.return_annotation
    if isinstance(returns, str) and "Flow[" in returns.split("[", 1)[0] + "[":
        returns = returns.split("Flow[", 1)[1].removesuffix("]")
        if awaited:
            returns = f"Awaitable[{returns}]"
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *params], return_annotation=returns
    )
    method.__doc__ = operation.__doc__
    method.__module__ = operation.__module__
    method._operation = operation  # type: ignore[attr-defined]


def _masked(error: APIError, ctx: Context) -> APIError | None:
    """A local refusal that quotes the client's own key (pasted into a field), masked.

    Refusals are decided before any request, without the key at hand, and some quote
    the input (the value of a choice); the key must still never show in an error.
    """
    if error.sent or ctx.secret is None:
        return None
    text = str(error)
    masked = ctx.secret.redact(text)
    if masked == text:
        return None
    return type(error)(masked, status=error.status, sent=False)


def blocking(
    operation: Callable[Concatenate[Context, P], Flow[T]],
) -> Callable[Concatenate[SyncResource, P], T]:
    """A sync method running ``operation``'s flow to completion."""

    def method(self: SyncResource, /, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        try:
            return client._run(operation(client._ctx, *args, **kwargs))
        except APIError as error:
            if (masked := _masked(error, client._ctx)) is None:
                raise
        raise masked

    adopt(method, operation, awaited=False)
    return method


def awaiting(
    operation: Callable[Concatenate[Context, P], Flow[T]],
) -> Callable[Concatenate[AsyncResource, P], Coroutine[Any, Any, T]]:
    """An async method awaiting ``operation``'s flow."""

    async def method(self: AsyncResource, /, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        try:
            return await client._run(operation(client._ctx, *args, **kwargs))
        except APIError as error:
            if (masked := _masked(error, client._ctx)) is None:
                raise
        raise masked

    adopt(method, operation, awaited=True)
    return method
