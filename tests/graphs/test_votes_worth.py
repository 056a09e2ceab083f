"""What a panel's votes are worth: judges' error rates, error correlation, n_eff, the smallest subset,
and the self-preference warning."""

from __future__ import annotations

import pytest

from agents.schemas import JUDGES
from graphs.analysis.judged import Judged, Version
from graphs.analysis.votes_worth import effective_votes, family, phi, self_preference, votes_worth
from graphs.scoring import Vote, get_policy

POLICY = get_policy("default")


def cast(passing: set[str]) -> tuple[Vote, ...]:
    """Seven confident votes: the judges in ``passing`` at 95, the others at 20."""
    return tuple(Vote(judge, 95 if judge in passing else 20, 90, passed=judge in passing) for judge in JUDGES)


def version(kind: Version, passing: set[str], index: int) -> Judged:
    flawed = kind in ("flawed", "twin")
    votes = cast(passing)
    quality_pass = sum(v.passed is True for v in votes) == len(votes)
    return Judged(
        item=f"i{index}",
        split="heldout",
        flaw_type="missing_data" if flawed else "control",
        levels=("understand",) if flawed else (),
        version=kind,
        twin="",
        decision="accepted" if quality_pass else "exhausted",
        quality=None,
        votes=votes,
        gate=(),
    )


def test_phi_of_error_indicators_against_a_hand_count() -> None:
    # 2x2 table: n11 = 3, n10 = 1, n01 = 2, n00 = 4 → (12 − 2) / √(4·6·5·5) = 10 / √600
    a = dict(enumerate([True] * 3 + [True] + [False] * 2 + [False] * 4))
    b = dict(enumerate([True] * 3 + [False] + [True] * 2 + [False] * 4))
    assert phi(a, b) == pytest.approx(10 / 600**0.5)
    assert phi(a, a) == pytest.approx(1.0)
    assert phi(a, dict.fromkeys(a, False)) is None  # a judge that never erred: undefined


def test_kish_effective_votes() -> None:
    assert effective_votes(7, 0.0) == 7
    assert effective_votes(7, 1.0) == 1
    assert effective_votes(9, 0.5) == pytest.approx(9 / 5)
    assert effective_votes(7, -0.3) == 7  # never worth more than its judges
    assert effective_votes(7, None) is None


def test_seven_judges_that_err_together_are_worth_one_vote_and_one_judge_decides_as_all() -> None:
    everyone: set[str] = set(JUDGES)
    judged = [version("flawed", set(), i) for i in range(20)]  # caught by all
    judged += [version("flawed", everyone, 20 + i) for i in range(4)]  # let through by all
    judged += [version("control", everyone, 30 + i) for i in range(20)]
    judged += [version("control", set(), 60 + i) for i in range(3)]  # refused by all
    worth = votes_worth(judged, POLICY, "heldout")
    assert worth["m"] == 7 and worth["mean_phi"] == pytest.approx(1.0)
    assert worth["n_eff"] == pytest.approx(1.0)
    assert worth["judges"]["remember"]["count"] == 7 and worth["judges"]["remember"]["n"] == 47
    subset = worth["smallest_subset"]
    assert subset["size"] == 1 and subset["false_accept"]["count"] == 4
    assert subset["full"]["specificity"]["count"] == 20


def test_judges_that_err_apart_keep_more_of_their_votes() -> None:
    # each flawed version is let through by one judge only, a different one each time
    judged = [version("flawed", {judge}, i) for i, judge in enumerate(JUDGES * 3)]
    judged += [version("control", set(JUDGES), 100 + i) for i in range(10)]
    worth = votes_worth(judged, POLICY)
    assert worth["mean_phi"] is not None and worth["mean_phi"] < 0
    assert worth["n_eff"] == 7


def test_family_and_self_preference() -> None:
    assert family("gpt-4o-mini") == "gpt" and family("meta-llama/Llama-3.1-8B") == "llama"
    assert family("qwen2.5:7b") == "qwen"
    same = self_preference(["gpt-4o"], ["gpt-4o"])
    assert same == ["the judge model 'gpt-4o' is the model under test: it may prefer its own work"]
    kin = self_preference(["gpt-4o-2024-08-06"], ["gpt-4o-mini"])
    assert len(kin) == 1 and "same family (gpt)" in kin[0]
    assert self_preference(["qwen2.5:7b"], ["gemma-3-270m"]) == []
