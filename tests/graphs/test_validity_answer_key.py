"""Detection is measured against the labels (issue 49, defect 3): a content-blind panel detects
nothing, whatever it refuses.

Content-blind scripted judges and a solver that always answers 12 ran over the shipped held-out
set. Before: any disagreement between the solver and the stated solution, and any failing judge of a
labelled level, counted as detecting the flaw, so the constant solver "detected" most flaws. Now a
solver detects only by reaching the answer key, and a judge only by naming the flaw's evidence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from agents.judges import JudgeRequest
from agents.labelled.labels import LabelledItem
from agents.labelled.matching import gate_matches
from agents.schemas import JUDGES, JudgeResult, Problem, Solution, SolverResult
from app.validity.service import builtin_set
from graphs.analysis.judged import Judged
from graphs.analysis.validity_metrics import summarise
from graphs.benches.validity import bench
from graphs.context import RunContext
from graphs.scoring import get_policy
from tests.helpers.driving import driving
from tests.helpers.loop import EchoReviser, ScriptedJudge


@dataclass
class ConstantSolver:
    """A solver that answers 12 to every question."""

    async def solve(self, problem: Problem, round_no: int) -> SolverResult:
        answer = Solution(working="It is 12.", answer="12", value=12.0, unit="")
        return SolverResult(round=round_no, solution=answer, model="constant", prompt_version="t")


def verifier_found(done: list[Judged]) -> int:
    """Flawed versions refused on the verifier's evidence of their flaw (a wrong computation)."""
    return sum(
        1
        for j in done
        if j.version == "flawed"
        and j.decided
        and not j.passed
        and any(not g.startswith("solver:") and gate_matches(g, j.flaw_types) for g in j.gate)
    )


def held_out(n: int) -> list[LabelledItem]:
    return [item for item in builtin_set() if item.split == "heldout"][:n]


async def judge_all(items: list[LabelledItem], score: int, rationale: str, solver: bool) -> list[Judged]:
    # each judge's own words (seven identical rationales would abstain as a degenerate panel)
    script: Callable[[str, int], tuple[int, int, str]] = lambda judge, _: (score, 90, f"{judge}: {rationale}")  # noqa: E731
    context = RunContext(
        judges=dict.fromkeys(JUDGES, ScriptedJudge(script)),
        reviser=EchoReviser(),
        policy=dataclasses.replace(get_policy("default"), max_rounds=1),
        solver=ConstantSolver() if solver else None,
    )
    async with driving() as drive:
        return await bench(items, lambda problem: drive(problem, context), context.policy)


async def test_a_constant_solver_detects_no_flaw_it_only_disagrees_with() -> None:
    done = await judge_all(held_out(40), 90, "Looks fine.", solver=True)
    summary = summarise(done, "all")
    refused = summary["detection"]["count"] + summary["refused_other"]["count"]
    assert refused >= 10  # the gate refused many flawed versions: 12 is seldom their answer
    # …and none of that is detection: only the verifier's own evidence of a wrong computation is
    assert summary["detection"]["count"] == verifier_found(done)
    accuracy = summary["solver_accuracy"]
    assert accuracy["n"] >= 20 and accuracy["rate"] < 0.1 and accuracy["high"] is not None


async def test_judges_that_fail_everything_in_the_same_words_detect_nothing() -> None:
    done = await judge_all(held_out(40), 40, "This is not right.", solver=False)
    summary = summarise(done, "all")
    flawed = summary["refused_other"]["n"]
    assert flawed >= 10 and summary["detection"]["count"] == verifier_found(done)
    # every other flawed version refused, for another reason
    assert summary["refused_other"]["count"] == flawed - verifier_found(done)


@dataclass
class QuotingJudge(ScriptedJudge):
    """Fails every version, its rationale quoting the flaw's labelled evidence (``quotes``, by
    question); a version with no flaw gets a content-blind sentence."""

    quotes: dict[str, str] = dataclasses.field(default_factory=dict)

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        said = self.quotes.get(request.problem.question, "this is not right")
        self.script = lambda judge, _: (40, 90, f"{judge}: {said}")
        return await super().assess(request)


async def test_judges_that_name_the_evidence_detect_it() -> None:
    items = [item for item in held_out(40) if item.kind == "flawed"]
    quotes = {item.question: item.flaws[0].evidence for item in items}
    context = RunContext(
        judges={judge: QuotingJudge(lambda j, r: (40, 90, ""), quotes) for judge in JUDGES},
        reviser=EchoReviser(),
        policy=dataclasses.replace(get_policy("default"), max_rounds=1),
    )
    async with driving() as drive:
        done = await bench(items, lambda problem: drive(problem, context), context.policy)
    summary = summarise(done, "all")
    assert summary["detection"]["n"] >= 10
    assert summary["detection"]["count"] == summary["detection"]["n"]  # every flaw named, every one found
