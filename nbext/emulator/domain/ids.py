"""Ids shaped like the service's: lowercase letters and digits, drawn unguessably.

One draw from the OS's random source per id, spelled out in base 36, rather than one
draw per character: every job that ends adds a billing record with a new id, so this is
on the job path, and a system call per character cost more than the rest of the record.
"""

from __future__ import annotations

import secrets

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_id(length: int = 14) -> str:
    """``length`` characters of ``ALPHABET``, each equally likely (``secrets``)."""
    number = secrets.randbelow(len(ALPHABET) ** length)
    chars = []
    for _ in range(length):
        number, digit = divmod(number, len(ALPHABET))
        chars.append(ALPHABET[digit])
    return "".join(chars)
