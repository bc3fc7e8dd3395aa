"""Container registry auths: the password is a ``SecretStr``, shown by no repr, log line
or validation error, and revealed only when the body is written out."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, SecretStr, field_serializer

from .._base import Named
from .._fields import InputModel, NonBlank


def _not_empty(value: SecretStr) -> SecretStr:
    if not value.get_secret_value():
        raise ValueError("must not be empty")
    return value


class ContainerRegistryAuth(Named):
    """A registry auth as the service returns it: no credentials, ever."""


class ContainerRegistryAuthCreateInput(InputModel):
    """Body of ``POST /containerregistryauth``: a unique name, a username and a password."""

    name: NonBlank
    username: NonBlank
    password: Annotated[SecretStr, AfterValidator(_not_empty)]

    @field_serializer("password", when_used="always")
    def _reveal(self, value: SecretStr) -> str:
        """The body sent to the service carries the password itself, not its mask."""
        return value.get_secret_value()
