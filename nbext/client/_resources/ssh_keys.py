"""``client.ssh_keys``: the account's SSH public keys, given to pods started with SSH.

The service only replaces the whole list (``PUT``): ``add`` and ``remove`` read, change and
write it back. A private key pasted by mistake is refused without being quoted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._calls import Answer, Call
from .._errors import excerpt
from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .rest import V2
from .wire import _json, _unreadable, refused

PUBLIC_KEY = re.compile(r"(ssh|ecdsa|sk)-\S+ \S+([ \t][^\n\r]*)?")
"""The service's pattern for one key (``UpdateSshKeysRequest.keys``)."""
PATH = ["account", "ssh-keys"]


def checked(operation: str, keys: Sequence[str]) -> list[str]:
    """The keys as the service will keep them: trimmed, each an authorized_keys line."""
    if isinstance(keys, str) or not isinstance(keys, Sequence):
        raise refused(operation, f"keys must be a list of strings, got {type(keys).__name__}")
    out = []
    for i, key in enumerate(keys):
        if not isinstance(key, str):
            raise refused(operation, f"key {i} must be a string, got {type(key).__name__}")
        line = key.strip()
        if "PRIVATE KEY" in line:
            raise refused(
                operation,
                f"key {i} is a private key (not shown); give the public one, e.g. the "
                "contents of ~/.ssh/id_ed25519.pub",
            )
        if PUBLIC_KEY.fullmatch(line) is None:
            raise refused(
                operation,
                f"key {i} is not a public key line '<type> <base64-key> [comment]' "
                f"(e.g. ~/.ssh/id_ed25519.pub): {excerpt(line, 40)!r}",
            )
        out.append(line)
    return out


def _keys(call: Call, response: Answer) -> list[str]:
    data = _json(call, response)
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise _unreadable(call, response, "no list of strings under 'keys'")
    return keys


def _get(ctx: Context, api: V2, operation: str) -> Flow[list[str]]:
    call = api.call("GET", PATH, operation, "the account's SSH keys")
    return (yield from api.fetch(ctx, call, _keys))


def list_keys(ctx: Context, api: V2) -> Flow[list[str]]:
    """The account's SSH public keys."""
    return (yield from _get(ctx, api, "ssh_keys.list"))


def _put(ctx: Context, api: V2, operation: str, keys: list[str]) -> Flow[list[str]]:
    call = api.call("PUT", PATH, operation, "the account's SSH keys", body={"keys": keys})
    return (yield from api.fetch(ctx, call, _keys))


def set_keys(ctx: Context, api: V2, keys: Sequence[str]) -> Flow[list[str]]:
    """Replace the account's keys with ``keys`` (``[]`` removes them all); the new list.

    Pods created afterwards with SSH receive them; running pods keep the keys they have.
    """
    wanted = checked("ssh_keys.set", keys)
    return (yield from _put(ctx, api, "ssh_keys.set", wanted))


def add(ctx: Context, api: V2, key: str) -> Flow[list[str]]:
    """Add one key (a key already there is not added twice); the new list."""
    (line,) = checked("ssh_keys.add", [key])
    current = yield from _get(ctx, api, "ssh_keys.add")
    if line in current:
        return current
    return (yield from _put(ctx, api, "ssh_keys.add", [*current, line]))


def remove(ctx: Context, api: V2, key: str) -> Flow[list[str]]:
    """Remove one key (given as listed, or with another comment); the new list."""
    (line,) = checked("ssh_keys.remove", [key])
    current = yield from _get(ctx, api, "ssh_keys.remove")
    material = line.split()[:2]
    kept = [k for k in current if k.split()[:2] != material]
    if kept == current:
        return current
    return (yield from _put(ctx, api, "ssh_keys.remove", kept))


class SshKeys(Resource):
    list = blocking(list_keys)
    set = blocking(set_keys)
    add = blocking(add)
    remove = blocking(remove)


class AsyncSshKeys(Resource):
    list = awaiting(list_keys)
    set = awaiting(set_keys)
    add = awaiting(add)
    remove = awaiting(remove)
