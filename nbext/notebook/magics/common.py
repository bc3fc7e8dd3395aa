"""What every magic needs: user mistakes as one-line UsageErrors, names, the namespace.

A user's mistake (a typo in an endpoint, bad JSON, an option out of range) is shown as
IPython's ``UsageError``: one line, no traceback. Errors the service returns for a
command are mistakes of the same kind from the user's side (unknown endpoint, a job that
already ended), so ``usage_errors`` turns nbext's errors into that one line too.
"""

from __future__ import annotations

import contextlib
import keyword
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from nbext.client import NbextError

if TYPE_CHECKING:
    from . import RunpodMagics


def one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextlib.contextmanager
def usage_errors(what: str = "") -> Iterator[None]:
    """Re-raise nbext's errors (and ValueError from local checks) as one-line UsageErrors."""
    try:
        yield
    except UsageError:
        raise
    except (NbextError, ValueError, TypeError) as exc:
        prefix = f"{what}: " if what else ""
        raise UsageError(one_line(f"{prefix}{exc}")) from None


def check_name(name: str | None, option: str = "-o") -> str | None:
    """A variable name for ``-o NAME``, refused early if Python would refuse it."""
    if name is None:
        return None
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"{option} {name!r}: not a valid Python variable name")
    return name


def store(magics: RunpodMagics, name: str | None, value: Any) -> None:
    """Bind ``name`` in the user's namespace (``-o NAME``)."""
    if name is not None:
        magics.user_ns[name] = value


def positive(value: float | None, option: str) -> float | None:
    if value is not None and value <= 0:
        raise UsageError(f"{option} must be a number of seconds > 0, got {value:g}")
    return value
