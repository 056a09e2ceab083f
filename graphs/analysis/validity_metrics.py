"""What the validity bench measures (pure functions over judged versions).

Only versions on which the panel gave its verdict count: passed (accepted, or screened by the
offline panel) or refused (exhausted). A version that ended otherwise — ``error`` after failed
judge calls, ``needs_review`` without a quorum — is *excluded* from every rate's denominator and
counted apart (each share says how many of its versions were excluded), with the failed calls and
abstentions behind it. A failure is never a refusal, so it can never look like a detection.

- detection: flawed versions refused with a check whose label matches the flaw firing (a model's
  judge of the flaw's labelled levels failing *and naming the flaw's evidence*, an offline check of
  the flaw's type, the verifier's evidence of its kind, or a solver whose answer is the answer key:
  :mod:`agents.labelled.matching`, :mod:`agents.labelled.evidence`);
- solver accuracy: versions with an answer key (a flawed version's is its corrected version's
  answer, a sound version's its own) whose solver answered it;
- refused for another reason: flawed versions refused with no matching check firing (neither a
  detection nor a false accept);
- false accepts: flawed versions the panel passed (for the offline panel: let through its screen);
- specificity: sound versions (controls and corrected versions) the panel passed;
- adversarial gap: twins passed ÷ twins (0 is the goal);
- per judge: agreement and Cohen's κ of its pass/fail with the labels (a judge should fail a flaw
  of its levels and pass a sound version), and its calibration: expected calibration error of its
  confidence against being right, with the reliability table behind it.

Every rate is a share ``{"n", "count", "rate", "low", "high", "excluded"}``: ``count`` of ``n``
judged versions, the Wilson 95 % interval [low, high], and the versions of its kind excluded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from agents.schemas import JUDGES
from graphs.analysis.judged import Judged

SPLITS = ("heldout", "tune", "all")
# A target is claimed only on held-out problems, and only with this many judged flawed ones: below
# it the Wilson interval of a false-accept rate is too wide to say anything (0/60: 0–6.0 %).
MIN_FLAWED_FOR_TARGETS = 60


def share(hits: Sequence[bool], excluded: int = 0) -> dict[str, Any]:
    """``count`` of ``n``, its rate and Wilson 95 % interval (all None when ``n`` is 0)."""
    # NumPy loads with the first figure, not with the stores and the executor that import this module
    from graphs.analysis.statistics import wilson_interval

    n, count = len(hits), sum(hits)
    interval = wilson_interval(count, n)
    if interval is None:
        return {"n": 0, "count": 0, "rate": None, "low": None, "high": None, "excluded": excluded}
    rate = count / n
    # the interval holds its rate exactly (floating point leaves 1e-17 below 0/n otherwise)
    low, high = min(max(interval[0], 0.0), rate), max(min(interval[1], 1.0), rate)
    return {"n": n, "count": count, "rate": rate, "low": low, "high": high, "excluded": excluded}


def _share(versions: Sequence[Judged], hit: Any) -> dict[str, Any]:
    """The share of decided ``versions`` for which ``hit`` holds; the undecided ones are excluded."""
    decided = [j for j in versions if j.decided]
    return share([bool(hit(j)) for j in decided], len(versions) - len(decided))


def detected(j: Judged) -> bool:
    """Refused, with a check whose label matches the flaw firing."""
    return not j.passed and j.matched


def refused_otherwise(j: Judged) -> bool:
    """Refused, but no check of the flaw's kind fired: refused for another reason."""
    return not j.passed and not j.matched


def summarise(judged: Sequence[Judged], split: str = "all") -> dict[str, Any]:
    """Every measure over one split ('tune', 'heldout' or 'all')."""
    subset = [j for j in judged if split == "all" or j.split == split]
    flawed = [j for j in subset if j.version == "flawed"]
    sound = [j for j in subset if j.version in ("control", "corrected")]
    twins = [j for j in subset if j.version == "twin"]
    decided = [j for j in subset if j.decided]
    specificity = _share(sound, _passed)
    return {
        "split": split,
        "versions": len(subset),
        "judged": len(decided),
        "excluded": _excluded(subset),
        "calls": _calls(subset),
        "solver_failures": solver_failures(subset),
        "detection": _share(flawed, detected),
        "refused_other": _share(flawed, refused_otherwise),
        "solver_accuracy": share([bool(j.solver_right) for j in subset if j.solver_right is not None]),
        "false_accept": _share(flawed, _passed),
        "specificity": specificity,
        "corrected_accepted": _share([j for j in subset if j.version == "corrected"], _passed),
        "controls_accepted": _share([j for j in subset if j.version == "control"], _passed),
        "adversarial_gap": _share(twins, _passed),
        "paraphrases_accepted": _share([j for j in subset if j.version == "paraphrase"], _passed),
        "refuses_every_sound": specificity["n"] > 0 and specificity["count"] == 0,
        "by_flaw": _by_flaw(flawed, twins),
        "twin_forms": _twin_forms(twins),
        "judges": {judge: _judge(decided, judge) for judge in JUDGES},
        "false_accepts": sorted({j.item for j in flawed if j.decided and j.passed}),
        "refused_for_another_reason": sorted({j.item for j in flawed if j.decided and refused_otherwise(j)}),
        "rejected_sound": sorted({f"{j.item} ({j.version})" for j in sound if j.decided and not j.passed}),
        "twins_accepted": sorted({f"{j.item} ({j.twin})" for j in twins if j.decided and j.passed}),
    }


def _passed(j: Judged) -> bool:
    return j.passed


def _excluded(subset: Sequence[Judged]) -> dict[str, Any]:
    """The versions that did not end in the panel's verdict, by how they ended."""
    out = [j for j in subset if not j.decided]
    return {
        "total": len(out),
        "errored": sum(j.errored for j in out),
        "undecided": sum(not j.errored for j in out),
        "by_decision": dict(sorted(Counter(_how(j) for j in out).items())),
        "versions": sorted(f"{j.item} ({j.twin or j.version}): {_how(j)}" for j in out),
        "causes": [
            {"version": f"{j.item} ({j.twin or j.version})", "ended": _how(j), "causes": list(j.causes)}
            for j in sorted(out, key=lambda j: (j.item, j.twin or j.version))
        ],
    }


def solver_failures(subset: Sequence[Judged]) -> list[str]:
    """Each version whose solver call failed, with its cause (decided versions too: a failed solver
    call is neither a pass nor a fail, and is named here, not only in the log)."""
    return sorted(f"{j.item} ({j.twin or j.version}): {j.solver_failure}" for j in subset if j.solver_failure)


def _how(j: Judged) -> str:
    """How an excluded version ended: its decision, or that a judge call failed on the way to it."""
    return j.decision if j.decision == "error" or not j.failed_calls else f"{j.decision} after a failed call"


def _calls(subset: Sequence[Judged]) -> dict[str, int]:
    """Judge calls made, those that failed, and verdicts withheld (abstentions)."""
    return {
        "total": sum(len(j.votes) for j in subset),
        "failed": sum(j.failed_calls for j in subset),
        "abstained": sum(j.abstentions for j in subset),
    }


def _by_flaw(flawed: Sequence[Judged], twins: Sequence[Judged]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in sorted({j.flaw_type for j in flawed}):
        mine = [j for j in flawed if j.flaw_type == kind]
        stuffed = [j for j in twins if j.flaw_type == kind]
        out[kind] = {
            "n": len(mine),
            "detection": _share(mine, detected),
            "refused_other": _share(mine, refused_otherwise),
            "false_accept": _share(mine, _passed),
            "twins_accepted": _share(stuffed, _passed),
        }
    return out


def _twin_forms(twins: Sequence[Judged]) -> dict[str, Any]:
    """Twins passed, per form (bloom-verbs, wrong-variable, note-to-reviewer, ...)."""
    return {
        form: _share([j for j in twins if j.twin == form], _passed)
        for form in sorted({j.twin for j in twins})
    }


def _expected(j: Judged, judge: str) -> bool | None:
    """What the labels say this judge should do: pass a sound version, fail a flaw of its levels."""
    if j.should_pass:
        return True
    return False if judge in j.levels else None


def _judge(decided: Sequence[Judged], judge: str) -> dict[str, Any]:
    pairs = []  # (expected pass, voted pass, confidence)
    for j in decided:
        expected = _expected(j, judge)
        vote = next((v for v in j.votes if v.judge == judge), None)
        if expected is None or vote is None or vote.passed is None:
            continue
        pairs.append((expected, vote.passed, (vote.confidence or 0) / 100))
    from graphs.analysis.agreement import cohen_kappa  # NumPy, as in share()

    kappa = cohen_kappa([e for e, _, _ in pairs], [v for _, v, _ in pairs]) if pairs else None
    return {
        "votes": len(pairs),
        "agreement": share([e == v for e, v, _ in pairs]),
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


TARGETS = (
    "false_accept <= 5%",
    "specificity >= 90%",
    "adversarial gap 0",
    "every corrected version accepted",
)


def targets_met(summary: dict[str, Any]) -> dict[str, Any]:
    """The project's bar for a judge panel, claimed only where it can be: on the held-out split,
    with at least MIN_FLAWED_FOR_TARGETS judged flawed problems and no version excluded. Otherwise
    ``claimed`` is false, ``reason`` says why, and no target is called met or missed (None)."""
    reason = _unclaimable(summary)
    if reason:
        return {"split": summary["split"], "claimed": False, "reason": reason, "met": dict.fromkeys(TARGETS)}
    rate = {key: summary[key]["rate"] for key in _SHARES}
    false_accept, specificity = rate["false_accept"], rate["specificity"]
    met: dict[str, bool | None] = {
        "false_accept <= 5%": false_accept is not None and false_accept <= 0.05,
        "specificity >= 90%": specificity is not None and specificity >= 0.90,
        # A target with nothing to measure (no twins judged, no corrected version) is not met: unknown.
        "adversarial gap 0": None if rate["adversarial_gap"] is None else rate["adversarial_gap"] == 0.0,
        "every corrected version accepted": None
        if rate["corrected_accepted"] is None
        else rate["corrected_accepted"] == 1.0,
    }
    return {"split": summary["split"], "claimed": True, "reason": None, "met": met}


def _unclaimable(summary: dict[str, Any]) -> str | None:
    """Why no target can be claimed on this summary (None: they can)."""
    if summary["split"] != "heldout":
        return f"targets are claimed on a held-out split only (this is {summary['split']!r})"
    excluded = summary["excluded"]["total"]
    if excluded:
        return f"{excluded} version(s) did not end in the panel's verdict: the figures are incomplete"
    n = summary["false_accept"]["n"]
    if n < MIN_FLAWED_FOR_TARGETS:
        return f"not enough held-out flawed problems to claim (n = {n} < {MIN_FLAWED_FOR_TARGETS})"
    return None


_SHARES = ("false_accept", "specificity", "adversarial_gap", "corrected_accepted")
