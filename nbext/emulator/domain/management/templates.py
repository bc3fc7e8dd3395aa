"""Templates: the service's defaults, unique names, and the endpoints that run them.

The defaults and naming rules are docs/behaviour.md#templates.

The emulator ships one official template (``isRunpod``) per demo image, so an endpoint
can be created over ``/v1`` with nothing else set up; they are read-only. A listing
shows the account's own templates not bound to an endpoint unless its include flags
ask for more; a template asked for by id is found whatever the flags say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbext.models import (
    Template,
    TemplateCategory,
    TemplateCreateInput,
    TemplateIncludes,
    TemplateUpdateInput,
)

from ..errors import InvalidInput, NotFound
from ..images import DEMO_IMAGES
from .records import Book, atomic, new_id, wire

if TYPE_CHECKING:
    from .facade import Management


@dataclass
class TemplateEntry:
    view: Template
    deployed_for: str | None = None
    """The endpoint ``Emulator.deploy`` made this template for; it goes when that does."""

    def record(self) -> dict[str, Any]:
        return {"id": self.view.id, "view": wire(self.view), "deployedFor": self.deployed_for}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TemplateEntry:
        return cls(Template.model_validate(record["view"]), record.get("deployedFor"))


def official_templates() -> dict[str, TemplateEntry]:
    """One read-only serverless template per demo image (ids ``demo-echo``, ...)."""
    entries = {}
    for image in DEMO_IMAGES:
        view = Template(
            id=f"demo-{image}",
            name=f"nbext demo: {image}",
            image_name=image,
            category=TemplateCategory.CPU,
            container_disk_in_gb=5,
            volume_in_gb=0,
            volume_mount_path="/workspace",
            docker_entrypoint=[],
            docker_start_cmd=[],
            env={},
            ports=[],
            readme=f"The emulator's demo image `{image}`.",
            is_public=True,
            is_serverless=True,
            is_runpod=True,
            earned=0.0,
            runtime_in_min=0,
        )
        entries[f"demo-{image}"] = TemplateEntry(view)
    return entries


class Templates:
    """The account's templates and the official ones."""

    def __init__(self, m: Management) -> None:
        self.m = m
        self.book: Book[TemplateEntry] = Book(
            m.store, "template", TemplateEntry.record, TemplateEntry.from_record
        )
        self.official = official_templates()

    # ---- lookups -------------------------------------------------------------------------

    def entry(self, template_id: str) -> TemplateEntry:
        found = self.book.get(template_id) or self.official.get(template_id)
        if found is None:
            raise NotFound(f"template {template_id!r} not found")
        return found

    def get(self, template_id: str) -> Template:
        return self.entry(template_id).view

    def require(self, template_id: str, field: str) -> TemplateEntry:
        """The template a request names in ``field``, or 400 saying it does not exist."""
        found = self.book.get(template_id) or self.official.get(template_id)
        if found is None:
            raise InvalidInput(f"{field}: no template with id {template_id!r}")
        return found

    def bound_endpoints(self, template_id: str) -> list[str]:
        return [e.view.id or "" for e in self.m.endpoints.book if e.view.template_id == template_id]

    def listing(self, includes: TemplateIncludes) -> list[Template]:
        own = [
            e.view
            for e in self.book
            if includes.include_endpoint_bound_templates
            or not self.bound_endpoints(e.view.id or "")
        ]
        official = (
            [e.view for e in self.official.values()] if includes.include_runpod_templates else []
        )
        # There are no other users in the emulator, so no community templates to add for
        # includePublicTemplates: the account's own public ones are listed anyway.
        return own + official

    # ---- changes -------------------------------------------------------------------------

    def _check_name(self, name: str, template_id: str | None = None) -> None:
        for entry in [*self.book, *self.official.values()]:
            if entry.view.name == name and entry.view.id != template_id:
                raise InvalidInput(
                    f"name: a template named {name!r} already exists (id {entry.view.id}); "
                    "template names must be unique"
                )

    def _writable(self, template_id: str) -> TemplateEntry:
        if template_id in self.official:
            raise InvalidInput(
                f"template {template_id!r} is an official template and cannot be changed or "
                "deleted; create your own from it instead"
            )
        return self.entry(template_id)

    def unique_name(self, base: str) -> str:
        """``base``, or ``base (2)``, ... : a name no template has yet."""
        taken = {e.view.name for e in [*self.book, *self.official.values()]}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base} ({n})"
        return name

    def create(self, body: TemplateCreateInput, *, deployed_for: str | None = None) -> Template:
        self._check_name(body.name)
        auth_id = self.m.registry_auths.require(
            body.container_registry_auth_id, "containerRegistryAuthId"
        )
        view = Template(
            id=new_id(10),
            name=body.name,
            image_name=body.image_name,
            category=body.category,
            container_disk_in_gb=body.container_disk_in_gb,
            volume_in_gb=body.volume_in_gb,
            volume_mount_path=body.volume_mount_path,
            container_registry_auth_id=auth_id,
            docker_entrypoint=list(body.docker_entrypoint),
            docker_start_cmd=list(body.docker_start_cmd),
            env=dict(body.env),
            ports=list(body.ports),
            readme=body.readme,
            is_public=body.is_public,
            is_serverless=body.is_serverless,
            is_runpod=False,
            earned=0.0,
            runtime_in_min=0,
        )
        assert view.id is not None
        self.book.save(view.id, TemplateEntry(view, deployed_for))
        return view

    def update(self, template_id: str, body: TemplateUpdateInput) -> Template:
        """Change what ``body`` names; checks everything before changing anything."""
        entry = self._writable(template_id)
        view = entry.view
        given = body.model_fields_set
        if "name" in given and body.name is not None:
            self._check_name(body.name, template_id)
        auth_id = view.container_registry_auth_id
        if "container_registry_auth_id" in given:
            auth_id = self.m.registry_auths.require(
                body.container_registry_auth_id, "containerRegistryAuthId"
            )
        old_image, old_env = view.image_name, dict(view.env or {})
        with atomic():  # the template and the endpoints running it, or none of them
            for name in given:
                value = getattr(body, name)
                if name in Template.model_fields and value is not None:
                    setattr(view, name, value)
            view.container_registry_auth_id = auth_id
            self.book.save(template_id, entry)
            if view.image_name != old_image or (view.env or {}) != old_env:
                self.m.endpoints.template_changed(template_id)
        return entry.view

    def delete(self, template_id: str) -> None:
        self._writable(template_id)
        bound = self.bound_endpoints(template_id)
        if bound:
            raise InvalidInput(
                f"template {template_id!r} is used by endpoint(s) {', '.join(bound)}; delete "
                "them or move them to another template first"
            )
        self.book.drop(template_id)

    def uses_auth(self, auth_id: str) -> list[str]:
        return [e.view.id or "" for e in self.book if e.view.container_registry_auth_id == auth_id]
