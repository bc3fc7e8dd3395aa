"""The v2 reference as the emulator's rulebook: bodies and queries are checked against its
schemas with ``jsonschema``, imported by the first management request, as its import
takes a second (docs/performance.md#the-first-result)."""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

from ...domain.management.refusals import Unprocessable
from ..http import reference_bytes

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError as SchemaError

UNEXPECTED = re.compile(r"\((.*) (?:was|were) unexpected\)")
QUOTED = re.compile(r"'([^']*)'")
"""How jsonschema names the fields a schema does not allow."""
PARAMETER = re.compile(r"\{[^}]*\}")


@functools.cache
def reference() -> dict[str, Any]:
    """The parsed reference (shared: callers must not change it)."""
    data: dict[str, Any] = json.loads(reference_bytes(__package__))
    return data


@functools.cache
def operations() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (method, path, operation), parameters of the path merged in."""
    found = {}
    for path, item in reference()["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method == "parameters":
                continue
            params = [_resolve(p) for p in [*shared, *op.get("parameters", [])]]
            found[op["operationId"]] = (method.upper(), path, {**op, "parameters": params})
    return found


@functools.cache
def operation_at(method: str, path: str) -> str:
    """The operationId of ``method path``, whatever its parameters are named."""
    ids = {(m, PARAMETER.sub("{}", p)): o for o, (m, p, _) in operations().items()}
    return ids[method, PARAMETER.sub("{}", path)]


def request_schema(operation_id: str) -> str:
    """The name of the schema an operation's JSON body follows (``CreatePodRequest``)."""
    content = operations()[operation_id][2]["requestBody"]["content"]
    ref: str = content["application/json"]["schema"]["$ref"]
    return ref.rsplit("/", 1)[-1]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = reference()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _compiled(schema: dict[str, Any]) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # on first use: see the module's docstring

    return Draft202012Validator({**schema, "components": reference()["components"]})


@functools.cache
def _validator(ref: str) -> Draft202012Validator:
    return _compiled({"$ref": ref})


def declared(node: dict[str, Any]) -> list[str]:
    """Every property a schema allows, through ``$ref``, ``allOf``, ``oneOf`` and ``anyOf``."""
    seen: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        node = _resolve(node)
        for part in [*node.get("allOf", []), *node.get("oneOf", []), *node.get("anyOf", [])]:
            walk(part)
        for field in node.get("properties", {}):
            if field not in seen:
                seen.append(field)

    walk(node)
    return seen


def schema_fields(name: str) -> list[str]:
    return declared({"$ref": f"#/components/schemas/{name}"})


def _where(error: SchemaError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "body"


def _explain(error: SchemaError, schema: str) -> list[str]:
    """One line per failure, naming the field. A field the schema declares is never
    called unknown: JSON Schema counts the fields of a part that failed (``scaling``
    missing fails the part declaring ``gpu`` and ``name``) as unevaluated, and the part's
    own failure is the problem to name."""
    where = _where(error)
    if error.validator in ("unevaluatedProperties", "additionalProperties"):
        listed = UNEXPECTED.search(error.message)
        known = declared(error.schema) if isinstance(error.schema, dict) else []
        named = QUOTED.findall(listed.group(1)) if listed else [error.message]
        extra = [k for k in named if k not in known]
        if where != "body":
            return [f"{where}.{k}: unknown field" for k in sorted(extra)]
        accepted = ", ".join(schema_fields(schema))
        return [f"{k}: unknown field (accepted: {accepted})" for k in sorted(extra)]
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else error.message
        prefix = "" if where == "body" else f"{where}."
        return [f"{prefix}{missing}: is required"]
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = min(error.context, key=lambda e: len(list(e.absolute_path)))
        return [f"{where}: matches none of the allowed shapes ({best.message})"]
    return [f"{where}: {error.message}"]


def check_body(body: Any, schema: str) -> None:
    """Raise ``Unprocessable`` naming every field of ``body`` that ``schema`` refuses."""
    if not isinstance(body, dict):
        raise Unprocessable(
            f"request body must be a JSON object ({schema})", ["body: must be a JSON object"]
        )
    errors: list[str] = []
    failures = sorted(
        _validator(f"#/components/schemas/{schema}").iter_errors(body),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    for error in failures:
        for line in _explain(error, schema):
            if line not in errors:
                errors.append(line)
    if failures and not errors:  # only declared fields left unevaluated: say so as it does
        errors = [f"{_where(e)}: {e.message}" for e in failures]
    if errors:
        raise Unprocessable("; ".join(errors), errors)


def _coerce(raw: list[str], schema: dict[str, Any]) -> Any:
    """A query parameter's text as the type its schema declares (left as text if it is not)."""
    schema = _resolve(schema)
    kind = schema.get("type")
    if kind == "array":
        items = [v for value in raw for v in value.split(",") if v]
        return [_coerce([v], schema.get("items", {})) for v in items]
    value = raw[-1]
    if kind == "integer":
        try:
            return int(value)
        except ValueError:
            return value
    if kind == "boolean":
        return {"true": True, "false": False}.get(value.lower(), value)
    return value


@functools.cache
def _parameter_validator(operation_id: str, name: str) -> Draft202012Validator:
    _, _, op = operations()[operation_id]
    param = next(p for p in op["parameters"] if p["name"] == name and p["in"] == "query")
    return _compiled(param.get("schema", {}))


def check_query(operation_id: str, params: list[tuple[str, str]]) -> dict[str, Any]:
    """The operation's query parameters, typed and checked; unknown ones refused by name."""
    _, _, op = operations()[operation_id]
    declared = {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
    grouped: dict[str, list[str]] = {}
    for key, value in params:
        grouped.setdefault(key, []).append(value)
    errors: list[str] = []
    values: dict[str, Any] = {}
    for name, raw in grouped.items():
        param = declared.get(name)
        if param is None:
            accepted = ", ".join(sorted(declared)) or "none"
            errors.append(f"{name}: unknown query parameter (accepted: {accepted})")
            continue
        value = _coerce(raw, param.get("schema", {}))
        for error in _parameter_validator(operation_id, name).iter_errors(value):
            errors.append(f"{name}: {error.message}")
        values[name] = value
    if errors:
        raise Unprocessable("; ".join(errors), errors)
    return values
