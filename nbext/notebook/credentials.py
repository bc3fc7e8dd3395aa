"""The API key on disk: ``~/.runpod/config.toml``, as the service's ``runpod`` tools keep
it; written safely, never over a file that is not TOML unless told
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from nbext.client import DEFAULT_CONFIG_FILE, DEFAULT_PROFILE

from .errors import InvalidArgument

KEY_SHAPE = re.compile(r"[A-Za-z0-9_\-]{20,256}")
"""What a key can look like (``rpa_`` and 40 letters and digits, or 32 of them); spaces
or quotes are a paste gone wrong, not a key."""


class ConfigUnreadable(InvalidArgument):
    """The config file exists but is not TOML: it is left as it is."""


def config_path(config_file: str | os.PathLike[str] | None) -> Path:
    """The config file a connection reads (``~/.runpod/config.toml`` by default)."""
    return Path(config_file) if config_file is not None else DEFAULT_CONFIG_FILE.expanduser()


def check_key_text(text: str) -> str:
    """``text`` as a key (surrounding white space removed), or a one-line refusal."""
    key = text.strip()
    if not key:
        raise InvalidArgument("no key was given; nothing was written")
    if not KEY_SHAPE.fullmatch(key):
        raise InvalidArgument(
            f"that does not look like an API key ({len(key)} characters; a key is "
            "letters, digits, '_' and '-' only, such as rpa_…); nothing was written"
        )
    return key


def _document(path: Path, *, replace_unreadable: bool) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        if replace_unreadable:
            return tomlkit.document()
        raise ConfigUnreadable(
            f"{path} is not valid TOML ({exc}); it was left as it is. Fix it, or run "
            "%runpod login --replace-config to write a new one"
        ) from None


def write_key(path: Path, key: str, *, replace_unreadable: bool = False) -> None:
    """Set the default profile's ``api_key`` in ``path``, keeping the rest; the file ends
    up 0600. Raises ``ConfigUnreadable`` (nothing written) or ``OSError``."""
    document = _document(path, replace_unreadable=replace_unreadable)
    table = document.get(DEFAULT_PROFILE)
    if not isinstance(table, dict):
        table = document[DEFAULT_PROFILE] = tomlkit.table()
    table["api_key"] = key
    _replace(path, tomlkit.dumps(document))


def remove_key(path: Path) -> bool:
    """Take the default profile's ``api_key`` out of ``path``; False if it held none. A
    profile, or a file, left empty goes too."""
    document = _document(path, replace_unreadable=False)
    table = document.get(DEFAULT_PROFILE)
    if not isinstance(table, dict) or "api_key" not in table:
        return False
    del table["api_key"]
    if not table:
        del document[DEFAULT_PROFILE]
    text = tomlkit.dumps(document)
    if text.strip():
        _replace(path, text)
    else:
        path.unlink()
    return True


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step, readable by its owner only."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp makes it 0600
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
