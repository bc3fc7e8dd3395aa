"""The account's SSH public keys, which a pod started with ``startSsh`` receives as
``PUBLIC_KEY``; a ``PUT`` replaces the whole list."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput
from ..store_port import Store
from .records import Book

KEY_LIMIT = 50
"""More keys than this is a mistake (a file of keys pasted twice), not an account."""


class SshKeys:
    def __init__(self, store: Store) -> None:
        self.book: Book[dict[str, Any]] = Book(store, "ssh_keys", dict, dict)

    def listing(self) -> list[str]:
        found = self.book.get("account")
        return list(found["keys"]) if found else []

    def replace(self, keys: list[str]) -> list[str]:
        """The new list, duplicates removed in order; refused whole if too long."""
        unique = list(dict.fromkeys(k.strip() for k in keys))
        if len(unique) > KEY_LIMIT:
            raise InvalidInput(f"keys: at most {KEY_LIMIT} keys, got {len(unique)}")
        self.book.save("account", {"id": "account", "keys": unique})
        return unique
