"""Batch reports: per model and arm, the paper's figures and better ones, with uncertainty."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from agents.schemas import JUDGES
from app.models import Batch, BatchItem
from graphs.agreement import bootstrap_ci, cohen_matrix, fleiss_kappa
from graphs.paper_tables import LEVELS
from graphs.scoring import get_policy

REPORT_FORMATS = ("md", "json", "csv", "html")


def build_report(batch: Batch, items: Sequence[BatchItem]) -> dict[str, Any]:
    """Everything a researcher compares models by, from a batch's finished items."""
    groups: dict[tuple[str, str], list[BatchItem]] = {}
    for item in items:
        groups.setdefault((item.model, item.arm), []).append(item)
    rows = [_row(model, arm, group) for (model, arm), group in sorted(groups.items())]
    return {
        "batch": {
            "id": batch.id,
            "status": batch.status,
            "judge_model": batch.judge_model,
            "policy": batch.policy,
            "max_rounds": batch.max_rounds,
            "repeats": batch.repeats,
            "models": batch.models,
        },
        "rows": rows,
        "agreement": _agreement(batch, items),
        "feedback_vs_control": _versus(rows),
    }


def _row(model: str, arm: str, items: Sequence[BatchItem]) -> dict[str, Any]:
    metrics = [i.result["metrics"] for i in items if i.result]
    passed = [1.0 if m["passed"] else 0.0 for m in metrics]
    finals = [m["avg_quality_final"] for m in metrics if m["avg_quality_final"] is not None]
    steps = [m["avg_quality_all_steps"] for m in metrics if m["avg_quality_all_steps"] is not None]
    passers = [m["rounds_to_pass"] for m in metrics if m["rounds_to_pass"] is not None]
    return {
        "model": model,
        "arm": arm,
        "items": len(items),
        "pass_rate": fmean(passed) if passed else None,
        "pass_rate_ci95": bootstrap_ci(passed),
        "rounds_to_pass_passers": fmean(passers) if passers else None,
        "rounds_to_pass_censored": fmean(m["rounds_to_pass_censored"] for m in metrics) if metrics else None,
        "avg_quality_final": fmean(finals) if finals else None,
        "avg_quality_final_ci95": bootstrap_ci(finals),
        "avg_quality_all_steps": fmean(steps) if steps else None,
        "levels": _levels(items),
        "level_mean_final": _level_means(items),
        "quality_by_round": _quality_by_round(items),
        "rounds_to_pass_histogram": _rounds_histogram(metrics),
        **_calls(items),
        "input_tokens": sum(i.input_tokens for i in items),
        "output_tokens": sum(i.output_tokens for i in items),
        "cost_usd": round(sum(i.cost_usd for i in items), 6),
        "mean_llm_latency_s": fmean(i.latency_s for i in items) if items else None,
    }


def _calls(items: Sequence[BatchItem]) -> dict[str, int]:
    """LLM calls answered, HTTP retries behind them, and judges that abstained, summed."""
    counts = [(item.result or {}).get("calls", {}) for item in items]
    return {key: sum(c.get(key, 0) for c in counts) for key in ("llm_calls", "retries", "abstentions")}


def _levels(items: Sequence[BatchItem]) -> dict[str, dict[str, float | None]]:
    """Table 1 as the paper defines it: final-round level scores of multi-round items ÷ all items."""
    out: dict[str, dict[str, float | None]] = {}
    if not any(len((item.result or {}).get("rounds", [])) >= 2 for item in items):
        return {level: {"score": None, "change": None} for level in LEVELS}  # undefined: no revisions judged
    for level in LEVELS:
        finals, changes = 0.0, 0.0
        for item in items:
            rounds = (item.result or {}).get("rounds", [])
            if len(rounds) >= 2:
                final, previous = rounds[-1]["scores"].get(level), rounds[-2]["scores"].get(level)
                finals += final or 0.0
                changes += (final or 0.0) - (previous or 0.0)
        out[level] = {
            "score": finals / len(items) if items else None,
            "change": changes / len(items) if items else None,
        }
    return out


def _level_means(items: Sequence[BatchItem]) -> dict[str, float | None]:
    """Mean final-round score per level over every item (the radar plot's axes)."""
    finals = [(item.result or {}).get("rounds", [])[-1:] for item in items]
    out: dict[str, float | None] = {}
    for level in LEVELS:
        scores = [r[0]["scores"].get(level) for r in finals if r]
        present = [s for s in scores if s is not None]
        out[level] = fmean(present) if present else None
    return out


def _quality_by_round(items: Sequence[BatchItem]) -> list[dict[str, float | int]]:
    """Mean Q (0–100) of the items that reached each round."""
    by_round: dict[int, list[float]] = {}
    for item in items:
        for judged in (item.result or {}).get("rounds", []):
            if judged["quality"] is not None:
                by_round.setdefault(judged["round"], []).append(100 * judged["quality"])
    return [{"round": r, "mean_quality": fmean(q), "items": len(q)} for r, q in sorted(by_round.items())]


def _rounds_histogram(metrics: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many items passed at each round, and how many never did (never dropped)."""
    counts: dict[str, int] = {}
    for m in metrics:
        key = "never" if m["rounds_to_pass"] is None else str(m["rounds_to_pass"])
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: float("inf") if kv[0] == "never" else int(kv[0])))


def _agreement(batch: Batch, items: Sequence[BatchItem]) -> dict[str, Any]:
    """Fleiss' κ of the panel and pairwise Cohen's κ, over every judged version in the batch."""
    policy = get_policy(batch.policy)
    votes: dict[str, list[bool | None]] = {judge: [] for judge in JUDGES}
    for item in items:
        for judged in (item.result or {}).get("rounds", []):
            for judge in JUDGES:
                score = judged["scores"].get(judge)
                votes[judge].append(None if score is None else score >= policy.threshold(judge))
    return {
        "fleiss_kappa": fleiss_kappa(votes),
        "cohen_kappa": cohen_matrix(votes),
        "judged_versions": len(votes["remember"]),
    }


def _versus(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the feedback loop adds over one unguided revision, per model."""
    by_key = {(r["model"], r["arm"]): r for r in rows}
    out = []
    for (model, arm), loop in by_key.items():
        control = by_key.get((model, "control"))
        if arm != "loop" or control is None:
            continue
        out.append(
            {
                "model": model,
                "pass_rate_loop": loop["pass_rate"],
                "pass_rate_control": control["pass_rate"],
                "avg_quality_loop": loop["avg_quality_final"],
                "avg_quality_control": control["avg_quality_final"],
                "avg_quality_gain": None
                if loop["avg_quality_final"] is None or control["avg_quality_final"] is None
                else loop["avg_quality_final"] - control["avg_quality_final"],
            }
        )
    return out


CSV_FIELDS = (
    "model",
    "arm",
    "items",
    "pass_rate",
    "rounds_to_pass_passers",
    "rounds_to_pass_censored",
    "avg_quality_final",
    "avg_quality_all_steps",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "llm_calls",
    "retries",
    "abstentions",
)


def to_csv(report: dict[str, Any]) -> str:
    """One row per model and arm."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(report["rows"])
    return buffer.getvalue()


def _f(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(interval: Any, scale: float = 1.0) -> str:
    return "—" if not interval else f"{scale * interval[0]:.1f}–{scale * interval[1]:.1f}"


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables."""
    batch = report["batch"]
    lines = [
        f"# Batch {batch['id']} ({batch['status']})",
        "",
        f"Judges: `{batch['judge_model']}`, policy `{batch['policy']}`, max {batch['max_rounds']} rounds, "
        f"{batch['repeats']} repeat(s).",
        "",
        "| model | arm | items | pass rate (95% CI) | RoundsToPass (passers) | censored | "
        "AvgQualityScore final (95% CI) | all steps | tokens | cost $ |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_summary_line(r) for r in report["rows"]]
    lines += [
        "",
        "## Table 1: final score per Bloom level (change)",
        "",
        "| model | arm | " + " | ".join(LEVELS) + " |",
        "|---|---|" + "---|" * len(LEVELS),
    ]
    for r in report["rows"]:
        cells = [f"{_f(r['levels'][lvl]['score'])} ({_f(r['levels'][lvl]['change'])})" for lvl in LEVELS]
        lines.append(f"| {r['model']} | {r['arm']} | " + " | ".join(cells) + " |")
    agreement = report["agreement"]
    lines += [
        "",
        f"Judge agreement: Fleiss' κ = {_f(agreement['fleiss_kappa'], 3)} over "
        f"{agreement['judged_versions']} judged versions.",
    ]
    if report["feedback_vs_control"]:
        lines += [
            "",
            "## Feedback loop vs zero-shot control",
            "",
            "| model | pass rate loop | pass rate control | AvgQualityScore loop | control | gain |",
            "|---|---|---|---|---|---|",
        ]
        for v in report["feedback_vs_control"]:
            cells = [
                v["model"],
                _f(v["pass_rate_loop"]),
                _f(v["pass_rate_control"]),
                _f(v["avg_quality_loop"]),
                _f(v["avg_quality_control"]),
                _f(v["avg_quality_gain"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _summary_line(r: dict[str, Any]) -> str:
    pass_rate = None if r["pass_rate"] is None else 100 * r["pass_rate"]
    cells = [
        r["model"],
        r["arm"],
        str(r["items"]),
        f"{_f(pass_rate, 1)}% ({_ci(r['pass_rate_ci95'], 100)})",
        _f(r["rounds_to_pass_passers"]),
        _f(r["rounds_to_pass_censored"]),
        f"{_f(r['avg_quality_final'])} ({_ci(r['avg_quality_final_ci95'])})",
        _f(r["avg_quality_all_steps"]),
        str(r["input_tokens"] + r["output_tokens"]),
        _f(r["cost_usd"], 4),
    ]
    return "| " + " | ".join(cells) + " |"


def render_report(report: dict[str, Any], fmt: str) -> str:
    """The report in one of ``REPORT_FORMATS``."""
    if fmt == "json":
        return json.dumps(report, indent=2, default=str)
    if fmt == "html":
        from app.batches.html import to_html  # matplotlib loads only when a page is drawn

        return to_html(report)
    return to_csv(report) if fmt == "csv" else to_markdown(report)
