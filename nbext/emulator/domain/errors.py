"""Domain errors: the HTTP layer maps each class to one status code; the domain knows none.
Every message says what was wrong and, where it helps, what to do instead."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error the emulator's domain raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    """The request is malformed or a value is out of range (HTTP 400)."""


class NotFound(DomainError):
    """Unknown endpoint or job, or a job removed by TTL, retention or purge (HTTP 404)."""


class Conflict(DomainError):
    """The job is not in a state the operation applies to (HTTP 409)."""


class TooLarge(DomainError):
    """The request body is over the interface's size limit (HTTP 413)."""


class RateLimited(DomainError):
    """Over the rate or concurrency limit (HTTP 429), with seconds to wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StoreFailed(DomainError):
    """The emulator could not write to its store; nothing was changed (HTTP 503)."""


class StoreFull(StoreFailed):
    """The store's disk is full; nothing was changed (HTTP 507)."""
