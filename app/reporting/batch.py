"""Batch reports: every item counted by outcome, and statistics over the scored ones only.

An item is *scored* when its outcome is the model's pass or failure (accepted, screened,
exhausted). Items that ended in error, needs_review or cancelled are counted with their causes and
never enter a pass rate or an average. A batch judged by the offline panel is a *screen*
(``batch.screen``): its passes are ``screened`` items, reported as "screen pass rate" and
"RoundsToPass (screen)" — passed the screen, never accepted. The unit of analysis is the
problem: repeats of a problem are averaged first (and, when they are identical, counted once),
so intervals are not narrowed by copies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from agents.llm.models import OFFLINE_MODEL
from agents.outcome import Outcome
from agents.schemas import JUDGES
from app.models import Batch
from app.reporting.comparisons import comparisons
from app.reporting.corrected import calibration_of, correction
from app.reporting.data import (
    Entry,
    by_problem,
    outcome_counts,
    pass_summary,
    problem_quality,
)
from app.reporting.flaws import by_flaw
from app.reporting.item_result import ItemResult
from app.reporting.manifest import Served, complete_manifest
from app.reporting.repair_column import repair_figures
from graphs.analysis.agreement import (
    cohen_matrix,
    cohen_undefined_reasons,
    fleiss_kappa,
    fleiss_undefined,
    gwet_ac1,
    krippendorff_alpha,
    pass_rates,
)
from graphs.analysis.paper_tables import LEVELS
from graphs.analysis.statistics import bootstrap_ci, kaplan_meier
from graphs.revising import NOT_REVISED
from graphs.scoring import get_policy

# One name per number: the paper's Table 1 figure and the plain mean are different numbers (an item that
# passed in round 1 counts 0 in the first and its score in the second), so every report names both.
DEFINITIONS = {
    "levels": {
        "name": "final score per Bloom level (the THiNK paper's definition, its Table 1)",
        "definition": "per level, the final-round scores of the items judged at least twice, summed and "
        "divided by the number of all scored items, so an item that passed in round 1 counts 0; the "
        "change is the same sum of (final minus previous round) over all scored items; undefined when "
        "no item was judged twice (the one-round control arm)",
    },
    "level_mean_final": {
        "name": "mean final score per level",
        "definition": "per judge (the six levels and the holistic judge), the mean of every scored item's "
        "final-round score, whatever round it ended in",
    },
}


def build_report(
    batch: Batch,
    entries: Sequence[Entry],
    flaws: Mapping[str, str] | None = None,
    served: Served | None = None,
    teachers: Mapping[str, Any] | None = None,
    labels: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """Everything a researcher compares models by, from every item of a batch with its result
    (``data.load_entries``); ``flaws`` maps a problem to its labelled flaw (its dataset metadata's
    ``flaw``), for the by-flaw section; ``teachers``: how the judges agree with the teachers' review
    decisions on the batch's runs (``app.reviews.agreement``), when any was decided; ``labels``: run id →
    the teacher's sound or flawed on its final version (``corrected.batch_labels``), for PPI."""
    arms = ("loop", "control") if batch.control_arm else ("loop",)
    groups: dict[tuple[str, str], list[Entry]] = {(m, a): [] for m in batch.models for a in arms}
    for entry in entries:
        groups.setdefault((entry.item.model, entry.item.arm), []).append(entry)
    repeats = repeat_summary(groups, batch.repeats)
    limits = {"loop": batch.max_rounds, "control": 1}
    rows = [
        _row(model, arm, group, limits.get(arm, batch.max_rounds), repeats["identical"])
        for (model, arm), group in groups.items()
    ]
    found = calibration_of(entries)  # the record the batch's passes are corrected by, or why none
    return {
        "definitions": DEFINITIONS,
        "batch": {
            "id": batch.id,
            "status": batch.status,
            "judge_model": batch.judge_model,
            # The offline panel screens: its passes are "passed the screen", never acceptances.
            "screen": batch.judge_model == OFFLINE_MODEL,
            "policy": batch.policy,
            "max_rounds": batch.max_rounds,
            "repeats": batch.repeats,
            "models": batch.models,
            "control_arm": batch.control_arm,
        },
        "outcomes": outcome_counts([e for group in groups.values() for e in group]),
        "repeats": repeats,
        "rows": rows,
        "agreement": {arm: _agreement(batch, groups, arm) for arm in arms},
        # each arm's pass rate raw and corrected for the panel's measured error (or why not)
        "correction": correction(groups, found, labels),
        "comparisons": comparisons(groups, arms, found[0]),
        "by_flaw": by_flaw(groups, flaws or {}),
        "teachers": dict(teachers) if teachers and teachers.get("decided") else None,
        "manifest": complete_manifest(batch, [e.item for e in entries], served),
    }


def _error_causes(entries: Sequence[Entry], top: int = 5) -> list[dict[str, Any]]:
    """The most frequent causes of error, grouped by model, host, status and exception."""
    causes: Counter[str] = Counter()
    example: dict[str, str] = {}
    for entry in entries:
        if entry.item.outcome != Outcome.ERROR:
            continue
        failure = entry.item.failure or {}
        where = str(failure.get("model") or entry.item.model)
        if failure.get("host"):
            where += f" @ {failure['host']}"
        status = f"HTTP {failure['status']} " if failure.get("status") else ""
        key = f"{where}: {status}{failure.get('exception') or 'error'}"
        causes[key] += 1
        example.setdefault(key, failure.get("message") or entry.item.error or "")
    return [{"cause": k, "count": n, "example": example[k]} for k, n in causes.most_common(top)]


def _row(
    model: str, arm: str, entries: Sequence[Entry], limit: int, identical: bool | None
) -> dict[str, Any]:
    problems = by_problem(entries)
    scored = [r for results in problems.values() for r in results]
    qualities = [q for q in (problem_quality(results) for results in problems.values()) if q is not None]
    steps = [
        r.figures["avg_quality_all_steps"] for r in scored if r.figures["avg_quality_all_steps"] is not None
    ]
    units = [results[0] for results in problems.values()] if identical else scored
    survival = kaplan_meier([r.figures["rounds_to_pass"] for r in units], limit)
    passers = [r.figures["rounds_to_pass"] for r in scored if r.figures["rounds_to_pass"] is not None]
    return {
        "model": model,
        "arm": arm,
        "items": outcome_counts(entries),
        # exhausted because the model under test did not revise (its failure, counted apart too)
        "not_revised": sum(
            e.result is not None and e.result.stop_reason.startswith(NOT_REVISED) for e in entries
        ),
        "errors": _error_causes(entries),
        "warrants": warrant_summary(entries),
        **pass_summary(problems),
        "avg_quality_final": fmean(qualities) if qualities else None,
        "avg_quality_final_ci95": bootstrap_ci(qualities),
        "avg_quality_all_steps": fmean(steps) if steps else None,
        "rounds_to_pass_passers": fmean(passers) if passers else None,
        "repair": repair_figures(entries),  # None unless the dataset's rows carry answer keys
        "time_to_pass": None if survival is None else _survival(survival),
        "levels": _levels(scored),
        "level_mean_final": _level_means(scored),
        "quality_by_round": _quality_by_round(scored),
        **_calls(entries),
        "input_tokens": sum(e.item.input_tokens for e in entries),
        "cached_input_tokens": sum(e.item.cached_input_tokens for e in entries),
        "output_tokens": sum(e.item.output_tokens for e in entries),
        "cost_usd": round(sum(e.item.cost_usd for e in entries), 6),
        "mean_llm_latency_s": fmean(e.item.latency_s for e in entries) if entries else None,
    }


def warrant_summary(entries: Sequence[Entry]) -> dict[str, Any]:
    """What the accepted items' acceptances are worth: how many carry a warrant (their panel's
    validity record) and how many none, the largest false-accept upper bound cited, and each record
    cited with its bound, the flawed problems it rests on (n) and their split, and how many items
    cite it (the largest bound first)."""
    warrants = [e.result.warrant for e in entries if e.result is not None and e.result.warrant is not None]
    valid = [w for w in warrants if w.get("status") == "valid"]
    bounds = [w["false_accept_upper"] for w in valid if w.get("false_accept_upper") is not None]
    cited: dict[str, dict[str, Any]] = {}
    for w in valid:
        record = cited.setdefault(
            str(w["record_id"]),
            {
                "record_id": str(w["record_id"]),
                "false_accept_upper": w.get("false_accept_upper"),
                "n_flawed": int((w.get("false_accept") or {}).get("n") or 0),
                "sound_passed_lower": w.get("sound_passed_lower"),
                "n_sound": int((w.get("specificity") or {}).get("n") or 0),
                "split": w.get("split"),
                "set": w.get("set"),
                "set_hash": w.get("set_hash"),
                "source": w.get("source"),  # shipped, file, benchmark or reviews (None: not kept)
                "items": 0,
            },
        )
        record["items"] += 1
    return {
        "valid": len(valid),
        "none": len(warrants) - len(valid),
        "false_accept_upper_max": max(bounds) if bounds else None,
        "records": sorted(cited),
        "cited": sorted(cited.values(), key=lambda r: (-(r["false_accept_upper"] or 0.0), r["record_id"])),
    }


def _survival(survival: Any) -> dict[str, Any]:
    return {
        "units": survival.items,
        "passed": survival.passed,
        "limit": survival.limit,
        "median": survival.median,
        "median_ci95": survival.median_ci95,
        "curve": [
            {"round": p.round, "not_passed": p.not_passed, "low": p.low, "high": p.high}
            for p in survival.curve
        ],
    }


def _calls(entries: Sequence[Entry]) -> dict[str, int]:
    """LLM calls answered, HTTP retries behind them, and judges that abstained, summed."""
    counts = [e.result.calls for e in entries if e.result is not None]
    return {
        "llm_calls": sum(c.llm_calls for c in counts),
        "retries": sum(c.retries for c in counts),
        "abstentions": sum(c.abstentions for c in counts),
    }


def _levels(scored: Sequence[ItemResult]) -> dict[str, dict[str, float | None]]:
    """Table 1 as the paper defines it: final-round level scores of multi-round items ÷ all items."""
    if not any(len(r.rounds) >= 2 for r in scored):
        return {level: {"score": None, "change": None} for level in LEVELS}  # undefined: no revisions judged
    out: dict[str, dict[str, float | None]] = {}
    for level in LEVELS:
        finals, changes = 0.0, 0.0
        for result in scored:
            if len(result.rounds) >= 2:
                final, previous = result.rounds[-1].scores.get(level), result.rounds[-2].scores.get(level)
                finals += final or 0.0
                changes += (final or 0.0) - (previous or 0.0)
        out[level] = {"score": finals / len(scored), "change": changes / len(scored)}
    return out


def _level_means(scored: Sequence[ItemResult]) -> dict[str, float | None]:
    """Mean final-round score per level (holistic included) over the scored items."""
    out: dict[str, float | None] = {}
    for level in JUDGES:
        present = [s for r in scored if r.rounds and (s := r.rounds[-1].scores.get(level)) is not None]
        out[level] = fmean(present) if present else None
    return out


def _quality_by_round(scored: Sequence[ItemResult]) -> list[dict[str, float | int]]:
    """Mean Q (0-1) of the scored items that reached each round."""
    by_round: dict[int, list[float]] = {}
    for result in scored:
        for judged in result.rounds:
            if judged.quality is not None:
                by_round.setdefault(judged.round, []).append(judged.quality)
    return [{"round": r, "mean_quality": fmean(q), "items": len(q)} for r, q in sorted(by_round.items())]


def repeat_summary(groups: dict[tuple[str, str], list[Entry]], repeats: int) -> dict[str, Any]:
    """Whether repeats of a problem came out identical (temperature 0, cache) or how far they differ."""
    if repeats < 2:
        return {"repeats": repeats, "identical": None, "unit": "problem", "spread": {}}
    spread: dict[str, dict[str, Any]] = {}
    identical = True
    for (model, arm), entries in groups.items():
        repeated = [results for results in by_problem(entries).values() if len(results) >= 2]
        signatures = [{_signature(r) for r in results} for results in repeated]
        identical &= all(len(s) == 1 for s in signatures)
        discordant = sum(1 for results in repeated if len({bool(r.figures["passed"]) for r in results}) > 1)
        sds = [_sd([r.figures["avg_quality_final"] or 0.0 for r in results]) for results in repeated]
        spread[f"{model}/{arm}"] = {
            "problems": len(repeated),
            "discordant_pass": discordant,
            "mean_sd_quality": fmean(sds) if sds else None,
        }
    return {
        "repeats": repeats,
        "identical": identical,
        "unit": "problem" if identical else "item",
        "spread": spread,
    }


def _signature(result: ItemResult) -> tuple[object, ...]:
    return (result.outcome, tuple((r.version, r.quality) for r in result.rounds))


def _sd(values: Sequence[float]) -> float:
    mean = fmean(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0


def _agreement(batch: Batch, groups: dict[tuple[str, str], list[Entry]], arm: str) -> dict[str, Any]:
    """Judge agreement over the arm's unique judged versions (each version once, whoever made it)."""
    policy = get_policy(batch.policy)
    seen: set[str] = set()
    votes: dict[str, list[bool | None]] = {judge: [] for judge in JUDGES}
    for (_, group_arm), entries in groups.items():
        if group_arm != arm:
            continue
        for entry in entries:
            for judged in entry.result.rounds if entry.result else []:
                if judged.version and judged.version in seen:
                    continue
                seen.add(judged.version)
                for judge in JUDGES:
                    score = judged.scores.get(judge)
                    votes[judge].append(None if score is None else score >= policy.threshold(judge))
    return {
        "versions": len(votes["remember"]),
        "fleiss_kappa": fleiss_kappa(votes),
        # Why Fleiss' κ is null (e.g. every judge passed every version), null when it is defined.
        "fleiss_kappa_undefined": fleiss_undefined(votes),
        "krippendorff_alpha": krippendorff_alpha(votes),
        "gwet_ac1": gwet_ac1(votes),
        "judge_pass_rates": pass_rates(votes),
        # Pairwise Cohen's κ: null where undefined, and why in cohen_kappa_undefined[judge][other]
        # (e.g. a judge that passed every version: the formula would give a meaningless 0).
        "cohen_kappa": cohen_matrix(votes),
        "cohen_kappa_undefined": cohen_undefined_reasons(votes),
    }
