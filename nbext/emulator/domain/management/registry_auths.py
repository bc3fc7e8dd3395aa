"""Container registry auths: names unique, the password kept and never given back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nbext.models.v1 import ContainerRegistryAuth, ContainerRegistryAuthCreateInput
from nbext.models.v2.resources import REGISTRY_AUTHS

from ..errors import InvalidInput
from ..store_port import Store
from .records import Book, Served, new_cuid, wire
from .refusals import validated


@dataclass
class AuthEntry:
    id: str
    name: str
    username: str
    password: str = field(repr=False)

    def view(self) -> ContainerRegistryAuth:
        return ContainerRegistryAuth(id=self.id, name=self.name)


class RegistryAuths(Served[ContainerRegistryAuth]):
    ROW = REGISTRY_AUTHS

    def __init__(self, store: Store) -> None:
        self.book: Book[AuthEntry] = Book.of(store, "registry_auth", AuthEntry)
        self.users: list[Callable[[str], list[str]]] = []
        """Asked before a delete: each area whose records name an auth registers one,
        naming those that name it ("pod abc"); an auth in use is not deleted."""

    def get(self, auth_id: str) -> ContainerRegistryAuth:
        return self.book.need(auth_id, "container registry auth").view()

    def listing(self) -> list[ContainerRegistryAuth]:
        return [e.view() for e in self.book]

    listed = listing  # as ``api/v2/records.py`` asks: v1's auth, its id and name

    def served(self, record: ContainerRegistryAuth) -> dict[str, Any]:
        return wire(record)

    def require(self, auth_id: str | None, field: str) -> str | None:
        """The auth a request names in ``field`` (empty means none), or 400."""
        if not auth_id:
            return None
        if auth_id not in self.book:
            raise InvalidInput(
                f"{field}: no container registry auth with id {auth_id!r}; create one with "
                "POST /containerregistryauth first"
            )
        return auth_id

    def create(
        self, body: ContainerRegistryAuthCreateInput | dict[str, Any]
    ) -> ContainerRegistryAuth:
        """From v1's checked body, or v2's, checked here (a refusal is v2's 422)."""
        if isinstance(body, dict):
            body = validated(ContainerRegistryAuthCreateInput, body, {})
        for entry in self.book:
            if entry.name == body.name:
                raise InvalidInput(
                    f"name: a container registry auth named {body.name!r} already exists "
                    f"(id {entry.id}); names must be unique"
                )
        entry = AuthEntry(new_cuid(), body.name, body.username, body.password.get_secret_value())
        self.book.save(entry.id, entry)
        return entry.view()

    def delete(self, auth_id: str) -> None:
        self.get(auth_id)
        users = [user for named in self.users for user in named(auth_id)]
        if users:
            raise InvalidInput(
                f"container registry auth {auth_id!r} is used by {', '.join(users)}; "
                "change or delete those first"
            )
        self.book.drop(auth_id)
