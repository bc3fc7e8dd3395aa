"""IPython's APIs this layer uses, with the types IPython does not declare
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from IPython.core import magic as _magic
from IPython.core import magic_arguments as _arguments
from IPython.display import display as _display

F = TypeVar("F", bound=Callable[..., Any])


class Handle(Protocol):
    """A displayed output that can be replaced in place (``display(..., display_id=True)``)."""

    def update(self, obj: Any) -> None: ...


def updates_in_place() -> bool:
    """Whether the front end replaces an output in place when it is updated: a kernel's
    do; a terminal IPython prints each update anew, so there a live output shows only
    its first state and its last."""
    from IPython import get_ipython
    from IPython.core.displaypub import DisplayPublisher

    shell = get_ipython()
    return shell is not None and type(shell.display_pub) is not DisplayPublisher


def show(obj: Any) -> None:
    _display(obj)  # type: ignore[no-untyped-call]


def show_updatable(obj: Any) -> Handle:
    """Display ``obj`` and return the handle that updates that output later."""
    handle = _display(obj, display_id=True)  # type: ignore[no-untyped-call]
    return cast(Handle, handle)


def magic_arguments(name: str | None = None) -> Callable[[F], F]:
    return cast(Callable[[F], F], _arguments.magic_arguments(name))  # type: ignore[no-untyped-call]


def argument(*args: Any, **kwargs: Any) -> Callable[[F], F]:
    return cast(Callable[[F], F], _arguments.argument(*args, **kwargs))  # type: ignore[no-untyped-call]


def cell_magic(func: F) -> F:
    return cast(F, _magic.cell_magic(func))


def line_magic(func: F) -> F:
    return cast(F, _magic.line_magic(func))


def line_cell_magic(func: F) -> F:
    return cast(F, _magic.line_cell_magic(func))
