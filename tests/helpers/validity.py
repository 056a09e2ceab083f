"""Validity: labelled items a bench or a record may rest on, the report's figures checked, and a bench report
made up."""

from __future__ import annotations

from typing import Any

from agents.schemas import JUDGES

SHARES = (
    "detection",
    "false_accept",
    "specificity",
    "corrected_accepted",
    "controls_accepted",
    "adversarial_gap",
    "paraphrases_accepted",
    "refused_other",
)


PROPORTION = ["evaluate", "analyze", "holistic"]


def flawed(item_id: str, question: str, solution: str, corrected: dict[str, str]) -> dict[str, Any]:
    """A false-proportionality item whose arithmetic is right (the verifier's gate finds nothing)."""
    flaw = {"type": "false_proportionality", "levels": PROPORTION, "evidence": "the time does not scale"}
    return {
        "id": item_id,
        "split": "tune",
        "kind": "flawed",
        "question": question,
        "solution": solution,
        "flaws": [flaw],
        "corrected": corrected,
    }


ITEMS = [
    flawed(
        "choir",
        "A choir of 12 singers sings a song that lasts 4 minutes. How long will the song last if 36 "
        "singers sing it together?",
        "36 ÷ 12 = 3, so there are 3 times as many singers. 4 × 3 = 12, so the song lasts 12 minutes.",
        {
            "question": "A choir of 12 singers drinks 4 bottles of water in a rehearsal. Every singer drinks "
            "the same amount. How many bottles will 36 singers drink?",
            "solution": "36 ÷ 12 = 3, so there are 3 times as many singers. 4 × 3 = 12 bottles.",
        },
    ),
    flawed(
        "trays",
        "One tray of cookies bakes in 15 minutes. Mia puts 3 trays in the big oven at the same time. "
        "How long do the cookies take to bake?",
        "Each tray takes 15 minutes, so 3 trays take 3 × 15 = 45 minutes.",
        {
            "question": "One tray of cookies bakes in 15 minutes. Mia's oven holds one tray, so she bakes "
            "3 trays one after another. How long does the baking take?",
            "solution": "Each tray takes 15 minutes, so 3 trays take 3 × 15 = 45 minutes.",
        },
    ),
    {
        "id": "apples",
        "split": "tune",
        "kind": "control",
        "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
        "solution": "3 × 4 = 12, so Tom has 12 apples.",
    },
]


def control(number: int) -> dict[str, Any]:
    """A sound control with numbers of its own (the verifier's gate finds nothing to refuse)."""
    bags, apples = 2 + number % 7, 3 + number
    return {
        "id": f"bags-{number}",
        "split": "tune",
        "kind": "control",
        "question": f"Ana has {bags} bags with {apples} apples in each bag. How many apples does Ana have?",
        "solution": f"{bags} × {apples} = {bags * apples}, so Ana has {bags * apples} apples.",
    }


# A set a validity record may rest on: ITEMS and 18 more controls, 21 sound versions in all (a record
# needs at least app.validity.provenance.MIN_SOUND, 20)
RECORDABLE = ITEMS + [control(number) for number in range(18)]


def assert_share(share: dict[str, Any]) -> None:
    """A share is count of n with its rate inside its Wilson interval (all null when n is 0)."""
    assert 0 <= share["count"] <= share["n"] and share["excluded"] >= 0
    if share["n"] == 0:
        assert share["rate"] is share["low"] is share["high"] is None
    else:
        assert share["rate"] == share["count"] / share["n"]
        assert 0.0 <= share["low"] <= share["rate"] <= share["high"] <= 1.0


def assert_figures(report: dict[str, Any]) -> None:
    """Every share and judge figure is a number in [0, 1] (or null when it has nothing to count),
    and the flawed versions judged split exactly into detected, refused otherwise and passed."""
    for summary in report["splits"].values():
        for name in SHARES:
            assert_share(summary[name])
        parts = [summary[name]["count"] for name in ("detection", "refused_other", "false_accept")]
        assert sum(parts) == summary["false_accept"]["n"]
        assert summary["judged"] + summary["excluded"]["total"] == summary["versions"]
        for row in summary["by_flaw"].values():
            for name in ("detection", "refused_other", "false_accept", "twins_accepted"):
                assert_share(row[name])
        assert set(summary["judges"]) == set(JUDGES)
        for judge in summary["judges"].values():
            assert_share(judge["agreement"])
            assert judge["agreement"]["n"] == judge["votes"]
            assert judge["ece"] is None or 0.0 <= judge["ece"] <= 1.0
            assert judge["kappa"] is None or -1.0 <= judge["kappa"] <= 1.0
            assert sum(row["n"] for row in judge["reliability"]) == judge["votes"]


def report(
    flawed: tuple[int, int], errored: int = 0, split: str = "heldout", sound: tuple[int, int] = (38, 40)
) -> dict[str, Any]:
    """A bench report whose headline split accepted ``flawed[0]`` of ``flawed[1]`` flawed problems
    and passed ``sound[0]`` of ``sound[1]`` sound versions."""
    count, n = flawed
    passed, judged = sound
    summary = {
        "split": split,
        "false_accept": {"n": n, "count": count, "rate": count / n if n else None},
        "specificity": {"n": judged, "count": passed, "rate": passed / judged if judged else None},
        "detection": {"n": n, "count": n - count, "rate": (n - count) / n if n else None},
        "adversarial_gap": {"n": 12, "count": 3, "rate": 0.25},
    }
    return {
        "judge_model": "judge",
        "policy": "default",
        "versions": n + 40,
        "excluded": {"total": errored, "errored": errored, "undecided": 0},
        "splits": {split: summary, "all": summary | {"split": "all"}},
        "targets": {"split": split},
    }
