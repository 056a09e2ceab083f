"""Each rule's firings and precision on labelled versions: how often it fires on flawed versions
(and on those labelled with its own flaw type) and on sound ones (corrected versions, controls)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agents.rubric.facts import ProblemFacts
from agents.rubric.rules._registry import RULES, SCREENS, Rule


@dataclass(frozen=True)
class Version:
    """A labelled version: its text and its flaw types (none: a sound version)."""

    question: str
    solution: str
    flaws: tuple[str, ...] = ()


@dataclass
class Tally:
    """One rule's firings: on flawed versions, on those of its flaw type, on sound ones, and how
    often it was the rule its check named (the first of the check's rules to fire)."""

    rule: Rule
    flawed: int = 0
    typed: int = 0
    sound: int = 0
    named: int = 0

    @property
    def fired(self) -> int:
        """Versions it fired on."""
        return self.flawed + self.sound

    @property
    def precision(self) -> float | None:
        """The share of its firings that were on flawed versions (None when it never fired)."""
        return self.flawed / self.fired if self.fired else None


def tally(versions: Iterable[Version]) -> list[Tally]:
    """Every registered rule's tally over the versions, in the registry's order."""
    tallies = {rule_id: Tally(rule) for rule_id, rule in RULES.items()}
    for version in versions:
        facts = ProblemFacts(version.question, version.solution)
        for rule_id, rule in RULES.items():
            if rule.detect(facts):
                _count(tallies[rule_id], version)
        for screen in SCREENS.values():
            found = screen.find(facts)
            if found:
                tallies[found.rule].named += 1
    return list(tallies.values())


def _count(one: Tally, version: Version) -> None:
    if version.flaws:
        one.flawed += 1
        one.typed += one.rule.flaw in version.flaws
    else:
        one.sound += 1


def to_markdown(tallies: Sequence[Tally], flawed: int, sound: int) -> str:
    """The tallies as a table, one row per rule."""
    lines = [
        f"Rules on {flawed} flawed and {sound} sound versions",
        "",
        "| rule | flaw type | fired | on flawed | of its type | on sound | named by its check | precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for one in tallies:
        shown = "-" if one.precision is None else f"{one.flawed}/{one.fired} = {one.precision:.1%}"
        lines.append(
            f"| {one.rule.id} | {one.rule.flaw or 'style or form'} | {one.fired} | {one.flawed} | "
            f"{one.typed} | {one.sound} | {one.named} | {shown} |"
        )
    return "\n".join(lines)
