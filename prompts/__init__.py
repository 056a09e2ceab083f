"""Prompt templates as files, each versioned by a hash of its content."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

PROMPT_NAMES = (
    "judge_remember",
    "judge_understand",
    "judge_apply",
    "judge_analyze",
    "judge_evaluate",
    "judge_create",
    "judge_holistic",
    "reviser",
    "reviser_unaided",
    "solver",
)


@dataclass(frozen=True)
class Prompt:
    """A system prompt and the version recorded with every output it produced."""

    name: str
    text: str
    version: str


@cache
def load_prompt(name: str) -> Prompt:
    """Read ``prompts/templates/<name>.md``; its version is ``<name>@<sha256[:12]>``."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}")
    text = resources.files(__package__).joinpath("templates", f"{name}.md").read_text("utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return Prompt(name=name, text=text, version=f"{name}@{digest}")
