"""``%runpod login`` and ``%runpod logout``: give the kernel a key without writing it down
in the notebook (docs/behaviour.md#the-key-in-a-notebook)."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING

from IPython.core.error import StdinNotImplementedError, UsageError

from nbext.client import ConnectionError, NbextError, Unauthorized, mask

from ..credentials import ConfigUnreadable, check_key_text, remove_key, write_key
from ..errors import InvalidArgument, one_line
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics

if TYPE_CHECKING:
    import argparse


PROMPT = "RunPod API key (input hidden): "


def ask_key() -> str:
    """The key, typed into a masked field; a one-line error where none can be shown."""
    try:
        return getpass.getpass(PROMPT)
    except (StdinNotImplementedError, EOFError, OSError):
        raise UsageError(
            "this front end cannot ask for input (a headless run?); set RUNPOD_API_KEY "
            "in the kernel's environment instead"
        ) from None


@subcommand("login", "ask for your API key (hidden), check it, save it for nbext and runpod")
@magic_arguments("runpod login")
@argument(
    "--replace-config",
    action="store_true",
    help="write a new config.toml even if the present one is not valid TOML",
)
def login(magics: Magics, args: argparse.Namespace) -> None:
    """Ask for the API key in a masked field, check it with the service, save it to
    ~/.runpod/config.toml (readable by you only; the service's runpod tools read it
    too) and connect this kernel to the cloud. The key is never shown or stored in the
    notebook; %runpod logout removes it."""
    connection = magics.connection
    try:
        key = check_key_text(ask_key())
    except InvalidArgument as exc:
        raise UsageError(str(exc)) from None
    masked = mask(key)
    try:
        endpoints = connection.check_key(key)
    except Unauthorized:
        raise UsageError(
            f"the service refused the key {masked} (401): check it in the console's API "
            "keys page; nothing was written"
        ) from None
    except ConnectionError as exc:
        raise UsageError(
            f"could not reach {connection.config.base_url} to check the key: "
            f"{one_line(connection.redact(str(exc)))}; nothing was written"
        ) from None
    except NbextError as exc:
        raise UsageError(
            f"checking the key failed: {one_line(connection.redact(str(exc)))}; nothing was written"
        ) from None
    path = connection.config_file
    try:
        write_key(path, key, replace_unreadable=args.replace_config)
    except ConfigUnreadable as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        saved = (
            f"could not write {path} ({exc.strerror or exc}); the key is kept in this "
            "kernel's memory for this session only"
        )
        source = "%runpod login (this session only)"
    else:
        saved = f"saved to {path} (readable by you only)"
        source = f"{path} (%runpod login)"
    with_endpoints = f"{endpoints} serverless endpoint{'s' * (endpoints != 1)}"
    print(f"key {masked} is valid for the account ({with_endpoints}); {saved}")
    try:
        service = connection.use_key(key, source)
    except NbextError as exc:
        raise UsageError(one_line(connection.redact(str(exc)))) from None
    print(f"nbext: {service.describe()}")


@subcommand("logout", "remove the key %runpod login saved, and go back to the local emulator")
@magic_arguments("runpod logout")
def logout(magics: Magics, args: argparse.Namespace) -> None:
    """Remove the API key from ~/.runpod/config.toml, forget it in this kernel, and
    switch to the local emulator."""
    connection = magics.connection
    path = connection.config_file
    try:
        removed = remove_key(path)
    except ConfigUnreadable as exc:
        raise UsageError(str(exc).replace("%runpod login --replace-config", "fix it")) from None
    except OSError as exc:
        raise UsageError(f"could not change {path}: {exc.strerror or exc}") from None
    connection.forget_key()
    said = f"removed the key from {path}" if removed else f"{path} held no key"
    left = connection.config
    if left.api_key is not None:
        said += (
            f"; {left.key_source} still has key {left.masked_key}, which %runpod connect "
            "cloud would use"
        )
    print(f"{said}; this kernel now uses the local emulator")
