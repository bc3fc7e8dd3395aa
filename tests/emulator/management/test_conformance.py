"""Conformance with the service's own OpenAPI reference, by schemathesis.

Cases are generated from the *reference* document (not the emulator's), for every one of
its 37 operations, in positive mode (data the reference says is valid) and negative mode
(data it says is not), a bounded number each, and sent to the emulator's app in process.
Every response must be no 5xx, carry a declared status code, and match the reference's
schema and content type for it; negative data must be refused.

Where the reference is wrong or silent, the case is kept and the exception is written
out below with its reason (``UNDECLARED``, ``RULES``); nothing is skipped silently.
Each path parameter is tried both random (mostly unknown: 404) and as the id of a real
record, so success responses are validated too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.core import NOT_SET
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.transport import Response
from schemathesis.generation.case import Case
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
)

from nbext.emulator import Emulator, FakeClock, create_app
from nbext.emulator.api.v1.docs import reference
from nbext.models.v1 import ContainerRegistryAuthCreateInput

pytestmark = pytest.mark.slow

KEY = "rpa_CONF0RMANCE0000000000000000000000000000"
AUTH = {"Authorization": f"Bearer {KEY}"}
EXAMPLES = 25
"""Generated cases per operation and mode: about 1 800 requests in all."""

SCHEMA = schemathesis.openapi.from_dict(reference())
OPERATIONS = {op.label: op for op in (r.ok() for r in SCHEMA.get_all_operations())}

UNDECLARED: dict[int, tuple[str, str]] = {
    401: (
        "*",
        "docs/behaviour.md#authentication: a missing or wrong key is 401 on every secured "
        "operation; the reference "
        "declares 401 on some operations only.",
    ),
    404: (
        "{",
        "docs/behaviour.md#error-bodies: an unknown id is 404; the reference declares 404 "
        "for GET of one record but "
        "only 400 ('Invalid ID') for update, delete, start, stop, reset and restart.",
    ),
    400: (
        "/billing/",
        "The billing operations declare only 200, yet a query the reference calls invalid "
        "(an unknown bucketSize, a malformed date) must be refused, with 400 as elsewhere.",
    ),
    200: (
        "/restart",
        "The reference declares no success status for POST /pods/{podId}/restart (only 400 "
        "and 401); it answers 200 like start, stop and reset.",
    ),
}
"""Status codes the emulator gives where the reference does not declare them:
(a fragment the operation's path must contain, why)."""

RULES: dict[str, str] = {
    "no template with id": "templateId must name a template (referential; the reference "
    "cannot say so)",
    "no network volume with id": "networkVolumeId(s) must name a volume",
    "no container registry auth with id": (
        "docs/behaviour.md#templates: containerRegistryAuthId must name an auth"
    ),
    "already exists": "seed: template names are unique; the reference: registry auth names too",
    "is a pod template": "docs/behaviour.md#endpoints: an endpoint needs a serverless template",
    "can only grow": "docs/behaviour.md#network-volumes: a volume's size only grows",
    "is locked": (
        "docs/behaviour.md#pods: a locked pod refuses stop and reset (and a resetting update)"
    ),
    "imageName is required unless templateId": "a pod needs an image from somewhere; the "
    "reference marks neither required",
    "names no image": "the template a pod names must give an image",
    "no data centre": "countryCodes must leave a data centre of dataCenterIds",
    "must name at least one data centre": "an empty dataCenterIds leaves nowhere to run",
    "the volume is in": "a pod runs where its network volume is",
    "must not exceed": "workersMin <= workersMax (the reference states no cross-field rule)",
    "must not be after endTime": "a billing period must not end before it starts",
    "must not be empty": "names, images and passwords must not be blank",
    "each port must be": "seed: each port is '<port_number>/<protocol>', http or tcp",
    "must be an absolute path": "seed: volumeMountPath is an absolute path",
    "Input should be greater than or equal to 0": "disk sizes, RAM and speeds are not negative "
    "(the reference sets no minimum)",
    "vcpuCount: Input should be greater than or equal to 1": "a pod has at least one vCPU",
    "executionTimeoutMs: Input should be": "the job interface's range, 5 s to 7 days, also "
    "bounds an endpoint's timeout (the reference sets none)",
    "dataCenterId: Input should be": "a volume's data centre must be a known one (the "
    "reference types it as a plain string)",
    "Input should be a valid string": "env values are strings (the reference writes "
    "'items: string' on an object, which JSON Schema ignores)",
    "official template": "the emulator's official templates are read-only",
    "is used by": "a template or registry auth in use cannot be deleted",
    "is attached to": "a network volume in use cannot be deleted",
    "not a field of a pod update": "an unknown field is refused by name, not ignored "
    "(the reference leaves a pod update's object open)",
}
"""Refusals (400) of data the reference calls valid, by a fragment of their message:
each a rule the emulator applies on top of the reference, and why."""


@dataclass
class World:
    emulator: Emulator
    app: Any
    ids: dict[str, str]


def make_world() -> World:
    """An emulator with one record of each kind, whose ids path parameters may take."""
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False, demo_images=True)
    m = emu.management
    auth = m.registry_auths.create(
        ContainerRegistryAuthCreateInput(name="conformance", username="u", password="p")
    )
    pod_template = m.templates.create({"name": "pods", "image": "img"})
    serverless = m.templates.create({"name": "workers", "image": "echo", "serverless": True})
    volume = m.volumes.create({"name": "v", "size": 10, "dataCenter": "EU-RO-1"})
    endpoint = m.endpoints.add(serverless.id, {})
    pod = m.pods.create({"name": "p", "image": "img", "gpu": {"id": "NVIDIA A40"}})
    ids = {
        "podId": pod.id,
        "endpointId": endpoint.id,
        "templateId": pod_template.id,
        "networkVolumeId": volume.id,
        "containerRegistryAuthId": auth.id or "",
    }
    return World(emu, create_app(emu), ids)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    made = make_world()
    yield made
    made.emulator.close()


def declared_status(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """The status is one the reference declares for the operation, or one of ``UNDECLARED``."""
    declared = set(case.operation.definition.raw["responses"])
    status = response.status_code
    if str(status) in declared:
        return True
    fragment, _why = UNDECLARED.get(status, ("", ""))
    if fragment and (fragment == "*" or fragment in case.operation.path):
        return True
    raise AssertionError(
        f"{case.operation.label} answered {status}, which the reference does not declare "
        f"({sorted(declared)}) and no exception explains: {response.text[:300]}"
    )


def positive_data_accepted(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Data the reference calls valid is accepted, or refused by one of ``RULES``."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return True
    message = str((response.json() or {}).get("message", ""))
    if any(fragment in message for fragment in RULES):
        return True
    raise AssertionError(
        f"{case.operation.label} refused data the reference calls valid, and no rule of "
        f"RULES explains it: {message!r}\nbody: {case.body!r}\nquery: {case.query!r}"
    )


def error_body_shape(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """docs/behaviour.md#error-bodies: every /v1 error is ``{"message": "..."}``."""
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("message"), str), response.text
        assert body["message"], "an empty error message"
    return True


CHECKS = [
    not_a_server_error,
    declared_status,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    positive_data_accepted,
    error_body_shape,
]


def negative_headers(case: Case) -> bool:
    component = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    return component is not None and component.mode.is_negative


def strategy(label: str, mode: GenerationMode, ids: dict[str, str]) -> st.SearchStrategy[Case]:
    operation = OPERATIONS[label]
    generated = operation.as_strategy(generation_mode=mode)
    names = [p.name for p in operation.path_parameters]
    if not names:
        return generated
    real = operation.as_strategy(generation_mode=mode, path_parameters={n: ids[n] for n in names})
    return st.one_of(generated, real)


def has_input(label: str) -> bool:
    operation = OPERATIONS[label]
    return bool(list(operation.iter_parameters())) or bool(operation.body)


CASES = [
    (label, mode)
    for label in sorted(OPERATIONS)
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    # GET /openapi.json and GET /docs take nothing, so there is nothing to make invalid.
    if mode is GenerationMode.POSITIVE or has_input(label)
]


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_generated_cases_conform(world: World, label: str, mode: GenerationMode) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[hypothesis.Phase.generate],
    )
    @given(case=strategy(label, mode, world.ids))
    def run(case: Case) -> None:
        # The generated bearer token is random; ours is sent instead, unless the case is
        # about a malformed header (negative headers), which must then reach the server.
        headers = {} if negative_headers(case) else AUTH
        if headers:
            with contextlib.suppress(KeyError):
                case.headers.pop("Authorization")
        response = case.call(app=world.app, headers=headers)
        case.validate_response(response, checks=CHECKS)

    run()


def happy_requests(ids: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """One valid request per operation, in an order where each finds what it needs."""
    template = ids["templateId"]
    t = {"name": "happy", "imageName": "echo", "isServerless": True}
    return [
        ("GET /openapi.json", {}),
        ("GET /docs", {}),
        ("POST /containerregistryauth", {"body": {"name": "a2", "username": "u", "password": "p"}}),
        ("GET /containerregistryauth", {}),
        ("GET /containerregistryauth/{containerRegistryAuthId}", {}),
        ("POST /templates", {"body": t}),
        ("GET /templates", {"query": {"includeRunpodTemplates": True}}),
        ("GET /templates/{templateId}", {}),
        ("PATCH /templates/{templateId}", {"body": {"readme": "r"}}),
        ("POST /templates/{templateId}/update", {"body": {"volumeInGb": 30}}),
        ("POST /networkvolumes", {"body": {"name": "v2", "size": 5, "dataCenterId": "EU-SE-1"}}),
        ("GET /networkvolumes", {}),
        ("GET /networkvolumes/{networkVolumeId}", {}),
        ("PATCH /networkvolumes/{networkVolumeId}", {"body": {"size": 20}}),
        ("POST /networkvolumes/{networkVolumeId}/update", {"body": {"name": "v3"}}),
        ("POST /endpoints", {"body": {"templateId": "demo-echo", "workersMin": 1}}),
        ("GET /endpoints", {"query": {"includeTemplate": True, "includeWorkers": True}}),
        ("GET /endpoints/{endpointId}", {"query": {"includeWorkers": True}}),
        ("PATCH /endpoints/{endpointId}", {"body": {"workersMax": 5}}),
        ("POST /endpoints/{endpointId}/update", {"body": {"idleTimeout": 9}}),
        ("POST /pods", {"body": {"imageName": "img", "templateId": template}}),
        ("GET /pods", {"query": {"includeMachine": True, "includeWorkers": True}}),
        (
            "GET /pods/{podId}",
            {
                "query": {
                    k: True
                    for k in (
                        "includeMachine",
                        "includeNetworkVolume",
                        "includeSavingsPlans",
                        "includeTemplate",
                    )
                }
            },
        ),
        ("PATCH /pods/{podId}", {"body": {"name": "renamed"}}),
        ("POST /pods/{podId}/update", {"body": {"imageName": "img2"}}),
        ("POST /pods/{podId}/stop", {}),
        ("POST /pods/{podId}/start", {}),
        ("POST /pods/{podId}/restart", {}),
        ("POST /pods/{podId}/reset", {}),
        ("GET /billing/pods", {"query": {"bucketSize": "hour", "grouping": "podId"}}),
        ("GET /billing/endpoints", {"query": {"grouping": "gpuTypeId"}}),
        ("GET /billing/networkvolumes", {"query": {"bucketSize": "month"}}),
        ("DELETE /pods/{podId}", {}),
        ("DELETE /endpoints/{endpointId}", {}),
        ("DELETE /templates/{templateId}", {}),
        ("DELETE /networkvolumes/{networkVolumeId}", {}),
        ("DELETE /containerregistryauth/{containerRegistryAuthId}", {}),
    ]


def test_one_valid_request_per_operation_succeeds_and_conforms() -> None:
    """Random ids rarely exist, so each operation's success answer is also checked here."""
    world = make_world()
    try:
        requests = happy_requests(world.ids)
        assert sorted(label for label, _ in requests) == sorted(OPERATIONS)
        for label, request in requests:
            operation = OPERATIONS[label]
            names = [p.name for p in operation.path_parameters]
            case = operation.Case(
                path_parameters={n: world.ids[n] for n in names},
                query=request.get("query"),
                body=request.get("body", NOT_SET),
                media_type="application/json" if operation.body else None,
            )
            response = case.call(app=world.app, headers=AUTH)
            assert 200 <= response.status_code < 300, f"{label}: {response.text}"
            case.validate_response(response, checks=CHECKS)
    finally:
        world.emulator.close()


def test_every_operation_is_tested() -> None:
    assert len(OPERATIONS) == 37


def test_the_checks_catch_a_departure(world: World) -> None:
    """The custom checks fail on what they exist to catch (a test that cannot fail is none)."""
    op = OPERATIONS["POST /pods/{podId}/start"]
    case = op.Case(path_parameters={"podId": world.ids["podId"]})
    response = case.call(app=world.app, headers=AUTH)
    bad = Response(
        status_code=418,
        headers=response.headers,
        content=b'{"message": "x"}',
        request=response.request,
        elapsed=0.0,
        verify=True,
    )
    with pytest.raises(AssertionError, match="does not declare"):
        declared_status(None, bad, case)  # type: ignore[arg-type]
    not_an_error = Response(
        status_code=400,
        headers={"content-type": ["application/json"]},
        content=b'{"detail": "x"}',
        request=response.request,
        elapsed=0.0,
        verify=True,
    )
    with pytest.raises(AssertionError):
        error_body_shape(None, not_an_error, case)  # type: ignore[arg-type]
