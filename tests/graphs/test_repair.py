"""The repair bench over labelled items: only flawed items with a key are run, a run that raised is
undecided (in no rate), and the figures are shares of the decided runs per reviser and flaw type."""

from __future__ import annotations

from collections.abc import Callable

from agents.labelled.labels import LabelledItem
from agents.labelled.repair import Repair
from agents.schemas import Problem
from graphs.benches.repair import RepairRun, keyed, repair_bench, summarise
from graphs.context import RunContext
from graphs.result import RunResult
from tests.helpers.driving import driving
from tests.helpers.repair_items import ITEM

CONTROL = LabelledItem(
    id="control",
    split="heldout",
    kind="control",
    question="Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    solution="3 × 4 = 12, so Tom has 12 apples.",
)


def run(item: str, flaw: str, verdict: str, reviser: str = "r") -> RepairRun:
    problem = Problem(question="Q?", solution="1")
    return RepairRun(item, "heldout", flaw, reviser, "x", 1, Repair(verdict), problem)  # type: ignore[arg-type]


def test_only_flawed_items_with_a_key_are_measured() -> None:
    unkeyed = ITEM.model_copy(update={"id": "no-key", "corrected": None})
    measured, missing = keyed([ITEM, CONTROL, unkeyed])
    assert [item.id for item, _ in measured] == ["rolls"] and missing == ["no-key"]


def test_figures_are_shares_of_the_decided_runs_per_reviser_and_flaw() -> None:
    runs = [
        run("a", "missing_data", "repaired"),
        run("b", "missing_data", "accepted_but_wrong"),
        run("c", "unit_mismatch", "gave_up"),
        run("d", "unit_mismatch", "undecided"),
        run("e", "unit_mismatch", "givens_changed", reviser="s"),
        run("f", "unit_mismatch", "unrevised", reviser="s"),
    ]
    summary = summarise(runs)
    assert list(summary) == ["r", "s"]
    overall = summary["r"]["overall"]
    assert (overall["runs"], overall["decided"]) == (4, 3)
    assert overall["repaired"] | {"low": None, "high": None} == {
        "n": 3, "count": 1, "rate": 1 / 3, "low": None, "high": None, "excluded": 1
    }  # fmt: skip
    assert 0.06 < overall["repaired"]["low"] < 0.07 and 0.79 < overall["repaired"]["high"] < 0.80
    assert summary["r"]["by_flaw"]["unit_mismatch"]["gave_up"]["n"] == 1
    assert (
        summary["s"]["overall"]["counts"] | {"givens_changed": 1, "unrevised": 1}
        == summary["s"]["overall"]["counts"]
    )
    assert summary["s"]["overall"]["decided"] == 2
    assert summary["s"]["overall"]["repaired"]["count"] == 0


async def test_a_run_that_raised_is_undecided_and_a_real_loop_is_classified(
    rubric_context: Callable[..., RunContext],
) -> None:
    async def crash(problem: Problem) -> RunResult:
        raise RuntimeError("endpoint gone")

    (crashed,) = await repair_bench([ITEM, CONTROL], crash, "r")
    assert crashed.repair.verdict == "undecided" and crashed.outcome == "error"
    assert crashed.repair.reasons == ("the run failed: RuntimeError: endpoint gone",)
    async with driving() as drive:
        (ran,) = await repair_bench([ITEM], lambda p: drive(p, rubric_context()), "rubric")
    # the offline reviser cannot fix this flaw: it returns the version unchanged, which is no revision
    assert (ran.outcome, ran.rounds, ran.repair.verdict) == ("exhausted", 1, "gave_up")
