"""What the validity bench measures (pure functions over judged versions).

- detection: flawed problems on which at least one judge of the flaw's labelled levels failed;
- false accepts: flawed problems the panel accepted;
- specificity: sound versions (controls and corrected versions) the panel accepted;
- adversarial gap: keyword-stuffed twins accepted ÷ twins (0 is the goal);
- per judge: Cohen's κ of its pass/fail with the labels (a judge should fail a flaw of its levels
  and pass a sound version), and its calibration: expected calibration error of its confidence
  against being right, with the reliability table behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from agents.schemas import JUDGES
from graphs.agreement import cohen_kappa
from graphs.validity import Judged

SPLITS = ("heldout", "tune", "all")


def _share(hits: Sequence[bool]) -> dict[str, Any]:
    return {"n": len(hits), "count": sum(hits), "rate": (sum(hits) / len(hits)) if hits else None}


def _detected(j: Judged) -> bool:
    return any(v.passed is False for v in j.votes if v.judge in j.levels) or bool(j.gate)


def summarise(judged: Sequence[Judged], split: str = "all") -> dict[str, Any]:
    """Every measure over one split ('tune', 'heldout' or 'all')."""
    subset = [j for j in judged if split == "all" or j.split == split]
    flawed = [j for j in subset if j.version == "flawed"]
    sound = [j for j in subset if j.version in ("control", "corrected")]
    twins = [j for j in subset if j.version == "twin"]
    paraphrases = [j for j in subset if j.version == "paraphrase"]
    return {
        "split": split,
        "detection": _share([_detected(j) for j in flawed]),
        "false_accept": _share([j.accepted for j in flawed]),
        "specificity": _share([j.accepted for j in sound]),
        "corrected_accepted": _share([j.accepted for j in subset if j.version == "corrected"]),
        "controls_accepted": _share([j.accepted for j in subset if j.version == "control"]),
        "adversarial_gap": _share([j.accepted for j in twins]),
        "paraphrases_accepted": _share([j.accepted for j in paraphrases]),
        "by_flaw": _by_flaw(flawed, twins),
        "judges": {judge: _judge(subset, judge) for judge in JUDGES},
        "false_accepts": sorted({j.item for j in flawed if j.accepted}),
        "rejected_sound": sorted({f"{j.item} ({j.version})" for j in sound if not j.accepted}),
        "twins_accepted": sorted({f"{j.item} ({j.twin})" for j in twins if j.accepted}),
    }


def _by_flaw(flawed: Sequence[Judged], twins: Sequence[Judged]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in sorted({j.flaw_type for j in flawed}):
        mine = [j for j in flawed if j.flaw_type == kind]
        stuffed = [j for j in twins if j.flaw_type == kind]
        out[kind] = {
            "n": len(mine),
            "detection": _share([_detected(j) for j in mine])["rate"],
            "false_accept": _share([j.accepted for j in mine])["rate"],
            "twins_accepted": _share([j.accepted for j in stuffed])["rate"],
        }
    return out


def _expected(j: Judged, judge: str) -> bool | None:
    """What the labels say this judge should do: pass a sound version, fail a flaw of its levels."""
    if j.should_pass:
        return True
    return False if judge in j.levels else None


def _judge(subset: Sequence[Judged], judge: str) -> dict[str, Any]:
    pairs = []  # (expected pass, voted pass, confidence)
    for j in subset:
        expected = _expected(j, judge)
        vote = next((v for v in j.votes if v.judge == judge), None)
        if expected is None or vote is None or vote.passed is None:
            continue
        pairs.append((expected, vote.passed, (vote.confidence or 0) / 100))
    kappa = cohen_kappa([e for e, _, _ in pairs], [v for _, v, _ in pairs]) if pairs else None
    return {
        "votes": len(pairs),
        "agreement": fmean(e == v for e, v, _ in pairs) if pairs else None,
        "kappa": kappa,
        **calibration([(c, e == v) for e, v, c in pairs]),
    }


def calibration(points: Sequence[tuple[float, bool]], bins: int = 10) -> dict[str, Any]:
    """Expected calibration error and its reliability table (confidence bins of width 1/bins)."""
    table = []
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, ok) for c, ok in points if low <= c < high or (index == bins - 1 and c == 1.0)]
        if inside:
            table.append(
                {
                    "low": low,
                    "high": high,
                    "n": len(inside),
                    "confidence": fmean(c for c, _ in inside),
                    "accuracy": fmean(ok for _, ok in inside),
                }
            )
    total = len(points)
    ece = sum(row["n"] / total * abs(row["accuracy"] - row["confidence"]) for row in table) if total else None
    return {"ece": ece, "reliability": table}


def targets_met(summary: dict[str, Any]) -> dict[str, bool]:
    """The project's bar for a judge panel (on the held-out third)."""
    rate: dict[str, float | None] = {key: value["rate"] for key, value in summary.items() if key in _SHARES}
    false_accept, specificity = rate["false_accept"], rate["specificity"]
    return {
        "false_accept <= 5%": false_accept is not None and false_accept <= 0.05,
        "specificity >= 90%": specificity is not None and specificity >= 0.90,
        "adversarial gap 0": rate["adversarial_gap"] in (None, 0.0),
        "every corrected version accepted": rate["corrected_accepted"] in (None, 1.0),
    }


_SHARES = ("false_accept", "specificity", "adversarial_gap", "corrected_accepted")
