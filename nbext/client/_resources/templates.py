"""``client.templates``: the container a pod or a serverless worker runs.

Arguments left ``None`` are left out, so the service applies its defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from nbext.models.v2 import Mounts, Template
from nbext.models.v2.resources import TEMPLATES as ROW

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import deleting, getting, listing, saved
from .rest import V2
from .wire import NOT_GIVEN, NotGiven, given

Category = Literal["NVIDIA", "AMD", "CPU"]
NESTED: dict[str, type[BaseModel]] = {"mounts": Mounts}


def create(
    ctx: Context,
    api: V2,
    *,
    name: str,
    image: str,
    args: str | None = None,
    disk: int | None = None,
    env: Mapping[str, str] | None = None,
    ports: Sequence[str] | None = None,
    registry: str | None = None,
    mounts: Mounts | Mapping[str, Any] | None = None,
    category: Category | str | None = None,
    public: bool | None = None,
    serverless: bool | None = None,
    start_ssh: bool | None = None,
    start_jupyter: bool | None = None,
    allowed_cuda_versions: Sequence[str] | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Template]:
    """Create a template; its ``name`` must be unique (a clash is BadRequest).

    ``serverless=True`` makes a template endpoints can run. ``args`` is the command's
    arguments as one string; ``ports`` entries look like ``"8888/http"``; ``mounts`` is
    ``{"persistent": {"size": GB, "path": "/workspace"}}``. ``extra_body`` carries fields
    (wire names) newer than this client.
    """
    return (yield from saved(ctx, api, ROW, given(locals()), extra_body, NESTED))


def update(
    ctx: Context,
    api: V2,
    template_id: str,
    *,
    name: str | NotGiven = NOT_GIVEN,
    image: str | NotGiven = NOT_GIVEN,
    args: str | NotGiven = NOT_GIVEN,
    disk: int | NotGiven = NOT_GIVEN,
    env: Mapping[str, str] | NotGiven = NOT_GIVEN,
    ports: Sequence[str] | NotGiven = NOT_GIVEN,
    registry: str | NotGiven | None = NOT_GIVEN,
    mounts: Mounts | Mapping[str, Any] | NotGiven = NOT_GIVEN,
    category: Category | str | NotGiven = NOT_GIVEN,
    public: bool | NotGiven = NOT_GIVEN,
    serverless: bool | NotGiven = NOT_GIVEN,
    start_ssh: bool | NotGiven = NOT_GIVEN,
    start_jupyter: bool | NotGiven = NOT_GIVEN,
    allowed_cuda_versions: Sequence[str] | NotGiven = NOT_GIVEN,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Template]:
    """Change the fields given; endpoints made from the template keep their own settings.
    Not re-sent after it may have reached the service."""
    fields = given(locals(), skip=["template_id"], update=True)
    return (yield from saved(ctx, api, ROW, fields, extra_body, NESTED, record_id=template_id))


list_all = listing(
    ROW, "Endpoints' ones included (the service's are ``client.catalog.templates()``)."
)


class Templates(Resource):
    create = blocking(create)
    list = blocking(list_all)
    get = blocking(getting(ROW))
    update = blocking(update)
    delete = blocking(deleting(ROW))


class AsyncTemplates(Resource):
    create = awaiting(create)
    list = awaiting(list_all)
    get = awaiting(getting(ROW))
    update = awaiting(update)
    delete = awaiting(deleting(ROW))
