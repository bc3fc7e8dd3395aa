"""Templates in REST v2's terms: a v2 body's rules, and the template as v2 shows it.

A template is one record whichever interface made it. What v1's record has no field for
(``startSsh``, ``startJupyter``, ``allowedCudaVersions``) is kept beside it as facets,
written in the same change; a template made through v1 shows v2's defaults for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbext.models import Template, TemplateCreateInput, TemplateUpdateInput

from .container import V1_NAMES, persistent, to_v1, to_v2
from .records import atomic
from .refusals import Forbidden, Unprocessable, validated

if TYPE_CHECKING:
    from .facade import Management

V2_ONLY = ("startSsh", "startJupyter", "allowedCudaVersions")
"""Fields v1's template has no place for (kept as facets)."""
DEFAULTS = {"startSsh": True, "startJupyter": True, "allowedCudaVersions": []}
"""What v2 shows for a template made through v1: the console's defaults."""


class V2Templates:
    """The account's templates, created, read and changed with v2's bodies and answers."""

    def __init__(self, m: Management) -> None:
        self.m = m

    def view(self, t: Template) -> dict[str, Any]:
        facets = self.m.v2.facets.get("template", t.id or "")
        out: dict[str, Any] = {"id": t.id, "name": t.name or ""}
        out.update(
            to_v2(
                t.image_name,
                t.docker_start_cmd,
                t.container_disk_in_gb,
                t.env,
                t.ports,
                t.container_registry_auth_id,
            )
        )
        out["mounts"] = persistent(t.volume_in_gb, t.volume_mount_path)
        out["serverless"] = bool(t.is_serverless)
        out["public"] = bool(t.is_public)
        out["category"] = str(t.category or "NVIDIA")
        for name in V2_ONLY:
            out[name] = facets.get(name, DEFAULTS[name])
        return out

    def listing(self) -> list[dict[str, Any]]:
        return [self.view(e.view) for e in self.m.templates.book]

    def official(self) -> list[dict[str, Any]]:
        """The emulator's official templates, as the public catalog shows them."""
        return [self.view(e.view) | {"registry": None} for e in self.m.templates.official.values()]

    def get(self, template_id: str) -> dict[str, Any]:
        return self.view(self.m.templates.get(template_id))

    def writable(self, template_id: str) -> Template:
        """The template, which the caller may change: 404, or 403 for an official one."""
        template = self.m.templates.get(template_id)
        if template_id in self.m.templates.official:
            raise Forbidden(
                f"template {template_id!r} is an official template and cannot be changed or "
                "deleted; create your own from it instead"
            )
        return template

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        v1 = {
            "name": data["name"],
            "isPublic": data.get("public", False),
            "isServerless": data.get("serverless", False),
            "category": data.get("category", "NVIDIA"),
            **to_v1(data, defaults=True),
        }
        with atomic():  # the template and its v2 fields, or neither
            made = self.m.templates.create(validated(TemplateCreateInput, v1, V1_NAMES))
            v2_only = {k: data.get(k, DEFAULTS[k]) for k in V2_ONLY}
            self.m.v2.facets.set("template", made.id or "", **v2_only)
        return self.view(made)

    def update(self, template_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """Change what ``data`` names; ``serverless`` and ``category`` are fixed."""
        current = self.writable(template_id)
        fixed = {"serverless": current.is_serverless, "category": current.category}
        for name, value in fixed.items():
            if name in data and data[name] != (str(value) if name == "category" else bool(value)):
                message = f"{name}: is fixed when the template is created (it is {value!r})"
                raise Unprocessable(message, [message])
        v1 = to_v1(data, defaults=False)
        if "name" in data:
            v1["name"] = data["name"]
        if "public" in data:
            v1["isPublic"] = data["public"]
        with atomic():  # the template and its v2 fields, or neither
            parsed = validated(TemplateUpdateInput, v1, V1_NAMES)
            updated = self.m.templates.update(template_id, parsed)
            given = {k: data[k] for k in V2_ONLY if k in data}
            if given:
                self.m.v2.facets.set("template", template_id, **given)
        return self.view(updated)

    def delete(self, template_id: str) -> None:
        self.writable(template_id)
        with atomic():
            self.m.templates.delete(template_id)
            self.m.v2.facets.drop("template", template_id)
