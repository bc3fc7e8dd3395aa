"""Cells that wait by awaiting, so the kernel hears a click on Cancel meanwhile (ipykernel
7.4+; docs/architecture.md#notebook-modules; line expansion:
docs/behaviour.md#magic-lines-and-bodies).
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

from IPython import get_ipython

if TYPE_CHECKING:
    from .magics import RunpodMagics

MIN_IPYKERNEL = (7, 4)
"""The first ipykernel known to dispatch widget messages while an awaiting cell waits."""
MAGIC_CALLS = tuple(
    f"get_ipython().run_cell_magic('{name}', " for name in ("runpod_job", "runpod_chat")
)
"""How IPython writes a ``%%runpod_job`` or ``%%runpod_chat`` cell once transformed."""
MODULE = "await __import__('nbext.notebook.awaiting', fromlist=['_'])"
AWAITED_CALL = f"{MODULE}.run_cell_magic("
AWAITED_LINE = f"{MODULE}.run_line_magic("
LINE_CALL = "get_ipython().run_line_magic("


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def supported(shell: Any) -> bool:
    """Whether ``shell`` is a kernel that handles widget messages while a cell awaits."""
    if getattr(shell, "kernel", None) is None:
        return False
    try:
        installed = metadata.version("ipykernel")
    except metadata.PackageNotFoundError:
        return False
    return _version(installed) >= MIN_IPYKERNEL


def await_job_cells(lines: list[str]) -> list[str]:
    """Input transformer: a ``%%runpod_job`` or ``%%runpod_chat`` cell, and a ``%runpod``
    line of a subcommand that awaits outside any block, become awaited calls (unless
    ``%autoawait`` is off: then a top-level ``await`` would not run at all)."""
    shell = get_ipython()
    if shell is None or not getattr(shell, "autoawait", False):
        return lines
    if lines and lines[0].startswith(MAGIC_CALLS):
        return [AWAITED_CALL + lines[0][len("get_ipython().run_cell_magic(") :], *lines[1:]]
    from .magics.commands import SUBCOMMANDS

    # a line of a subcommand with an awaited twin, at the start of a line: not in a
    # block, where ``await`` could not go
    calls = tuple(f"{LINE_CALL}'runpod', '{n} " for n, c in SUBCOMMANDS.items() if c.awaited)
    return [
        AWAITED_LINE + line[len(LINE_CALL) :] if line.startswith(calls) else line for line in lines
    ]


def install(shell: Any) -> bool:
    """Make ``%%runpod_job`` cells await in ``shell`` when it supports it; whether it did."""
    uninstall(shell)
    if not supported(shell):
        return False
    shell.input_transformers_post.append(await_job_cells)
    return True


def uninstall(shell: Any) -> None:
    transformers: list[Any] = getattr(shell, "input_transformers_post", [])
    transformers[:] = [t for t in transformers if t is not await_job_cells]


async def run_cell_magic(name: str, line: str, cell: str) -> None:
    """What an awaited ``%%runpod_job`` or ``%%runpod_chat`` cell runs."""
    from .magics.chat import run_chat_async
    from .magics.common import parse_line
    from .magics.job import run_job_async

    magics = _magics()
    if magics is None:  # unloaded meanwhile: plain IPython
        get_ipython().run_cell_magic(name, line, cell)
        return
    line = get_ipython().var_expand(line, 1)  # $name, {expr}: in the cell's frame, one up
    if name == "runpod_job":
        await run_job_async(magics, parse_line(magics.runpod_job, line), cell)
    else:  # the other of MAGIC_CALLS
        await run_chat_async(magics, parse_line(magics.runpod_chat, line), cell)


async def run_line_magic(name: str, line: str) -> None:
    """What an awaited ``%runpod`` line runs: the subcommand's ``awaited`` twin."""
    from .magics.commands import SUBCOMMANDS
    from .magics.common import parse_line

    magics = _magics()
    subcommand, _, rest = line.strip().partition(" ")
    command = SUBCOMMANDS.get(subcommand)
    if name != "runpod" or magics is None or command is None or command.awaited is None:
        get_ipython().run_line_magic(name, line)
        return
    rest = get_ipython().var_expand(rest, 1)  # as IPython expands a line: in the cell's frame
    await command.awaited(magics, parse_line(command.handler, rest))


def _magics() -> RunpodMagics | None:
    from .magics import RunpodMagics

    shell = get_ipython()
    if shell is None:
        return None
    found = shell.magics_manager.registry.get("RunpodMagics")
    return found if isinstance(found, RunpodMagics) else None
