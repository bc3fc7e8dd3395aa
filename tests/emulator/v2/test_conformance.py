"""Conformance of ``/v2`` management with the service's own v2 OpenAPI, by schemathesis.

Cases are generated from the reference (not the emulator's description) for every
operation, in positive and negative mode, a bounded number each, and sent to the
emulator's app in process. Every answer must be no 5xx, carry a status the reference
declares, and match its schema and content type; every error is a problem document.
Path parameters are tried random (mostly 404) and as the id of a real record, so
success answers are validated too. ``NBEXT_V2_EXAMPLES`` raises the count for a long run.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.core.transport import Response
from schemathesis.generation.case import Case
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from nbext.emulator import Emulator, FakeClock, create_app
from nbext.emulator.api.v2.contract import reference

from ..management.test_conformance import negative_headers

pytestmark = pytest.mark.slow

KEY = "rpa_V2C0NF0RMANCE000000000000000000000000000"
AUTH = {"Authorization": f"Bearer {KEY}"}
EXAMPLES = int(os.environ.get("NBEXT_V2_EXAMPLES", "6"))
"""Generated cases per operation and mode (53 operations x 2 modes)."""

SCHEMA = schemathesis.openapi.from_dict(reference())
OPERATIONS = {op.label: op for op in (r.ok() for r in SCHEMA.get_all_operations())}


@dataclass
class World:
    emulator: Emulator
    app: Any
    ids: dict[str, str]
    statuses: Counter[int] = field(default_factory=Counter)
    """Every generated request's status, written to ``NBEXT_V2_COUNTS`` if that is set."""


def make_world() -> World:
    """An emulator with one record of each kind, made through v2 itself."""
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False, demo_images=True)
    app = create_app(emu)
    with TestClient(app, headers=AUTH) as c:

        def made(path: str, body: dict[str, Any]) -> str:
            r = c.post(path, json=body)
            assert r.status_code == 201, r.text
            return str(r.json()["id"])

        template = made("/v2/templates", {"name": "pods", "image": "img"})
        pod = made("/v2/pods", {"name": "p", "image": "img", "gpu": {"id": "NVIDIA A40"}})
        endpoint = made(
            "/v2/serverless",
            {
                "name": "e",
                "type": "QUEUE",
                "image": "echo",
                "scaling": {"type": "QUEUE_DELAY", "queueDelay": 2},
                "workers": {"min": 1, "max": 2},
                "gpu": {"pools": ["AMPERE_48"]},
            },
        )
        r = c.post(f"/v2/{endpoint}/runsync", json={"input": {"x": 1}})
        assert r.status_code == 200, r.text
        workers = c.get(f"/v2/serverless/{endpoint}/workers").json()["workers"]
        volume = made("/v2/network-volumes", {"name": "v", "size": 10, "dataCenter": "EU-RO-1"})
        registry = made("/v2/registries", {"name": "r", "username": "u", "password": "p"})
        cluster = made(
            "/v2/clusters",
            {
                "name": "c",
                "type": "TRAINING",
                "image": "img",
                "compute": {"gpuTypeId": "NVIDIA H200", "gpuCountPerPod": 8, "podCount": 2},
            },
        )
        delegation = made(
            "/v2/registries/delegations",
            {"resource": "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment"},
        )
    ids = {
        "pod": pod,
        "endpoint": endpoint,
        "worker": workers[0]["id"],
        "template": template,
        "volume": volume,
        "registry": registry,
        "cluster": cluster,
        "delegation": delegation,
        "gpu": "NVIDIA A40",
        "cpu": "cpu3c",
        "datacenter": "EU-RO-1",
    }
    return World(emu, app, ids)


def real_ids(operation: Any, ids: dict[str, str]) -> dict[str, str]:
    """A real id for each path parameter of ``operation``."""
    path = operation.path
    parts = [*path.split("/"), ""]
    kind = parts[2]
    by_segment = {
        "pods": "pod",
        "serverless": "endpoint",
        "templates": "template",
        "network-volumes": "volume",
        "registries": "delegation" if "/delegations/" in path else "registry",
        "clusters": "cluster",
        "catalog": {"gpus": "gpu", "cpus": "cpu", "datacenters": "datacenter"}.get(parts[3], ""),
    }
    out = {}
    for p in operation.path_parameters:
        out[p.name] = ids["worker"] if p.name == "workerId" else ids[str(by_segment[kind])]
    return out


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    made = make_world()
    yield made
    made.emulator.close()
    report = os.environ.get("NBEXT_V2_COUNTS")
    if report:
        Path(report).write_text(json.dumps(dict(sorted(made.statuses.items()))))


def problem_body(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Every error is an RFC 9457 problem document whose status is the response's."""
    if response.status_code >= 400:
        assert response.headers.get("content-type", [""])[0].startswith(
            "application/problem+json"
        ), response.headers
        body = response.json()
        assert body["status"] == response.status_code, body
        assert body["title"] and body["detail"], body
    return True


def schema_or_log_events(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """The body conforms to the reference's schema; a worker's log stream, event by event.

    The reference types the SSE log stream as one string and describes its events in
    prose; schemathesis 4 applies that ``string`` to each parsed event, which no stream
    could pass. So a stream's events are checked for what the prose says instead: an
    ``id``, and data that is one JSON log line (``ts``, ``source``, ``line``).
    """
    if not response.headers.get("content-type", [""])[0].startswith("text/event-stream"):
        return response_schema_conformance(ctx, response, case)
    events = [e for e in response.text.split("\n\n") if e.strip() and "data:" in e]
    for event in events:
        fields = dict(line.split(": ", 1) for line in event.splitlines() if ": " in line)
        assert fields.get("id"), event
        assert set(json.loads(fields["data"])) == {"ts", "source", "line"}, event
    return True


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    schema_or_log_events,
    problem_body,
]


def strategy(label: str, mode: GenerationMode, ids: dict[str, str]) -> st.SearchStrategy[Case]:
    operation = OPERATIONS[label]
    generated = operation.as_strategy(generation_mode=mode)
    if not operation.path_parameters:
        return generated
    real = operation.as_strategy(generation_mode=mode, path_parameters=real_ids(operation, ids))
    return st.one_of(generated, real)


CASES = [
    (label, mode)
    for label in sorted(OPERATIONS)
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
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
        # The generated bearer token is random, so ours is sent instead. A case whose
        # negative part is its headers (no or a malformed key) is sent as generated, and
        # must be refused; its path, query and body are then sent again with our key.
        if negative_headers(case):
            response = case.call(app=world.app, headers={})
            world.statuses[response.status_code] += 1
            case.validate_response(response, checks=CHECKS)
            case = OPERATIONS[label].Case(
                path_parameters=case.path_parameters,
                query=case.query,
                body=case.body,
                media_type=case.media_type,
            )
        with contextlib.suppress(KeyError):
            case.headers.pop("Authorization")
        response = case.call(app=world.app, headers=AUTH)
        world.statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    run()


def test_every_operation_of_the_reference_is_served(world: World) -> None:
    """No operation answers 404-for-the-path or 405: each one is routed."""
    assert len(OPERATIONS) == 53
    with TestClient(world.app, headers=AUTH) as c:
        for label, operation in OPERATIONS.items():
            path = operation.path
            for name, value in real_ids(operation, world.ids).items():
                path = path.replace("{" + name + "}", value)
            r = c.request(operation.method.upper(), path)
            assert r.status_code != 405, label
            if r.status_code == 404:
                assert "no operation at" not in r.text, label


def test_the_problem_check_fails_on_a_plain_error(world: World) -> None:
    op = OPERATIONS["GET /v2/pods/{id}"]
    case = op.Case(path_parameters={"id": "nope"})
    response = case.call(app=world.app, headers=AUTH)
    bad = Response(
        status_code=404,
        headers={"content-type": ["application/json"]},
        content=b'{"error": "x"}',
        request=response.request,
        elapsed=0.0,
        verify=True,
    )
    with pytest.raises(AssertionError):
        problem_body(None, bad, case)  # type: ignore[arg-type]
