"""The screen's unit of design: a rule with an id, the flaw it detects, and examples.

A check of the offline panel is a *screen*: the rules that detect its flaw, tried in their order
(the first that fires names the finding, so an earlier rule shadows a later one on the same text).
Each rule carries texts it must fire on and texts on which its check must pass
(``examples.json`` beside this module); the tests are generated from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from agents.labelled.labels import FlawType
from agents.rubric.facts import ProblemFacts

Detect = Callable[[ProblemFacts], str]
Condition = Callable[[ProblemFacts], bool]
_ID = re.compile(r"^[a-z]+\.[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Example:
    """A version of a problem: the question and its worked solution."""

    question: str
    solution: str


@dataclass(frozen=True)
class Rule:
    """One way a check's flaw shows: ``detect`` returns the evidence it found, or ``""``.

    ``flaw`` is the labelled flaw type it detects (None for a style or form rule). ``decides``, when
    given and true for a text, ends the check at this rule whether it fired or not (a time-of-day
    question is answered by a time, and no later rule looks at it).
    """

    id: str
    flaw: FlawType | None
    detect: Detect = field(repr=False, compare=False)
    decides: Condition | None = field(default=None, repr=False, compare=False)
    check: str = ""

    @property
    def fires_on(self) -> tuple[Example, ...]:
        """Versions this rule must fire on (and its check must name it)."""
        return _examples(self.id, "fires_on")

    @property
    def passes(self) -> tuple[Example, ...]:
        """Sound versions its check must pass."""
        return _examples(self.id, "passes")


@dataclass(frozen=True)
class Finding:
    """What a check found: the evidence, and the id of the rule that found it ('' when it passed)."""

    rule: str
    evidence: str

    def __bool__(self) -> bool:
        return bool(self.evidence)


PASSED = Finding("", "")


@dataclass(frozen=True)
class Screen:
    """A check as its ordered rules. ``requires`` false: the check does not apply (None), before any
    rule runs. ``clean``: the result when no rule fires ("" by default; None when it did not apply)."""

    check: str
    rules: tuple[Rule, ...]
    requires: Condition | None = None
    clean: Callable[[ProblemFacts], bool] | None = None

    def find(self, facts: ProblemFacts) -> Finding | None:
        """The first rule that fires, PASSED, or None when the check does not apply."""
        if self.requires is not None and not self.requires(facts):
            return None
        for rule in self.rules:
            evidence = rule.detect(facts)
            if evidence:
                return Finding(rule.id, evidence)
            if rule.decides is not None and rule.decides(facts):
                return PASSED
        return PASSED if self.clean is None or self.clean(facts) else None

    def __call__(self, facts: ProblemFacts) -> str | None:
        """The evidence alone, as the detectors returned it: None, "" or what was found."""
        found = self.find(facts)
        return None if found is None else found.evidence


RULES: dict[str, Rule] = {}
SCREENS: dict[str, Screen] = {}


def rule(id: str, flaw: FlawType | None, detect: Detect, decides: Condition | None = None) -> Rule:
    """A rule (registered with its check by ``screen``)."""
    if not _ID.match(id):
        raise ValueError(f"rule id {id!r} is not area.kebab-name")
    return Rule(id, flaw, detect, decides)


def screen(
    check: str,
    *rules: Rule,
    requires: Condition | None = None,
    clean: Callable[[ProblemFacts], bool] | None = None,
) -> Screen:
    """Register a check's rules, in the order the check tries them."""
    owned = tuple(Rule(r.id, r.flaw, r.detect, r.decides, check) for r in rules)
    for one in owned:
        if one.id in RULES:
            raise ValueError(f"rule id {one.id} is registered twice")
        RULES[one.id] = one
    SCREENS[check] = Screen(check, owned, requires, clean)
    return SCREENS[check]


@cache
def _all_examples() -> dict[str, dict[str, list[list[str]]]]:
    text = resources.files(__package__).joinpath("examples.json").read_text("utf-8")
    loaded: dict[str, dict[str, list[list[str]]]] = json.loads(text)
    return loaded


def _examples(rule_id: str, kind: str) -> tuple[Example, ...]:
    return tuple(Example(q, s) for q, s in _all_examples().get(rule_id, {}).get(kind, []))
