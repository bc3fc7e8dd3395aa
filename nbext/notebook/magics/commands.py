"""The ``%runpod`` subcommands: a registry, and the dispatch from one line to one of them
(docs/architecture.md#a-cell-through-the-notebook-layer)."""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from .common import Magics, parse_line

if TYPE_CHECKING:
    import argparse


Handler = Callable[[Magics, "argparse.Namespace"], Any]
AsyncHandler = Callable[[Magics, "argparse.Namespace"], Awaitable[Any]]


@dataclass(frozen=True)
class Subcommand:
    name: str
    summary: str
    handler: Handler
    awaited: AsyncHandler | None = None
    """What the line runs in a cell that awaits (``nbext.notebook.awaiting``), so the
    panel's Cancel is heard meanwhile; None: the subcommand blocks there too."""

    @property
    def help(self) -> str:
        """The subcommand's usage, description and options, as plain text."""
        return plain(str(self.handler.__doc__ or self.summary))


SUBCOMMANDS: dict[str, Subcommand] = {}
"""In the order they were registered, which help keeps (``magics/__init__.py``)."""


def subcommand(
    name: str, summary: str, *, awaited: AsyncHandler | None = None
) -> Callable[[Handler], Handler]:
    """Register a ``magic_arguments``-decorated function as ``%runpod NAME`` (and its
    ``awaited`` twin, taking the same arguments, if it has one)."""

    def register(handler: Handler) -> Handler:
        if not hasattr(handler, "parser"):
            raise TypeError(f"%runpod {name}: decorate the handler with @magic_arguments")
        SUBCOMMANDS[name] = Subcommand(name, summary, handler, awaited)
        return handler

    return register


def dispatch(magics: Magics, line: str) -> Any:
    """``%runpod SUBCOMMAND [arguments]``."""
    name, rest = [*line.split(maxsplit=1), "", ""][:2]  # any whitespace, tabs too
    if not name:
        raise UsageError(
            f"%runpod needs a subcommand: {', '.join(SUBCOMMANDS)} (%runpod? for help)"
        )
    if name in ("help", "-h", "--help"):
        print(help_text(rest.strip() or None))
        return None
    handler = _named(name, "unknown").handler
    return handler(magics, parse_line(handler, rest))


def help_text(name: str | None = None) -> str:
    """The summary of every subcommand, or one subcommand's full help."""
    if name is not None:
        return _named(name, "no").help
    width = max(len(n) for n in SUBCOMMANDS)
    return "\n".join(f"  {n:<{width}}  {c.summary}" for n, c in SUBCOMMANDS.items())


def _named(name: str, lead: str) -> Subcommand:
    """The subcommand ``name``; else a line that starts with ``lead`` and offers the closest."""
    if name not in SUBCOMMANDS:
        close = difflib.get_close_matches(name, SUBCOMMANDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(SUBCOMMANDS)
        raise UsageError(f"{lead} %runpod subcommand {name!r}{hint} (one of: {known})")
    return SUBCOMMANDS[name]


def plain(doc: str) -> str:
    """A docstring as ``%runpod help`` prints it: the literal-block usage (``::``) that
    ``magic_arguments`` writes for IPython's ``?`` pages, and double backquotes, are noise there."""
    lines: list[str] = []
    in_usage = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped == "::":
            continue
        if stripped.endswith("::"):
            line = line.rstrip()[:-1]
        if stripped.startswith("%") and not any(text.strip() for text in lines):
            line, in_usage = f"usage: {stripped}", True
        elif in_usage and stripped:
            # argparse aligned the wrapped usage under "usage: runpod NAME "; IPython then
            # added the "%" this line keeps, one column more
            line = " " + line
        else:
            in_usage = False
        lines.append(line.replace("``", ""))
    return "\n".join(lines).strip("\n")
