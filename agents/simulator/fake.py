"""Schema-driven replies: a valid object for whatever JSON schema a request asks for."""

from __future__ import annotations

import json
import re
from typing import Any

_THINKING = (
    "I read each reviewer's finding in turn. The weakest levels point at the same defect, so I "
    "repair that first, keep the original concept and numbers, and then check the arithmetic of "
    "the new solution step by step before I write it down."
)


def fake_object(schema: dict[str, Any], hints: dict[str, Any]) -> Any:
    """A value that validates against ``schema``; ``hints`` name values for known field names."""
    return _fake(schema, schema.get("$defs", {}), hints, name="")


def _fake(node: dict[str, Any], defs: dict[str, Any], hints: dict[str, Any], name: str) -> Any:
    if "$ref" in node:
        return _fake(defs[node["$ref"].rsplit("/", 1)[-1]], defs, hints, name)
    if "anyOf" in node:
        nullable = any(option.get("type") == "null" for option in node["anyOf"])
        if nullable and name in hints and hints[name] is None:
            return None
        return _fake(node["anyOf"][0], defs, hints, name)
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        return {key: _fake(sub, defs, hints, key) for key, sub in props.items()}
    if kind == "array":
        return [_fake(node.get("items", {}), defs, hints, name)]
    if kind == "integer":
        value = int(hints.get(name, hints.get("integer", 50)))
        return max(node.get("minimum", value), min(node.get("maximum", value), value))
    if kind == "number":
        return float(hints.get(name, 0.5))
    if kind == "boolean":
        return True
    return str(hints.get(name, f"simulated {name or 'text'}"))


_REVISED = re.compile(r" \(revised(?: (\d+))?\)$")


def reviser_hints(user_text: str) -> dict[str, Any]:
    """Echo the current question back, marked "(revised N)" with N counting the revisions: the mark's
    number is a given that changes each time, so each reply is a revision (``agents.revision_check``)
    and a loop driven by the simulator makes progress."""
    match = re.search(r"```json\n(.*)\n```", user_text, re.S)
    data: dict[str, Any] = {}
    if match:
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            data = {}
    question = str(data.get("question", "A revised problem."))
    mark = _REVISED.search(question)
    count = int(mark.group(1) or 1) + 1 if mark else 1
    return {
        "thinking": _THINKING,
        "question": _REVISED.sub("", question) + f" (revised {count})",
        "solution": str(data.get("solution") or "A worked solution."),
    }


_ANSWER = re.compile(r"^\s*\$?\s*(-?\d+(?:\.\d+)?)\s*(.*?)\s*$")


def solver_hints(answer: str | None) -> dict[str, Any]:
    """The solver's reply: a scripted answer ('40 minutes': value 40, unit 'minutes'), else an
    answer with no number (value null), which the loop never compares with anything."""
    if answer is None:
        return {
            "working": "I worked through the question step by step.",
            "answer": "no number",
            "value": None,
        }
    match = _ANSWER.match(answer)
    value = float(match.group(1)) if match else None
    unit = (match.group(2) if match else "") or ("dollars" if answer.strip().startswith("$") else "")
    return {
        "working": f"Worked out from the question alone: {answer}.",
        "answer": answer,
        "value": value,
        "unit": unit,
    }
