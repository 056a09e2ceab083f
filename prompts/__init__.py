"""Prompt templates as files, each versioned by a hash of its content."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

# Every judge's request begins with the panel's prefix: these rules, then all seven levels (what each
# asks, and its scale), byte for byte the same for every judge, round and problem, so that a server's
# prompt cache (OpenAI's from 1,024 tokens on, llama.cpp's, vLLM's) serves it (issue 54).
JUDGE_RULES = "judge_rules"
JUDGE_LEVELS = (
    "judge_remember",
    "judge_understand",
    "judge_apply",
    "judge_analyze",
    "judge_evaluate",
    "judge_create",
    "judge_holistic",
)
PROMPT_NAMES = (*JUDGE_LEVELS, "reviser", "reviser_unaided", "solver")
# The last line of a judge's request, after the problem: its level's heading, and what to do with it.
_LEVEL_LINE = "{heading} — use this level's questions and scale above."


@dataclass(frozen=True)
class Prompt:
    """A prompt and the version recorded with every output it produced.

    ``text`` is everything the model is told besides the data. A judge prompt is two parts: the
    panel's prefix every judge shares (``shared``: the rules and all seven levels, sent before the
    problem) and the line naming the judge's level (``own``, sent after it); ``text`` is both, and the
    version is of both. ``rules`` and ``level`` (the judge's own level alone) keep the parts the
    layouts before issue 54 sent, for the benches that compare them. Other prompts have no parts:
    ``text`` is the system message, sent before the data.
    """

    name: str
    text: str
    version: str
    shared: str = ""
    own: str = ""
    rules: str = ""
    level: str = ""


@cache
def load_prompt(name: str) -> Prompt:
    """Read ``prompts/templates/<name>.md`` (a judge's: the panel's prefix and its level's line);
    its version is ``<name>@<sha256[:12]>`` of everything it tells the model."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"unknown prompt {name!r}")
    text = _template(name)
    if name not in JUDGE_LEVELS:
        return Prompt(name=name, text=text, version=version_of(name, text))
    shared, own = panel_prefix(), level_line(text)
    both = f"{shared}\n{own}"
    return Prompt(
        name=name, text=both, version=version_of(name, both), shared=shared, own=own,
        rules=_template(JUDGE_RULES), level=text,
    )  # fmt: skip


@cache
def panel_prefix() -> str:
    """What every judge is told first: the rules, then each level's questions and scale."""
    return "\n".join(_template(name) for name in (JUDGE_RULES, *JUDGE_LEVELS))


def level_line(level: str) -> str:
    """The short line that names a judge's level (its template's heading), sent last."""
    return _LEVEL_LINE.format(heading=level.splitlines()[0].strip())


def _template(name: str) -> str:
    return resources.files(__package__).joinpath("templates", f"{name}.md").read_text("utf-8")


def version_of(name: str, text: str) -> str:
    """``<name>@<sha256[:12]>`` of the text a prompt tells the model."""
    return f"{name}@{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"
