"""Ids shaped like the service's: lowercase letters and digits, drawn unguessably, one
OS draw per id since ids are on the job path (docs/architecture.md#job-domain-modules)."""

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
