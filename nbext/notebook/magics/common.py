"""What every magic needs: user mistakes as one-line UsageErrors, names, the namespace
(docs/architecture.md#mistakes-in-a-cell)."""

from __future__ import annotations

import contextlib
import keyword
import math
import re
import shlex
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError

from nbext.client import NbextError, NotFound

from ..errors import Endpoints, describe, one_line
from ..kernel import current

if TYPE_CHECKING:
    import argparse

    import pandas as pd

    from ..chat import Conversation
    from ..connection import Connection


class Magics(Protocol):
    """The magics as a command reads them (``RunpodMagics``), said here so the commands'
    modules need not import the class that imports them."""

    connection: Connection
    conversations: dict[str, Conversation]
    display_limit: int
    poll_interval: float
    default_endpoint: str | None
    raise_on_failure: bool
    log_max_lines: int

    @property
    def user_ns(self) -> dict[str, Any]: ...


@contextlib.contextmanager
def usage_errors(what: str = "") -> Iterator[None]:
    """Re-raise nbext's errors (what a user can act on) as one-line UsageErrors; ``what``
    ("endpoint 'echo'") leads the line unless the description already names it."""
    try:
        yield
    except UsageError:
        raise
    except NbextError as exc:
        message = explain(exc)
        if what and not said(what, message):
            message = f"{what}: {message}"
        raise UsageError(one_line(message)) from None


def said(what: str, message: str) -> bool:
    """Whether ``message`` already names what ``what`` does: it starts with it, or quotes
    the same name ("map on 'echo'" and "endpoint 'echo' not found")."""
    return message.startswith(what) or any(name in message for name in re.findall(r"'[^']+'", what))


def explain(exc: NbextError) -> str:
    """``describe(exc)``, told the service's endpoints when something was not found, so an
    unknown endpoint gets "did you mean" (an extra request, on the error path only)."""
    endpoints: Endpoints = ()
    if isinstance(exc, NotFound) and exc.endpoint_id:
        with contextlib.suppress(NbextError):
            endpoints = [(e.id, e.name) for e in current().client.endpoints.list() if e.id]
    return describe(exc, endpoints=endpoints)


def parse_line(magic: Callable[..., Any], line: str) -> argparse.Namespace:
    """``line`` parsed by ``magic``'s parser, split by shell rules (``--name "my model"`` is
    ``my model``; IPython's splitting keeps the quotes); a mistake is a one-line UsageError."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        problem = {
            "No closing quotation": "a quote is not closed",
            "No escaped character": "the line ends in a backslash",
        }.get(str(exc), str(exc))
        raise UsageError(
            one_line(f"cannot read the arguments: {problem} in `{line.strip()}`")
        ) from None
    parser: argparse.ArgumentParser = magic.parser  # type: ignore[attr-defined]
    try:
        return parser.parse_args(words)
    except UsageError as exc:
        sub = parser.prog.removeprefix("runpod ")
        if sub == parser.prog:
            raise
        raise UsageError(f"{exc}; `%runpod help {sub}` says how to use it") from None


def check_name(name: str | None, option: str = "-o") -> str | None:
    """A variable name for ``-o NAME``, refused early if Python would refuse it."""
    if name is None:
        return None
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"{option} {name!r}: not a valid Python variable name")
    return name


def inputs_named(magics: Magics, name: str) -> Any:
    """The variable INPUTS names; when there is none, one line says what INPUTS must be
    too (``[{"n":1}]`` typed where a name goes)."""
    if name not in magics.user_ns:
        raise UsageError(
            "INPUTS must name a variable holding a list of dicts or a DataFrame; "
            f"no {name!r} in the notebook's namespace"
        )
    return magics.user_ns[name]


def store(magics: Magics, name: str | None, value: Any) -> None:
    """Bind ``name`` in the user's namespace (``-o NAME``)."""
    if name is not None:
        magics.user_ns[name] = value


def store_and_show(
    magics: Magics,
    name: str | None,
    frame: pd.DataFrame,
    what: str,
    columns: list[str] | None = None,
) -> None:
    """``-o NAME`` bound to the whole frame, and its first rows shown (``show_frame``)."""
    from ..display.show import show_frame

    store(magics, name, frame)
    show_frame(frame, magics.display_limit, what=what, stored_as=name, columns=columns)


def positive(value: float | None, option: str) -> float | None:
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise UsageError(f"{option} must be a number of seconds > 0, got {value:g}")
    return value


def number_option(option: str, kind: type[int] | type[float] = int) -> Callable[[str], Any]:
    """An argparse ``type`` for ``option``: a finite number above 0 (a whole one for
    ``int``); anything else is a one-line UsageError naming the option."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise UsageError(f"{option} must be {what}, got {text!r}") from None
        if not (value > 0 and math.isfinite(value)):
            raise UsageError(f"{option} must be more than 0, got {text}")
        return value

    return parse
