"""Reading a problem from the CLI's inputs: a JSON file, stdin, flags, or a bundled example."""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from agents.schemas import MAX_QUESTION_CHARS, MAX_SOLUTION_CHARS, Problem

MAX_INPUT_BYTES = 64 * 1024


def content_hash(question: str, solution: str) -> str:
    """Problems are deduplicated by this hash of their whitespace-normalised text."""
    text = json.dumps([" ".join(question.split()), " ".join(solution.split())])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ProblemInputError(ValueError):
    """The input cannot be turned into a problem; the message says why."""


def example_names() -> list[str]:
    """The bundled example problems."""
    folder = resources.files("app").joinpath("samples")
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def read_example(name: str) -> str:
    """The JSON text of a bundled example."""
    if name not in example_names():
        raise ProblemInputError(f"unknown example {name!r}; choose one of {', '.join(example_names())}")
    return resources.files("app").joinpath("samples", f"{name}.json").read_text("utf-8")


def read_source(source: str) -> str:
    """Text from a file path, or from stdin when ``source`` is '-'."""
    if source == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        try:
            data = Path(source).read_bytes()[: MAX_INPUT_BYTES + 1]
        except OSError as exc:
            raise ProblemInputError(f"cannot read {source}: {exc.strerror}") from exc
    if len(data) > MAX_INPUT_BYTES:
        raise ProblemInputError(f"input is larger than {MAX_INPUT_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProblemInputError("input is not UTF-8 text") from exc


def parse_problem(text: str) -> Problem:
    """A problem from a JSON object with ``question`` and optional ``solution``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProblemInputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ProblemInputError('expected a JSON object like {"question": "...", "solution": "..."}')
    return make_problem(data.get("question"), data.get("solution") or "")


def make_problem(question: object, solution: object = "") -> Problem:
    """Validate the two texts, with messages a person can act on."""
    if not isinstance(question, str) or not question.strip():
        raise ProblemInputError("the question is empty")
    if not isinstance(solution, str):
        raise ProblemInputError("the solution must be text")
    if len(question) > MAX_QUESTION_CHARS:
        raise ProblemInputError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    if len(solution) > MAX_SOLUTION_CHARS:
        raise ProblemInputError(f"the solution is longer than {MAX_SOLUTION_CHARS} characters")
    try:
        return Problem(question=question, solution=solution)
    except ValidationError as exc:
        raise ProblemInputError(str(exc.errors()[0]["msg"])) from exc
