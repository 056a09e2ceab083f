"""test_rubric.py's data sweeps, item by item and without LangGraph: the fast tier's copy.

The sweeps in test_rubric.py push every item through the refinement graph (``judge_once``, ~84 ms an
item) and stop at the first failure; they stay, in the slow tier. Here the same checks call the
judges, the scoring and the verification gate directly (~22 ms an item), one test per item so that a
failure names it. ``test_a_direct_round_decides_as_the_graph_does`` keeps the shortcut honest: on a
sample of the same items it must agree with ``judge_once`` in decision, Q and gate.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from agents.judges import JudgeRequest
from agents.reviser import RevisionRequest
from agents.rubric.panel import RubricJudge, RubricReviser
from agents.schemas import JUDGES, Problem
from agents.validity.labels import TAXONOMY, LabelledItem, read_labelled
from agents.validity.twins import paraphrase, stuffed
from agents.verify.text import with_digits
from graphs.context import RunContext
from graphs.refinement import gate_evidence, votes_of
from graphs.scoring import Decision, decide, gate, get_policy, score_round
from graphs.validity import judge_once
from tests.agents.test_rubric import KNOWN_MISSES, SET, _cases, _restated, findings, scores

CONTEXT = RunContext(
    judges={j: RubricJudge() for j in JUDGES}, reviser=RubricReviser(), policy=get_policy("default")
)
TUNE = [i for i in read_labelled(SET) if i.split == "tune"]
TUNE_FLAWED = [i for i in TUNE if i.kind == "flawed"]


async def judge_directly(problem: Problem) -> tuple[bool, str, float | None, list[str]]:
    """Round 1 of the loop on ``problem`` as the graph's ``judge`` and ``score`` nodes compute it
    (the rubric panel has no solver): accepted?, the decision, Q, the gate's evidence."""
    policy = replace(CONTEXT.policy, max_rounds=1)  # as judge_once: round 1 is the last round
    assert policy.judge_against == "original"  # round 1 is judged against the problem itself
    outcomes = [await CONTEXT.judges[j].assess(JudgeRequest(j, 1, problem, problem)) for j in JUDGES]
    result = score_round(votes_of(outcomes), policy)
    errors = gate_evidence(problem, None) if policy.verification_gate else []
    decision = gate(decide(result, 1, policy, None), 1, policy, len(errors))
    return decision is Decision.ACCEPTED, decision.value, result.quality, errors


def sound_versions(item: LabelledItem) -> list[Problem]:
    """The sound versions of a tune item, as test_every_sound_version_of_the_tune_split_is_accepted
    takes them: a flawed item's correction; a control and its paraphrase."""
    versions = [item.corrected] if item.kind == "flawed" else [item.problem, paraphrase(item).problem]
    assert all(v is not None for v in versions)
    return [v for v in versions if v is not None]


WRITTEN_SOUND = [
    pytest.param(c["question"], c["solution"], id=f"rubric-{n}")
    for n, c in enumerate(_cases("rubric_cases.jsonl"))
    if c["kind"] == "sound"
] + [
    pytest.param(c["question"], c["solution"], id=f"verifier-{c['id']}")
    for c in _cases("verifier_cases.jsonl")
    if not c["wrong"]
]
WRITTEN_FLAWED = [
    pytest.param(c, id=f"rubric-{n}")
    for n, c in enumerate(_cases("rubric_cases.jsonl"))
    if c["kind"] == "flawed"
]


@pytest.mark.parametrize("item", TUNE, ids=lambda i: i.id)
async def test_every_sound_version_of_the_tune_item_is_accepted(item: LabelledItem) -> None:
    for problem in sound_versions(item):
        accepted, decision, quality, gated = await judge_directly(problem)
        assert accepted, f"{item.id}: {decision} at Q = {quality}, gate {gated}"


@pytest.mark.parametrize("item", TUNE_FLAWED, ids=lambda i: i.id)
async def test_no_twin_of_the_tune_item_is_accepted(item: LabelledItem) -> None:
    missed = min((await scores(item.problem)).values()) >= 85
    assert missed is (item.id in KNOWN_MISSES), f"{item.id}: known miss {item.id in KNOWN_MISSES}"
    if missed:
        return
    for twin in stuffed(item):
        result = await scores(twin.problem)
        assert min(result.values()) < 85, f"{item.id} {twin.kind} was passed by every judge"


def test_every_known_miss_is_a_flawed_tune_item() -> None:
    assert set(KNOWN_MISSES) <= {i.id for i in TUNE_FLAWED}


@pytest.mark.parametrize("item", [i for i in TUNE_FLAWED if i.id not in KNOWN_MISSES], ids=lambda i: i.id)
async def test_restating_the_items_answer_or_numbering_its_steps_is_no_pass(item: LabelledItem) -> None:
    flips = [kind for kind, problem in _restated(item.problem) if (await judge_directly(problem))[0]]
    assert not flips, f"{item.id}: {flips}"


@pytest.mark.parametrize("item", TUNE_FLAWED, ids=lambda i: i.id)
async def test_no_repair_of_the_item_brings_a_number_into_the_question(item: LabelledItem) -> None:
    number = re.compile(r"\d+(?:\.\d+)?")
    problem = item.problem
    revision = await RubricReviser().revise(
        RevisionRequest(1, problem, problem, await findings(problem), ()), lambda _: None
    )
    if revision.problem is None:
        return
    before = set(number.findall(with_digits(problem.question)))
    after = set(number.findall(with_digits(revision.problem.question)))
    assert after <= before, f"{item.id}: {sorted(after - before)}"


@pytest.mark.parametrize(("question", "solution"), WRITTEN_SOUND)
async def test_a_sound_problem_written_apart_from_the_set_is_accepted(question: str, solution: str) -> None:
    accepted, decision, quality, gated = await judge_directly(Problem(question=question, solution=solution))
    assert accepted, f"{question}: {decision} at Q = {quality}, gate {gated}"


@pytest.mark.parametrize("case", WRITTEN_FLAWED)
async def test_a_flawed_problem_written_apart_from_the_set_is_caught(case: dict[str, str]) -> None:
    result = await scores(Problem(question=case["question"], solution=case["solution"]))
    caught = any(result[judge] < 85 for judge in TAXONOMY[case["type"]][1])
    assert caught is not bool(case.get("known_miss")), case["question"]


def _sample() -> list[Problem]:
    """Every 20th sound version and every 20th restated flawed one: both decisions are in it."""
    sound = [p for item in TUNE for p in sound_versions(item)]
    restated = [p for item in TUNE_FLAWED for _, p in _restated(item.problem)]
    return sound[::20] + restated[::20]


@pytest.mark.parametrize("problem", _sample(), ids=lambda p: p.question[:40])
async def test_a_direct_round_decides_as_the_graph_does(problem: Problem) -> None:
    accepted, decision, quality, _, gated = await judge_once(problem, CONTEXT)
    assert await judge_directly(problem) == (accepted, decision, quality, gated)
