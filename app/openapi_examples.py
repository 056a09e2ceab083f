"""Examples for every property of the OpenAPI document, taken from the examples of whole objects.

A schema's example is written once, as a whole object beside its model (``json_schema_extra``), so
that its fields agree with each other (a run's status with its outcome, a page's items with their
schema). Each property then shows its own value from that object; a nested schema without an
example of its own takes the value its parent's example holds for it, and a property referring to
a schema takes that schema's example. A field given ``Field(examples=...)`` keeps its own.
"""

from __future__ import annotations

from typing import Any

_MISSING = object()


def _example(schema: dict[str, Any]) -> dict[str, Any] | None:
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], dict):
        return examples[0]
    return None


def _referred(prop: dict[str, Any]) -> tuple[str, bool] | None:
    """The schema a property refers to (directly, as nullable, or as array items) and whether it is
    an array of them; None for a property of a plain type."""
    options = prop.get("anyOf", [prop])
    for option in options:
        if "$ref" in option:
            return option["$ref"].rsplit("/", 1)[1], False
        items = option.get("items")
        if option.get("type") == "array" and isinstance(items, dict) and "$ref" in items:
            return items["$ref"].rsplit("/", 1)[1], True
    return None


def _value(prop: dict[str, Any], field: str, example: dict[str, Any] | None, schemas: dict[str, Any]) -> Any:
    if example is not None and field in example:
        return example[field]
    referred = _referred(prop)
    if referred is None:
        return _MISSING
    child = _example(schemas.get(referred[0], {}))
    if child is None:
        return _MISSING
    return [child] if referred[1] else child


def _teach_children(schema: dict[str, Any], example: dict[str, Any], schemas: dict[str, Any]) -> bool:
    """Give each nested schema without an example the value this example holds for it."""
    taught = False
    for field, prop in (schema.get("properties") or {}).items():
        referred = _referred(prop)
        if referred is None or field not in example:
            continue
        child = schemas.get(referred[0])
        value = example[field]
        if referred[1]:
            value = value[0] if isinstance(value, list) and value else None
        if child is not None and _example(child) is None and isinstance(value, dict):
            child["examples"] = [value]
            taught = True
    return taught


def fill_property_examples(schemas: dict[str, Any]) -> None:
    """Give every property without ``examples`` its value from the examples around it (in place)."""
    changed = True
    while changed:
        changed = False
        for schema in schemas.values():
            example = _example(schema)
            for field, prop in (schema.get("properties") or {}).items():
                if "examples" in prop:
                    continue
                value = _value(prop, field, example, schemas)
                if value is not _MISSING:
                    prop["examples"] = [value]
                    changed = True
            if example is not None:
                changed = _teach_children(schema, example, schemas) or changed
