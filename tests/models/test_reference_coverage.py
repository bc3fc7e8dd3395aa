"""Every schema of the service's OpenAPI reference has a model that drops nothing.

For each schema: every property is a field (under its wire name), nested objects map to
models that cover them too, every enum value of the reference is accepted, the
reference's required fields are required, and the create inputs' defaults are the
reference's. A property added to the reference without a field fails here.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

import nbext.models.v1 as m
from nbext.models import CudaVersion, GpuTypeId

REFERENCE = json.loads(
    (
        Path(__file__).resolve().parents[2] / "nbext/emulator/api/v1/reference.openapi.json"
    ).read_text()
)
SCHEMAS: dict[str, Any] = REFERENCE["components"]["schemas"]

OBJECT_MODELS: dict[str, type[BaseModel]] = {
    "Pod": m.Pod,
    "PodCreateInput": m.PodCreateInput,
    "PodUpdateInput": m.PodUpdateInput,
    "PodUpdateInPlaceInput": m.PodUpdateInput,
    "NetworkVolume": m.NetworkVolume,
    "NetworkVolumeCreateInput": m.NetworkVolumeCreateInput,
    "NetworkVolumeUpdateInput": m.NetworkVolumeUpdateInput,
    "Template": m.Template,
    "TemplateCreateInput": m.TemplateCreateInput,
    "TemplateUpdateInput": m.TemplateUpdateInput,
    "TemplateUpdateInPlaceInput": m.TemplateUpdateInput,
    "Endpoint": m.Endpoint,
    "EndpointCreateInput": m.EndpointCreateInput,
    "EndpointUpdateInput": m.EndpointUpdateInput,
    "EndpointUpdateInPlaceInput": m.EndpointUpdateInput,
    "SavingsPlan": m.SavingsPlan,
    "Machine": m.Machine,
    "DataCenter": m.DataCenter,
    "UnauthorizedError": m.ErrorMessage,
    "ContainerRegistryAuth": m.ContainerRegistryAuth,
    "ContainerRegistryAuthCreateInput": m.ContainerRegistryAuthCreateInput,
    "BillingRecord": m.BillingRecord,
    "NetworkVolumeBillingRecord": m.NetworkVolumeBillingRecord,
}
"""The reference's ``*UpdateInPlaceInput`` bodies are subsets of its update bodies: the
update models read both (every property of each is a field of the update model)."""
ARRAY_MODELS: dict[str, type[BaseModel]] = {
    "Pods": m.Pod,
    "Templates": m.Template,
    "Endpoints": m.Endpoint,
    "NetworkVolumes": m.NetworkVolume,
    "ContainerRegistryAuths": m.ContainerRegistryAuth,
    "BillingRecords": m.BillingRecord,
    "NetworkVolumeBillingRecords": m.NetworkVolumeBillingRecord,
}
STRING_SCHEMAS = {"User", "GPUTypeId", "CudaVersions"}
"""Schemas that are plain strings; ``CudaVersions`` is checked against ``CudaVersion``."""

DEFAULT_EXCEPTIONS = {
    ("ports", "8888/http,22/tcp"): ["8888/http", "22/tcp"],
}
"""The reference writes the ports default as one comma-joined string although the field is
an array; the service documents "two ports: 8888 over http and 22 over tcp", which is
the list (docs/behaviour.md#templates)."""


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def field_by_alias(model: type[BaseModel]) -> dict[str, FieldInfo]:
    return {(f.alias or name): f for name, f in model.model_fields.items()}


def inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside ``X | None``, ``list[X]``, ``Annotated[...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = inner_model(arg)
        if found is not None:
            return found
    return None


def all_schema_names() -> set[str]:
    return set(OBJECT_MODELS) | set(ARRAY_MODELS) | STRING_SCHEMAS


def test_every_reference_schema_has_a_model() -> None:
    assert set(SCHEMAS) == all_schema_names()


def check_properties(
    schema: dict[str, Any], model: type[BaseModel], where: str, problems: list[str]
) -> None:
    fields = field_by_alias(model)
    for prop, spec in resolve(schema).get("properties", {}).items():
        if prop not in fields:
            problems.append(f"{where}.{prop} has no field in {model.__name__}")
            continue
        spec = resolve(spec)
        nested = spec if spec.get("type") == "object" and "properties" in spec else None
        items = resolve(spec.get("items", {})) if spec.get("type") == "array" else {}
        if items.get("type") == "object" and "properties" in items:
            nested = items
        if nested is not None:
            sub = inner_model(fields[prop].annotation)
            if sub is None:
                problems.append(f"{where}.{prop} is an object but {model.__name__} has no model")
            else:
                check_properties(nested, sub, f"{where}.{prop}", problems)


@pytest.mark.parametrize("name", sorted(OBJECT_MODELS))
def test_every_property_is_a_field(name: str) -> None:
    problems: list[str] = []
    check_properties(SCHEMAS[name], OBJECT_MODELS[name], name, problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(ARRAY_MODELS))
def test_list_schemas_hold_the_model(name: str) -> None:
    problems: list[str] = []
    schema = SCHEMAS[name]
    assert schema["type"] == "array"
    check_properties(schema["items"], ARRAY_MODELS[name], name, problems)
    assert not problems, "\n".join(problems)


def enum_props(schema: dict[str, Any]) -> list[tuple[str, list[str], bool]]:
    """(property, enum values, is_array) for every enum-valued property."""
    found = []
    for prop, spec in resolve(schema).get("properties", {}).items():
        spec = resolve(spec)
        if "enum" in spec:
            found.append((prop, spec["enum"], False))
        elif "enum" in resolve(spec.get("items", {})):
            found.append((prop, resolve(spec["items"])["enum"], True))
    return found


INPUTS = sorted(n for n in OBJECT_MODELS if n.endswith("Input"))


def minimal_body(name: str) -> dict[str, Any]:
    """The smallest valid body of each input, to vary one field at a time."""
    return {
        "PodCreateInput": {"imageName": "img"},
        "TemplateCreateInput": {"name": "t", "imageName": "img"},
        "EndpointCreateInput": {"templateId": "t"},
        "NetworkVolumeCreateInput": {"name": "v", "size": 10, "dataCenterId": "EU-RO-1"},
        "ContainerRegistryAuthCreateInput": {"name": "a", "username": "u", "password": "p"},
    }.get(name, {})


@pytest.mark.parametrize("name", INPUTS)
def test_inputs_accept_every_enum_value_and_refuse_others(name: str) -> None:
    model = OBJECT_MODELS[name]
    for prop, values, is_array in enum_props(SCHEMAS[name]):
        for value in values:
            body = {**minimal_body(name), prop: [value] if is_array else value}
            if prop == "cpuFlavorIds" and name.startswith("Endpoint"):
                assert value in m.SERVERLESS_CPU_FLAVORS
            parsed = model.model_validate(body)
            assert parsed.to_wire()[prop] == body[prop]
        bad = {**minimal_body(name), prop: ["no-such-value"] if is_array else "no-such-value"}
        with pytest.raises(ValidationError) as info:
            model.model_validate(bad)
        assert info.value.errors()[0]["loc"][0] == prop


@pytest.mark.parametrize("name", sorted(n for n in OBJECT_MODELS if not n.endswith("Input")))
def test_responses_keep_enum_values_they_do_not_know(name: str) -> None:
    model = OBJECT_MODELS[name]
    for prop, values, is_array in enum_props(SCHEMAS[name]):
        known = model.model_validate({prop: [values[0]] if is_array else values[0]})
        unknown = model.model_validate({prop: ["FUTURE"] if is_array else "FUTURE"})
        assert known.to_wire()[prop] == ([values[0]] if is_array else values[0])
        assert unknown.to_wire()[prop] == (["FUTURE"] if is_array else "FUTURE")


def test_the_cuda_versions_schema_is_within_the_enum() -> None:
    assert set(SCHEMAS["CudaVersions"]["enum"]) <= {v.value for v in CudaVersion}


@pytest.mark.parametrize("name", INPUTS)
def test_required_fields_are_required(name: str) -> None:
    model = OBJECT_MODELS[name]
    required = set(SCHEMAS[name].get("required", []))
    fields = field_by_alias(model)
    declared = {alias for alias, f in fields.items() if f.is_required()}
    assert declared == required
    for prop in required:
        body = {k: v for k, v in minimal_body(name).items() if k != prop}
        with pytest.raises(ValidationError) as info:
            model.model_validate(body)
        assert any(e["loc"] == (prop,) and e["type"] == "missing" for e in info.value.errors())


@pytest.mark.parametrize(
    "name",
    [
        "PodCreateInput",
        "TemplateCreateInput",
        "EndpointCreateInput",
        "NetworkVolumeCreateInput",
        "ContainerRegistryAuthCreateInput",
    ],
)
def test_create_inputs_default_as_the_reference_says(name: str) -> None:
    parsed = OBJECT_MODELS[name].model_validate(minimal_body(name))
    dumped = parsed.model_dump(by_alias=True, mode="json")
    for prop, spec in SCHEMAS[name]["properties"].items():
        if "default" not in spec:
            continue
        default = spec["default"]
        expected = (
            DEFAULT_EXCEPTIONS.get((prop, default), default)
            if isinstance(default, str)
            else default
        )
        assert dumped[prop] == expected, prop


@pytest.mark.parametrize("name", ["PodUpdateInput", "TemplateUpdateInput", "EndpointUpdateInput"])
def test_updates_default_nothing(name: str) -> None:
    """An update changes what it names; the reference's defaults there would reset fields."""
    parsed = OBJECT_MODELS[name].model_validate({})
    assert parsed.to_wire() == {}
    assert all(value is None for value in parsed.model_dump().values())


@pytest.mark.parametrize("name", INPUTS)
def test_minimum_and_maximum_are_enforced(name: str) -> None:
    model = OBJECT_MODELS[name]
    for prop, spec in SCHEMAS[name]["properties"].items():
        for key, step in (("minimum", -1), ("maximum", 1)):
            if key not in spec:
                continue
            edge = spec[key]
            model.model_validate({**minimal_body(name), prop: edge})
            with pytest.raises(ValidationError) as info:
                model.model_validate({**minimal_body(name), prop: edge + step})
            assert info.value.errors()[0]["loc"] == (prop,)
        if "maxLength" in spec:
            model.model_validate({**minimal_body(name), prop: "x" * spec["maxLength"]})
            with pytest.raises(ValidationError):
                model.model_validate({**minimal_body(name), prop: "x" * (spec["maxLength"] + 1)})


def test_string_schemas_are_plain_strings() -> None:
    for name in STRING_SCHEMAS:
        assert SCHEMAS[name]["type"] == "string"
    assert isinstance(GpuTypeId.GEFORCE_RTX_4090, str)
