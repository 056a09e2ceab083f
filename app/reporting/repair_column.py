"""The batch report's repair column: when a batch's items carry an answer key (their dataset rows'
corrected versions, ``app.reporting.answer_keys``), how many of a model's problems it repaired.

Each finished item is classified by :func:`agents.labelled.repair.classify`: repaired only when
its final version passed the panel, the verifier checked its chain, its answer is the corrected
version's, its givens are the original's or the correction's, and it is not the item's problem
unrevised. As the pass rate counts them, the
unit is the problem: a problem's repeats are averaged first, and the Wilson 95 % interval is over
problems. Items with no verdict of the panel (error, needs review, cancelled) enter no rate; they
are counted as ``undecided``.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from agents.labelled.repair import Repair, classify
from agents.schemas import Problem
from app.reporting.data import Entry
from graphs.analysis.statistics import wilson_interval

RATES = ("repaired", "accepted_but_wrong", "gave_up")


def repair_figures(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """The repair rate, accepted but wrong and gave up over the keyed problems of ``entries``, each
    with its Wilson 95 % interval; None when no finished item carries an answer key."""
    verdicts: dict[str, list[Repair]] = {}
    for entry in entries:
        repair = _classified(entry)
        if repair is not None:
            verdicts.setdefault(entry.item.problem_id, []).append(repair)
    if not verdicts:
        return None
    decided = {problem: [r for r in mine if r.decided] for problem, mine in verdicts.items()}
    decided = {problem: mine for problem, mine in decided.items() if mine}
    out: dict[str, Any] = {
        "problems": len(decided),
        "undecided": sum(not r.decided for mine in verdicts.values() for r in mine),
    }
    for name in RATES:
        shares = [fmean(r.verdict == name for r in mine) for mine in decided.values()]
        out[name] = {
            "rate": fmean(shares) if shares else None,
            "ci95": wilson_interval(sum(shares), len(shares)),
        }
    return out


def _classified(entry: Entry) -> Repair | None:
    """A finished keyed item's repair verdict; None for an item with no key or not finished."""
    outcome = entry.item.outcome
    if entry.key is None or outcome is None:
        return None
    result = entry.result
    if result is None or not result.final_solution:  # it ended before any version was judged
        return Repair("undecided", (f"the item ended {outcome} with no judged version",))
    return classify(
        entry.key, outcome, Problem(question=result.final_question, solution=result.final_solution)
    )


def repair_cell(figures: dict[str, Any] | None) -> str:
    """The repair rate in percent with its Wilson 95 % interval and the problems it is over."""
    if not figures or figures["repaired"]["rate"] is None:
        return "—"
    rate, (low, high) = figures["repaired"]["rate"], figures["repaired"]["ci95"]
    return f"{100 * rate:.1f}% ({100 * low:.1f}–{100 * high:.1f}) of {figures['problems']}"
