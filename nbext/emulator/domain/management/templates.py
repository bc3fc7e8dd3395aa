"""Templates in REST v2's shape: a v2 body's rules, unique names, the endpoints that run
them (docs/behaviour.md#templates, docs/architecture.md#management-areas)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, StrictBool, StrictStr

from nbext.models import TemplateCategory
from nbext.models._fields import AbsolutePath, DiskGb, Env, InputModel, NonBlank, Ports
from nbext.models.v2.convert import persistent
from nbext.models.v2.resources import TEMPLATES

from ..errors import InvalidInput, NotFound
from ..images import DEMOS
from ..store_port import Store
from .container import Container, split_args
from .records import Book, Served, atomic, new_id
from .refusals import Forbidden, refuse, validated
from .registry_auths import RegistryAuths

OFFICIAL_READONLY = (
    "template {id!r} is an official template and cannot be changed or deleted; create your "
    "own from it instead"
)

AS_GIVEN = ("name", "image", "disk", "env", "ports", "public", "start_ssh", "start_jupyter")
"""What an update sets on the record as the body gives it (when it gives it)."""


class PersistentInput(InputModel):
    size: DiskGb
    path: AbsolutePath = "/workspace"


class MountsInput(InputModel):
    persistent: PersistentInput | None = None


class TemplateInput(InputModel):
    """A v2 template body's fields and their rules; what is left out is not changed (an
    update) or takes the default (a create)."""

    name: NonBlank | None = None
    image: NonBlank | None = None
    args: StrictStr | None = None
    disk: DiskGb | None = None
    env: Env | None = None
    ports: Ports | None = None
    registry: StrictStr | None = None
    mounts: MountsInput | None = None
    public: StrictBool | None = None
    serverless: StrictBool | None = None
    category: TemplateCategory | None = None
    start_ssh: StrictBool | None = Field(default=None, alias="startSsh")
    start_jupyter: StrictBool | None = Field(default=None, alias="startJupyter")
    allowed_cuda_versions: list[StrictStr] | None = Field(default=None, alias="allowedCudaVersions")


@dataclass
class TemplateRecord(Container):
    """One template: v2's fields, then the emulator's own."""

    serverless: bool = False
    public: bool = False
    category: Any = "NVIDIA"
    """v1 let an update set it to anything (``TemplateUpdateInput`` keeps unknown fields)."""
    start_ssh: bool = True
    start_jupyter: bool = True
    allowed_cuda_versions: list[str] = field(default_factory=list)
    official: bool = False
    deployed_for: str | None = None
    """The endpoint this template was made for; it goes when that does."""

    def view(self) -> dict[str, Any]:
        """The template as ``/v2`` shows it."""
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "image": self.image,
            "args": self.args,
            "env": dict(self.env),
            "ports": list(self.ports),
            "registry": self.registry,
        }
        if self.disk:
            out["disk"] = self.disk
        out["mounts"] = persistent(self.volume_size, self.volume_path)
        out["serverless"] = bool(self.serverless)
        out["public"] = bool(self.public)
        out["category"] = str(self.category)
        out["startSsh"] = self.start_ssh
        out["startJupyter"] = self.start_jupyter
        out["allowedCudaVersions"] = list(self.allowed_cuda_versions)
        return out


class Templates(Served[TemplateRecord]):
    """The account's templates and the official ones."""

    ROW = TEMPLATES

    def __init__(self, store: Store, auths: RegistryAuths) -> None:
        self.auths = auths
        self.book: Book[TemplateRecord] = Book.of(store, "template", TemplateRecord)
        self.official = {  # one read-only serverless template per demo image
            f"demo-{image}": TemplateRecord(
                id=f"demo-{image}",
                name=f"nbext demo: {image}",
                image=image,
                category="CPU",
                disk=5,
                serverless=True,
                public=True,
                official=True,
            )
            for image, demo in DEMOS.items()
            if demo.type == "QUEUE"
        }
        self.bound: list[Callable[[str], list[str]]] = []
        """Which endpoints run a template, by id (``Endpoints`` registers it): one that
        runs is not deleted."""
        self.on_change: list[Callable[[str], None]] = []
        """Called with a template's id when its image or env changed (``Endpoints``: a new
        version of each endpoint running it)."""
        auths.users.append(
            lambda auth_id: [f"template {t.id}" for t in self.book if t.registry == auth_id]
        )

    # ---- lookups -------------------------------------------------------------------------

    def find(self, template_id: str) -> TemplateRecord | None:
        return self.book.get(template_id) or self.official.get(template_id)

    def get(self, template_id: str) -> TemplateRecord:
        found = self.find(template_id)
        if found is None:
            raise NotFound(f"template {template_id!r} not found")
        return found

    def require(self, template_id: str, field: str, *, serverless: bool = False) -> TemplateRecord:
        """The template a request names in ``field``, or 400 saying it does not exist (or,
        for an endpoint, ``serverless``, that it is a pod template)."""
        found = self.find(template_id)
        if found is None:
            raise InvalidInput(f"{field}: no template with id {template_id!r}")
        if serverless and not found.serverless:
            raise InvalidInput(
                f"{field}: template {template_id!r} is a pod template (isServerless false); "
                "an endpoint needs a serverless template"
            )
        return found

    def named(self, template_id: str, *, serverless: bool) -> TemplateRecord:
        """The template a v2 body names for an endpoint (``serverless``) or a pod: 404 if
        there is none, 422 if it is of the other kind."""
        found = self.find(template_id)
        if found is None:
            raise NotFound(f"templateId: no template with id {template_id!r}")
        if found.serverless != serverless:
            kind = "a pod template, not serverless" if serverless else "a serverless template"
            raise refuse("templateId", f"template {template_id!r} is {kind}")
        return found

    def writable(self, template_id: str) -> TemplateRecord:
        """The template, which the caller may change: 404, or 403 for an official one."""
        found = self.get(template_id)
        if found.official:
            raise Forbidden(OFFICIAL_READONLY.format(id=template_id))
        return found

    def bound_endpoints(self, template_id: str) -> list[str]:
        return [e for bound in self.bound for e in bound(template_id)]

    def own(self, *, endpoint_bound: bool = True) -> list[TemplateRecord]:
        """The account's templates; without those bound to an endpoint if not ``endpoint_bound``."""
        return [t for t in self.book if endpoint_bound or not self.bound_endpoints(t.id)]

    changeable = writable  # as ``api/v2/records.py`` asks

    def served(self, record: TemplateRecord) -> dict[str, Any]:
        return record.view()

    def unique_name(self, base: str) -> str:
        """``base``, or ``base (2)``, ... : a name no template has yet."""
        taken = {t.name for t in [*self.book, *self.official.values()]}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base} ({n})"
        return name

    # ---- changes -------------------------------------------------------------------------

    def _check_name(self, name: str, template_id: str | None = None) -> None:
        for t in [*self.book, *self.official.values()]:
            if t.name == name and t.id != template_id:
                raise InvalidInput(
                    f"name: a template named {name!r} already exists (id {t.id}); "
                    "template names must be unique"
                )

    def create(
        self,
        data: dict[str, Any],
        *,
        deployed_for: str | None = None,
    ) -> TemplateRecord:
        """A template from a v2 body (every rule checked first)."""
        args = split_args(data["args"]) if "args" in data else []
        given = validated(TemplateInput, data, {})
        if given.name is None:
            raise refuse("name", "is required")
        if given.image is None:
            raise refuse("image", "is required")
        self._check_name(given.name)
        registry = self.auths.require(given.registry, "containerRegistryAuthId")
        volume = given.mounts.persistent if given.mounts else None
        record = TemplateRecord(
            id=new_id(10),
            name=given.name,
            image=given.image,
            args=shlex.join(args),
            env=dict(given.env or {}),
            ports=list(given.ports or []),
            registry=registry,
            disk=50 if given.disk is None else given.disk,
            volume_size=volume.size if volume else 0,
            volume_path=volume.path if volume else "/workspace",
            serverless=bool(given.serverless),
            public=bool(given.public),
            category=str(given.category or TemplateCategory.NVIDIA),
            start_ssh=True if given.start_ssh is None else given.start_ssh,
            start_jupyter=True if given.start_jupyter is None else given.start_jupyter,
            allowed_cuda_versions=[str(v) for v in given.allowed_cuda_versions or []],
            deployed_for=deployed_for,
        )
        self.book.save(record.id, record)
        return record

    def update(self, template_id: str, data: dict[str, Any], **v1_only: Any) -> TemplateRecord:
        """Change what the v2 body ``data`` names, every check first; ``v1_only``: fields v1
        may change and v2 may not (a volume under 10 GB, ``category``, ``serverless``)."""
        t = self.writable(template_id)
        fixed = {"serverless": t.serverless, "category": t.category}
        for name, value in fixed.items():
            if name in data and data[name] != (str(value) if name == "category" else bool(value)):
                shown = TemplateCategory(value) if name == "category" else value
                raise refuse(name, f"is fixed when the template is created (it is {shown!r})")
        args = shlex.join(split_args(data["args"])) if "args" in data else t.args
        given = validated(TemplateInput, data, {})
        if given.name is not None:
            self._check_name(given.name, template_id)
        registry = t.registry
        if "registry" in data:
            registry = self.auths.require(given.registry, "containerRegistryAuthId")
        old_image, old_env = t.image, dict(t.env)
        with atomic():  # the template and the endpoints running it, or none of them
            t.args = args
            t.registry = registry
            for name in AS_GIVEN:
                value = getattr(given, name)
                if value is not None:
                    setattr(t, name, value)
            if given.allowed_cuda_versions is not None:
                t.allowed_cuda_versions = [str(v) for v in given.allowed_cuda_versions]
            if given.mounts is not None:
                volume = given.mounts.persistent
                t.volume_size = volume.size if volume else 0
                if volume is not None:
                    t.volume_path = volume.path
            for name, value in v1_only.items():
                setattr(t, name, value)
            self.book.save(template_id, t)
            if t.image != old_image or t.env != old_env:
                for changed in self.on_change:
                    changed(template_id)
        return t

    def delete(self, template_id: str) -> None:
        self.writable(template_id)
        bound = self.bound_endpoints(template_id)
        if bound:
            raise InvalidInput(
                f"template {template_id!r} is used by endpoint(s) {', '.join(bound)}; delete "
                "them or move them to another template first"
            )
        self.book.drop(template_id)
