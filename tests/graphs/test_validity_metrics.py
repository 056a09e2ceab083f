"""The validity bench's measures: what counts, what is excluded, and what may be claimed."""

from __future__ import annotations

import pytest

from agents.schemas import JUDGES
from graphs.analysis.judged import Judged
from graphs.analysis.validity_metrics import MIN_FLAWED_FOR_TARGETS, share, summarise, targets_met
from graphs.scoring import Vote
from tests.helpers.validity_metrics import PROPORTION, judged, votes


def test_wilson_interval_of_a_share_against_known_values() -> None:
    # 12/30: Wilson 95 % 0.2459–0.5768 (Newcombe 1998 method 3; statsmodels and R's prop.test agree)
    assert share([True] * 12 + [False] * 18) == {
        "n": 30,
        "count": 12,
        "rate": 0.4,
        "low": pytest.approx(0.2459, abs=5e-5),
        "high": pytest.approx(0.5768, abs=5e-5),
        "excluded": 0,
    }
    none = share([False] * 4)
    assert none["low"] == 0.0 and none["high"] == pytest.approx(0.4899, abs=5e-5)
    assert share([]) == {"n": 0, "count": 0, "rate": None, "low": None, "high": None, "excluded": 0}


def test_an_errored_version_is_excluded_from_every_rate_and_counted() -> None:
    down = votes(None, failed=True)
    versions = [
        judged("flawed", "error", item="a", cast=down),
        judged("corrected", "error", item="a", cast=down),
        judged("flawed", "exhausted", item="b", cast=votes(40), named=frozenset(PROPORTION)),
        judged("corrected", "accepted", item="b"),
        judged("control", "needs_review", item="c", cast=votes(None)),
    ]
    summary = summarise(versions, "all")
    assert summary["versions"] == 5 and summary["judged"] == 2
    assert summary["excluded"] == {
        "total": 3,
        "errored": 2,
        "undecided": 1,
        "by_decision": {"error": 2, "needs_review": 1},
        "versions": ["a (corrected): error", "a (flawed): error", "c (control): needs_review"],
        "causes": [
            {"version": "a (corrected)", "ended": "error", "causes": []},
            {"version": "a (flawed)", "ended": "error", "causes": []},
            {"version": "c (control)", "ended": "needs_review", "causes": []},
        ],
    }
    assert summary["calls"] == {"total": 35, "failed": 14, "abstained": 7}
    # the errored flawed version is neither a detection nor a false accept: it is in no denominator
    assert summary["detection"]["n"] == summary["false_accept"]["n"] == 1
    assert summary["detection"]["count"] == 1 and summary["detection"]["excluded"] == 1
    assert summary["specificity"] == share([True], excluded=2)
    assert summary["false_accepts"] == [] and summary["rejected_sound"] == []
    assert summary["judges"]["evaluate"]["votes"] == 2  # the excluded versions' votes are not counted


def test_a_panel_whose_calls_all_failed_claims_nothing() -> None:
    down = votes(None, failed=True)
    versions = [judged("flawed", "error", item=f"f{n}", cast=down) for n in range(70)]
    versions += [judged("control", "error", item=f"c{n}", cast=down) for n in range(10)]
    summary = summarise(versions, "heldout")
    for name in ("detection", "refused_other", "false_accept", "specificity", "adversarial_gap"):
        assert summary[name]["n"] == 0 and summary[name]["rate"] is None
    assert summary["excluded"]["errored"] == 80 and not summary["refuses_every_sound"]
    targets = targets_met(summary)
    assert targets["claimed"] is False and set(targets["met"].values()) == {None}
    assert "80 version(s) did not end in the panel's verdict" in targets["reason"]


def test_a_panel_that_refuses_everything_is_named() -> None:
    refusing = votes(20)
    versions = [judged("flawed", "exhausted", item=f"f{n}", cast=refusing) for n in range(4)]
    versions += [judged("control", "exhausted", item=f"c{n}", cast=refusing) for n in range(4)]
    summary = summarise(versions, "all")
    # refusing every flaw in words that name none of its evidence detects none of them
    assert summary["refused_other"]["rate"] == 1.0 and summary["detection"]["count"] == 0
    assert summary["false_accept"]["rate"] == 0.0
    assert summary["specificity"]["count"] == 0 and summary["specificity"]["n"] == 4
    assert summary["refuses_every_sound"] is True
    passing = summarise([*versions, judged("control", "accepted", item="ok")], "all")
    assert passing["refuses_every_sound"] is False


def test_screened_is_the_offline_panels_pass() -> None:
    flawed = judged("flawed", "screened", cast=votes(100, offline=True))
    sound = judged("control", "screened", item="c", cast=votes(100, offline=True))
    summary = summarise([flawed, sound], "all")
    assert summary["false_accept"]["count"] == 1 and summary["specificity"]["count"] == 1
    assert summary["false_accepts"] == ["i"]


@pytest.mark.parametrize(
    ("flaw", "cast", "gate", "expected"),
    [
        # offline: only a finding of a check mapped to the flaw's type is a detection
        ("missing_data", votes(offline=True, failing={"understand": ["all_data_given"]}), (), "detection"),
        ("missing_data", votes(offline=True, failing={"apply": ["units_consistent"]}), (), "refused_other"),
        ("unit_mismatch", votes(offline=True, failing={"apply": ["units_consistent"]}), (), "detection"),
        # a style finding matches no flaw
        ("missing_data", votes(offline=True, failing={"create": ["intent_kept"]}), (), "refused_other"),
        # a model's judge: one of the flaw's labelled levels failing, naming the flaw's evidence
        ("missing_data", votes(failing={"understand": []}), (), "detection"),
        ("missing_data", votes(failing={"apply": []}), (), "refused_other"),
        # the gate: a wrong computation matches an arithmetic flaw, the solver a wrong final answer
        ("arithmetic_symbolic", votes(), ("7 × 36 = 212 (wrong: it is 252)",), "detection"),
        ("missing_data", votes(), ("7 × 36 = 212 (wrong: it is 252)",), "refused_other"),
        (
            "wrong_operation",
            votes(),
            ("solver: the question's answer is 3; the solution says 12",),
            "detection",
        ),
        (
            "impossible_quantity",
            votes(),
            ("solver: the question's answer is 3; the solution says 12",),
            "refused_other",
        ),
    ],
)
def test_detection_needs_a_check_that_matches_the_flaw(
    flaw: str, cast: tuple[Vote, ...], gate: tuple[str, ...], expected: str
) -> None:
    from agents.labelled.labels import TAXONOMY

    # every judge names the evidence, and the solver reached the answer key: what is tested here is
    # which checks match which flaw (test_a_refusal_that_is_no_evidence_of_the_flaw_detects_nothing)
    levels = TAXONOMY[flaw][1]
    version = judged(
        "flawed",
        "exhausted",
        flaw=flaw,
        levels=levels,
        cast=cast,
        gate=gate,
        named=frozenset(JUDGES),
        solver_found=True,
    )
    summary = summarise([version], "all")
    assert summary[expected]["count"] == 1
    other = "refused_other" if expected == "detection" else "detection"
    assert summary[other]["count"] == 0 and summary["false_accept"]["count"] == 0
    assert summary["refused_for_another_reason"] == ([] if expected == "detection" else ["i"])


@pytest.mark.parametrize(
    ("cast", "gate", "named", "solver_found"),
    [
        # a judge of the labelled levels failed, in words naming none of the evidence
        (votes(failing={"understand": []}), (), frozenset(), False),
        # a judge naming the evidence, but not of the flaw's levels
        (votes(failing={"apply": []}), (), frozenset({"apply"}), False),
        # the solver disagreed with the stated solution without reaching the answer key
        (votes(), ("solver: the question's answer is 12; the solution says 30",), frozenset(), False),
    ],
)
def test_a_refusal_that_is_no_evidence_of_the_flaw_detects_nothing(
    cast: tuple[Vote, ...], gate: tuple[str, ...], named: frozenset[str], solver_found: bool
) -> None:
    version = judged(
        "flawed",
        "exhausted",
        flaw="missing_data" if not gate else "wrong_operation",
        levels=("understand", "evaluate") if not gate else ("apply", "analyze"),
        cast=cast,
        gate=gate,
        named=named,
        solver_found=solver_found,
    )
    summary = summarise([version], "all")
    assert summary["detection"]["count"] == 0 and summary["refused_other"]["count"] == 1


def test_a_flaw_let_through_is_no_detection_even_when_a_matching_judge_failed() -> None:
    cast = votes(failing={"evaluate": []})  # one judge of the flaw's levels failed, the panel passed it
    summary = summarise([judged("flawed", "accepted", cast=cast)], "all")
    assert summary["detection"]["count"] == 0 and summary["false_accept"]["count"] == 1


def _heldout(flawed: int, let_through: int = 0) -> list[Judged]:
    out = [
        judged("flawed", "accepted" if n < let_through else "exhausted", item=f"f{n}", cast=votes(20))
        for n in range(flawed)
    ]
    out += [judged("corrected", "accepted", item=f"f{n}") for n in range(flawed)]
    return out + [judged("control", "accepted", item=f"c{n}") for n in range(10)]


def test_targets_are_claimed_only_on_enough_held_out_flawed_problems() -> None:
    few = targets_met(summarise(_heldout(27), "heldout"))
    assert few["claimed"] is False and set(few["met"].values()) == {None}
    assert few["reason"] == "not enough held-out flawed problems to claim (n = 27 < 60)"
    enough = targets_met(summarise(_heldout(MIN_FLAWED_FOR_TARGETS), "heldout"))
    assert enough["claimed"] is True and enough["reason"] is None
    # No twin was judged: the gap is unknown, never "met" on nothing.
    assert enough["met"] == {
        "false_accept <= 5%": True,
        "specificity >= 90%": True,
        "adversarial gap 0": None,
        "every corrected version accepted": True,
    }
    missed = targets_met(summarise(_heldout(MIN_FLAWED_FOR_TARGETS, let_through=6), "heldout"))
    assert missed["claimed"] is True and missed["met"]["false_accept <= 5%"] is False
    tune = [replace_split(j, "tune") for j in _heldout(100)]
    assert "held-out split only" in targets_met(summarise(tune, "all"))["reason"]


def replace_split(j: Judged, split: str) -> Judged:
    from dataclasses import replace

    return replace(j, split=split)


def test_a_verdict_a_failed_call_helped_make_is_excluded_as_errored() -> None:
    """think-paper scores a round with a failed call (as 0): the version ends exhausted, yet a
    failure is no measurement, so it is excluded, counted as errored, and in no rate."""
    scored_failure = judged("flawed", "exhausted", cast=votes(None, failed=True))
    sound = judged("control", "accepted", item="c")
    summary = summarise([scored_failure, sound], "heldout")
    assert summary["excluded"]["total"] == 1 and summary["excluded"]["errored"] == 1
    assert summary["excluded"]["versions"] == ["i (flawed): exhausted after a failed call"]
    assert summary["false_accept"]["n"] == 0 and summary["detection"]["n"] == 0
    assert summary["calls"]["failed"] == 7


class _Crashing:
    """A judge whose code raises (a bug, not a failed call): the graph does not catch it."""

    async def assess(self, request: object) -> object:
        raise RuntimeError("a judge crashed")


async def test_a_version_that_crashes_is_its_own_error_and_the_bench_goes_on() -> None:
    from app.validity.service import builtin_set
    from graphs.benches.validity import bench
    from graphs.context import RunContext
    from graphs.scoring import get_policy
    from tests.helpers.driving import drive
    from tests.helpers.loop import EchoReviser

    items = builtin_set()[:2]
    context = RunContext(
        judges=dict.fromkeys(JUDGES, _Crashing()),  # type: ignore[arg-type]
        reviser=EchoReviser(),
        policy=get_policy("default"),
    )
    done = await bench(items, lambda problem: drive(problem, context), context.policy)
    assert done and all(j.decision == "error" for j in done)
    summary = summarise(done, "all")
    assert summary["excluded"]["errored"] == len(done) and summary["judged"] == 0
    assert all("RuntimeError: a judge crashed" in j.gate for j in done)


def test_a_version_held_for_review_with_every_verdict_given_is_a_verdict_and_no_pass() -> None:
    """needs_review after every judge voted (the verifier's hold, a split) is the panel's verdict:
    a held flawed version is no false accept, and a held sound one counts against specificity, so a
    panel that holds everything has no specificity to show (and no record passes the floor)."""
    versions = [
        judged("flawed", "needs_review", item="a"),
        judged("corrected", "needs_review", item="a"),
        judged("control", "accepted", item="b"),
    ]
    summary = summarise(versions, "all")
    assert summary["judged"] == 3 and summary["excluded"]["total"] == 0
    assert summary["false_accept"]["count"] == 0 and summary["false_accept"]["n"] == 1
    assert (summary["specificity"]["count"], summary["specificity"]["n"]) == (1, 2)
    assert summary["rejected_sound"] == ["a (corrected)"]
