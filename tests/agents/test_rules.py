"""The screen's rules, tested from their own examples: each rule fires on its examples (and its check
names it), and its check passes every counter-example. One parametrized test over the registry."""

from __future__ import annotations

import re

import pytest

from agents.identity import source_files
from agents.labelled.matching import CHECK_FLAWS
from agents.rubric.checks import CHECKS, run_checks
from agents.rubric.facts import ProblemFacts
from agents.rubric.rules import RULES, SCREENS, Example, Rule

FIRES = [(rule.id, example) for rule in RULES.values() for example in rule.fires_on]
PASSES = [(rule.id, example) for rule in RULES.values() for example in rule.passes]


def _name(value: object) -> str:
    return value.question[:40] if isinstance(value, Example) else str(value)


@pytest.mark.parametrize(("rule_id", "example"), FIRES, ids=_name)
def test_a_rule_fires_on_its_examples_and_its_check_names_it(rule_id: str, example: Example) -> None:
    rule = RULES[rule_id]
    facts = ProblemFacts(example.question, example.solution)
    assert rule.detect(facts), "the rule does not fire"
    found = SCREENS[rule.check].find(facts)
    assert found is not None and found.rule == rule_id, f"the check names {found}"


@pytest.mark.parametrize(("rule_id", "example"), PASSES, ids=_name)
def test_a_rules_check_passes_its_counter_examples(rule_id: str, example: Example) -> None:
    found = SCREENS[RULES[rule_id].check].find(ProblemFacts(example.question, example.solution))
    assert not found, f"{found.rule if found else ''} fires: {found.evidence if found else ''}"


def test_every_rule_has_an_id_a_check_and_an_example() -> None:
    missing = [rule.id for rule in RULES.values() if not rule.fires_on]
    assert not missing, f"rules without an example they fire on: {missing}"
    assert all(re.fullmatch(r"[a-z]+\.[a-z0-9-]+", rule.id) for rule in RULES.values())
    assert {rule.check for rule in RULES.values()} == set(SCREENS)


def test_every_check_of_the_panel_but_the_revisions_is_a_screen_of_rules() -> None:
    checks = {check.name for judge in CHECKS.values() for check in judge}
    assert checks - set(SCREENS) == {"intent_kept"}  # it compares two versions: a check of the revision


def test_the_registry_keeps_the_order_a_check_tries_its_rules_in() -> None:
    ids = [rule.id for rule in SCREENS["answers_the_question"].rules]
    assert ids[0] == "answer.time-of-day" and ids[-1] == "answer.asked-noun"
    assert all(
        isinstance(rule, Rule) and RULES[rule.id] == rule
        for screen in SCREENS.values()
        for rule in screen.rules
    )


def test_a_failed_check_names_the_rule_that_found_the_flaw() -> None:
    facts = ProblemFacts(
        "A film lasts 1 hour 50 minutes. How many minutes is that?", "1.50 × 60 = 90 minutes."
    )
    failed = {(r.check, r.rule) for r in run_checks("apply", facts, None) if r.ok is False}
    assert ("units_consistent", "units.hours-minutes-decimal") in failed
    passed = [r for r in run_checks("apply", facts, None) if r.ok]
    assert passed and all(r.rule == "" for r in passed)


def test_the_checks_identity_covers_the_rules() -> None:
    """A warrant's ``checks`` identity changes when a rule's code does: it hashes the rules too."""
    assert {"checks.py", "detectors.py", "world_table.py", "rules/_registry.py", "rules/magnitude.py"} <= set(
        source_files("rubric")
    )


def test_the_flaw_types_a_check_is_matched_on_are_its_rules() -> None:
    for check, types in CHECK_FLAWS.items():
        assert types == {rule.flaw for rule in SCREENS[check].rules if rule.flaw}, check
