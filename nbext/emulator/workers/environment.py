"""What a worker process's environment holds: what a worker on the service gets, no more
(none of the user's secrets the emulator holds; docs/workers.md#the-workers-environment).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

PASSED = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    }
)
"""Variables of the emulator's environment a worker gets, when set: what it needs to run
(find programs, its home, its virtualenv and imports) and to reach the network as the
user's machine does (proxies, the CA bundle)."""
PASSED_PREFIXES = ("LC_",)
"""The locale's variables (``LC_ALL``, ``LC_CTYPE``...), with ``LANG``."""


def passed(name: str) -> bool:
    """Whether the emulator's variable ``name`` reaches its workers."""
    return name in PASSED or name.startswith(PASSED_PREFIXES)


def named_variables(
    specs: Iterable[str], environ: Mapping[str, str], option: str
) -> dict[str, str]:
    """``NAME=VALUE`` and ``NAME`` options (``option``: how the user wrote them, for the
    error) as variables for a worker's endpoint ``env``. ``NAME`` alone copies the
    variable from ``environ``, so a secret a worker needs is not typed on a command line
    (``ps``) or into a notebook. ValueError, one line, for a bad name or an unset one."""
    variables: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not name.isidentifier() or not name.isascii():
            raise ValueError(f"{option} {spec!r}: {name!r} is not a variable name")
        if not sep:
            if name not in environ:
                raise ValueError(f"{option} {name}: {name} is not set in this environment")
            value = environ[name]
        variables[name] = value
    return variables


def virtualenv_of(python: str) -> Path | None:
    """The virtualenv whose interpreter ``python`` is (None: not one). The path is not
    resolved: a virtualenv's ``bin/python`` links to the base interpreter, and what marks
    the virtualenv is the ``pyvenv.cfg`` beside its ``bin``."""
    found = shutil.which(python) or python
    root = Path(os.path.abspath(found)).parent.parent
    return root if (root / "pyvenv.cfg").is_file() else None


def worker_environment(
    base: Mapping[str, str],
    python: str,
    endpoint_env: Mapping[str, str],
    protocol: Mapping[str, str],
) -> dict[str, str]:
    """A worker's environment: ``base``'s ``PASSED`` variables, its interpreter's
    virtualenv (``VIRTUAL_ENV``, its ``bin`` first on ``PATH``, as activating it would
    do), the endpoint's ``env``, then the protocol's variables, which nothing overrides."""
    env = {name: value for name, value in base.items() if passed(name)}
    venv = virtualenv_of(python)
    if venv is None:
        env.pop("VIRTUAL_ENV", None)  # the emulator's own is not the worker's
    else:
        env["VIRTUAL_ENV"] = str(venv)
        bin_dir = str(venv / "bin")
        path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bin_dir]
        env["PATH"] = os.pathsep.join([bin_dir, *path])
    return {**env, **endpoint_env, **protocol}
