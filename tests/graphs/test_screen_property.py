"""No path produces ``accepted`` from the offline panel: the whole loop (up to three rounds, with the
offline reviser's repairs) over every shipped problem and every generated twin ends ``screened``
when the screen finds nothing, never ``accepted``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.labelled.labels import LabelsError, read_labelled
from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.schemas import JUDGES, Problem
from graphs.benches.validity import versions
from graphs.context import RunContext
from graphs.result import RunResult
from graphs.scoring import POLICY_NAMES, SCREENED_REASON, get_policy
from tests.helpers.driving import driving
from tests.helpers.loop import context_of
from tests.helpers.problems import ORCHESTRA

ROOT = Path(__file__).parents[2]
LABELLED = [
    ROOT / "app" / "samples" / "validity" / "problems.jsonl",
    *sorted((ROOT / "app" / "samples" / "validity").glob("validity_*.jsonl")),
]
PLAIN = [
    ROOT / "tests" / "agents" / "data" / "rubric_cases.jsonl",
    ROOT / "tests" / "agents" / "data" / "verifier_cases.jsonl",
    ROOT / "app" / "samples" / "datasets" / "flawed-problems.jsonl",
]


def _labelled(path: Path) -> list[Problem]:
    try:
        items = read_labelled(path)
    except LabelsError:  # a file of another shape: read its problems plainly
        return _plain(path)
    return [problem for item in items for _, _, problem in versions(item, twins=True)]


def _plain(path: Path) -> list[Problem]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [Problem(question=r["question"], solution=r.get("solution") or "") for r in rows]


def shipped() -> list[Problem]:
    """Every problem the project ships, every labelled version and every generated twin."""
    problems = [p for path in LABELLED for p in _labelled(path)]
    problems += [p for path in PLAIN for p in _plain(path)]
    samples = (ROOT / "app" / "samples").glob("*.json")
    problems += [Problem.model_validate_json(p.read_text("utf-8")) for p in samples]
    return list({(p.question, p.solution): p for p in problems}.values())


SHIPPED = shipped()


def test_every_shipped_set_and_twin_is_in_the_pool() -> None:
    assert len(SHIPPED) > 4000  # the labelled sets with their twins, the case files and the samples


Loop = Callable[[Problem, RunContext], RunResult]


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    """``drive`` for the module's hundreds of runs: one event loop and one temporary store (and one
    compiled graph) for all of them, instead of one each (``tests/driving.py``'s ``driving``).
    Each is still a run of its own through ``RunExecutor``; runs on one store share nothing but
    the rows each writes."""
    with asyncio.Runner() as runner:
        opened = driving()
        run = runner.run(opened.__aenter__())
        try:
            yield lambda problem, context: runner.run(run(problem, context))
        finally:
            runner.run(opened.__aexit__(None, None, None))


def _offline(**overrides: int) -> RunContext:
    panel = PanelFactory(ModelRegistry({}), {}).build("rubric", "rubric")
    return RunContext.of(panel, get_policy("default", **overrides))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(problem=st.sampled_from(SHIPPED))
def test_the_offline_panel_never_accepts_a_shipped_problem_or_twin(loop: Loop, problem: Problem) -> None:
    """The whole loop, repairs included (a run costs ~0.1 s of CPU: 5,000 of them would take
    minutes on a busy machine, so Hypothesis draws from the pool)."""
    context = RunContext.of(
        PanelFactory(ModelRegistry({}), {}).build("rubric", "rubric"), get_policy("default")
    )
    result = loop(problem, context)
    assert result.outcome != "accepted" and "accepted" not in {r.decision for r in result.rounds}
    assert result.outcome != "error", result.stop_reason  # the offline panel never fails


def test_both_ends_of_the_screen_are_reached(loop: Loop) -> None:
    """The property above is not vacuous: the screen passes a sound problem and refuses a flawed one."""
    context = RunContext.of(
        PanelFactory(ModelRegistry({}), {}).build("rubric", "rubric"), get_policy("default")
    )
    sound = Problem(
        question="Ann has 3 apples and buys 4 more. How many apples does she have?", solution="3 + 4 = 7."
    )
    flawed = Problem(
        question="Ann has 3 apples and buys 4 more. How many apples does she have?", solution="3 + 4 = 8."
    )
    assert loop(sound, context).outcome == "screened"
    assert (
        loop(
            flawed, context.__class__(**{**vars(context), "policy": get_policy("default", max_rounds=1)})
        ).outcome
        == "exhausted"
    )


VERDICT = st.tuples(st.integers(0, 100), st.integers(0, 100), st.sampled_from(["a", "b", "same"]))


@settings(max_examples=200)
@given(
    rounds=st.lists(st.lists(VERDICT, min_size=7, max_size=7), min_size=1, max_size=3),
    policy=st.sampled_from(POLICY_NAMES),
    uncertified=st.none() | st.just("panel not certified"),
)
def test_no_verdicts_make_a_screen_accept(
    loop: Loop, rounds: list[list[tuple[int, int, str]]], policy: str, uncertified: str | None
) -> None:
    """Whatever a screen's judges say, in any round under any policy, its pass is never ``accepted``."""

    def script(judge: str, number: int) -> tuple[int, int, str]:
        score, confidence, why = rounds[min(number, len(rounds)) - 1][JUDGES.index(judge)]
        return score, confidence, f"{judge} {why}" if why != "same" else why

    context = context_of(script, policy=policy, screen=True, uncertified=uncertified)
    result = loop(ORCHESTRA, context)
    decisions = {r.decision for r in result.rounds}
    assert result.outcome != "accepted" and "accepted" not in decisions
    if "screened" in decisions:
        assert result.outcome == "screened" and result.stop_reason == SCREENED_REASON
