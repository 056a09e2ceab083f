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


# Every judge is told these rules first, before the problem: byte for byte the same text in each of
# a round's seven judge calls, so that a server's prompt cache reuses them (issue 42).
JUDGE_RULES = "judge_rules"


@dataclass(frozen=True)
class Prompt:
    """A prompt and the version recorded with every output it produced.

    ``text`` is everything the model is told besides the data. A judge prompt is two parts: the
    rules every judge shares (``shared``, sent before the problem) and the judge's own level
    (``own``, sent after it); ``text`` is both, and the version is of both. Other prompts have no
    parts: ``text`` is the system message, sent before the data.
    """

    name: str
    text: str
    version: str
    shared: str = ""
    own: str = ""


@cache
def load_prompt(name: str) -> Prompt:
    """Read ``prompts/templates/<name>.md`` (a judge's with the shared rules, ``judge_rules.md``);
    its version is ``<name>@<sha256[:12]>`` of everything it tells the model."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}")
    text = _template(name)
    if not name.startswith("judge_"):
        return Prompt(name=name, text=text, version=_version(name, text))
    shared = _template(JUDGE_RULES)
    both = f"{shared}\n{text}"
    return Prompt(name=name, text=both, version=_version(name, both), shared=shared, own=text)


def _template(name: str) -> str:
    return resources.files(__package__).joinpath("templates", f"{name}.md").read_text("utf-8")


def _version(name: str, text: str) -> str:
    return f"{name}@{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"
