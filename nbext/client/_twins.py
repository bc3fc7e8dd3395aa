"""Every sync/async pair of methods, made from one operation written once as a flow
builder: the one twin mechanism (docs/architecture.md#flows-drivers-and-twins)."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator
from typing import Any, Concatenate, ParamSpec, TypeVar, overload

from ._errors import APIError
from ._flows import Context, Flow

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")


class Twins:
    """A class whose methods are made here. ``_client``'s driver runs the flows;
    ``_about()`` is what the operations take after the flow context. Each method is named
    for its attribute, so tracebacks and ``help`` read right."""

    _client: Any
    """A client: its ``_ctx``, and its driver's ``_run`` and ``_iterate``."""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for name, value in vars(cls).items():
            if callable(value) and getattr(value, "_operation", None) is not None:
                value.__name__ = name
                value.__qualname__ = f"{cls.__qualname__}.{name}"

    def _about(self) -> tuple[Any, ...]:
        return ()


class Handle(Twins):
    """A handle on one thing of an endpoint (a job, a batch): its operations are about
    its state, which has the thing's ``id`` and ``endpoint_id``."""

    _state: Any

    def __init__(self, client: Any, state: Any) -> None:
        self._client = client
        self._state = state

    @property
    def id(self) -> str:
        return str(self._state.id)

    @property
    def endpoint_id(self) -> str:
        return str(self._state.endpoint_id)

    def _about(self) -> tuple[Any]:
        return (self._state,)


class Resource(Twins):
    """One area of the management interface on a client (``client.pods``...)."""

    def __init__(self, client: Any, api: object) -> None:
        self._client = client
        self._api = api

    def _about(self) -> tuple[object]:
        return (self._api,)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


# ---- the one way a method is made ----------------------------------------------------------


def _masked(error: APIError, ctx: Context) -> APIError | None:
    """A local refusal that quotes the client's own key (pasted into a field), masked:
    refusals are decided without the key at hand, and some quote the input."""
    if error.sent or ctx.secret is None:
        return None
    text = str(error)
    masked = ctx.secret.redact(text)
    if masked == text:
        return None
    return type(error)(masked, status=error.status, sent=False)


def _start(self: Twins, operation: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    return operation(self._client._ctx, *self._about(), *args, **kwargs)


def _guarded(ctx: Context, step: Callable[[], T]) -> T:
    """``step()``, a local refusal that quotes the key masked."""
    masked = None
    try:
        return step()
    except APIError as error:
        if (masked := _masked(error, ctx)) is None:
            raise
    raise masked  # outside the except: the unmasked error is not its context


def _adopt(
    method: Callable[..., Any],
    operation: Callable[..., Any],
    leading: int,
    returns: str | None,
    awaited: bool,
) -> None:
    """The operation's docstring and signature on ``method``: its ``leading`` parameters
    (the flow context, and what the method is about) replaced by ``self``, its return
    type ``returns`` when the method does not hand back the flow's own value."""
    signature = inspect.signature(operation)
    params = list(signature.parameters.values())[leading:]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    shown = signature.return_annotation
    if returns is not None:
        shown = returns
    elif isinstance(shown, str) and shown.split("[", 1)[0].endswith("Flow"):
        shown = shown.split("[", 1)[1].removesuffix("]")
    if awaited:
        shown = f"Awaitable[{shown}]"
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *params], return_annotation=shown
    )
    method.__doc__ = operation.__doc__
    method.__module__ = operation.__module__
    method._operation = operation  # type: ignore[attr-defined]


def _returns(then: Callable[..., Any] | None) -> str | None:
    return None if then is None else str(inspect.signature(then).return_annotation)


def _iterator(
    operation: Callable[..., Any],
    each: Callable[[Any], Any],
    mapped: Callable[..., Any],
    shown: str,
) -> Callable[..., Any]:
    """A method handing out what ``operation``'s flow emits through ``mapped`` (the sync or
    the async loop); the arguments are checked now, before iterating."""

    def method(self: Twins, /, *args: Any, **kwargs: Any) -> Any:
        client = self._client
        items = _guarded(
            client._ctx, lambda: client._iterate(_start(self, operation, args, kwargs))
        )
        return mapped(items, each, client._ctx)

    _adopt(method, operation, 2, shown.format(_returns(each)), False)
    return method


def _mapped(
    items: Generator[Any, None, None], each: Callable[[Any], R], ctx: Context
) -> Generator[R, None, None]:
    masked = None
    try:
        for item in items:
            yield each(item)
    except APIError as error:
        if (masked := _masked(error, ctx)) is None:
            raise
    finally:
        items.close()
    if masked is not None:
        raise masked


async def _amapped(
    items: AsyncGenerator[Any, None], each: Callable[[Any], R], ctx: Context
) -> AsyncGenerator[R, None]:
    masked = None
    try:
        async for item in items:
            yield each(item)
    except APIError as error:
        if (masked := _masked(error, ctx)) is None:
            raise
    finally:
        await items.aclose()
    if masked is not None:
        raise masked


# ---- the makers: the operation takes the flow context, what the method is about, the arguments


@overload
def blocking(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
) -> Callable[Concatenate[Any, P], T]: ...
@overload
def blocking(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
    then: Callable[[Any, T], R],
) -> Callable[Concatenate[Any, P], R]: ...
def blocking(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
    then: Callable[[Any, T], R] | None = None,
) -> Callable[Concatenate[Any, P], T | R]:
    """A sync method running ``operation``'s flow, its result handed to ``then`` (with
    the resource or handle) if given."""

    def method(self: Twins, /, *args: Any, **kwargs: Any) -> Any:
        client = self._client
        result = _guarded(client._ctx, lambda: client._run(_start(self, operation, args, kwargs)))
        return result if then is None else then(self, result)

    _adopt(method, operation, 2, _returns(then), awaited=False)
    return method


@overload
def awaiting(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]: ...
@overload
def awaiting(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
    then: Callable[[Any, T], R],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]: ...
def awaiting(
    operation: Callable[Concatenate[Context, Any, P], Flow[T]],
    then: Callable[[Any, T], R] | None = None,
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T | R]]:
    """``blocking`` for ``await``."""

    async def method(self: Twins, /, *args: Any, **kwargs: Any) -> Any:
        masked = None
        try:
            result = await self._client._run(_start(self, operation, args, kwargs))
            return result if then is None else then(self, result)
        except APIError as error:
            if (masked := _masked(error, self._client._ctx)) is None:
                raise
        raise masked

    _adopt(method, operation, 2, _returns(then), awaited=True)
    return method


def iterating(
    operation: Callable[Concatenate[Context, Any, P], Flow[None]], each: Callable[[Any], R]
) -> Callable[Concatenate[Any, P], Generator[R, None, None]]:
    """A sync method iterating over what ``operation``'s flow emits, each item passed
    through ``each``; the arguments are checked at the call, and closing the iterator
    closes the flow."""
    return _iterator(operation, each, _mapped, "Generator[{}, None, None]")


def aiterating(
    operation: Callable[Concatenate[Context, Any, P], Flow[None]], each: Callable[[Any], R]
) -> Callable[Concatenate[Any, P], AsyncGenerator[R, None]]:
    """``iterating`` for ``async for``."""
    return _iterator(operation, each, _amapped, "AsyncGenerator[{}, None]")


def local(
    operation: Callable[Concatenate[Any, P], T], then: Callable[[Any, T], R]
) -> Callable[Concatenate[Any, P], R]:
    """A handle method that makes no request itself: ``operation``'s value (on the
    handle's subject, no flow context) handed to ``then`` with the handle."""

    def method(self: Twins, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return then(self, operation(*self._about(), *args, **kwargs))

    _adopt(method, operation, 1, _returns(then), awaited=False)
    return method
