"""The OpenAPI document's schemas: where a value breaks one."""

from __future__ import annotations

from typing import Any


def violations(
    value: Any, schema: dict[str, Any], spec: dict[str, Any], at: str = "$", required: bool = True
) -> list[str]:
    """Where ``value`` breaks ``schema`` (the subset of JSON Schema FastAPI writes), strictly: an
    object may hold no property its schema does not name. ``required=False`` lets required
    properties be absent (an example written by FastAPI, which leaves nulls out)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return violations(value, spec["components"]["schemas"][name], spec, at, required)
    if "anyOf" in schema:
        options = [violations(value, option, spec, at, required) for option in schema["anyOf"]]
        return [] if any(not found for found in options) else [f"{at}: fits no anyOf option: {options}"]
    found: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        is_bool = isinstance(value, bool) and expected in ("integer", "number")
        if is_bool or not isinstance(value, _JSON_TYPES[expected]):
            return [f"{at}: {value!r} is not {expected}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{at}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{at}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict) and "properties" in schema:
        properties = schema["properties"]
        if required:
            found += [f"{at}: {name} is missing" for name in schema.get("required", []) if name not in value]
        found += [f"{at}: {name} is not in the schema" for name in value if name not in properties]
        for name, item in value.items():
            if name in properties:
                found += violations(item, properties[name], spec, f"{at}.{name}", required)
    if isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            found += violations(item, schema["items"], spec, f"{at}[{n}]", required)
    return found


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
    "null": type(None),
}
