"""The batch report as Markdown, CSV or JSON text (HTML lives in ``html.py``)."""

from __future__ import annotations

import csv
import io
from typing import Any

from agents.schemas import JUDGES
from app.reporting.batch import DEFINITIONS
from app.reporting.cells import CSV_LINE_END, inert_row
from app.reporting.corrected_text import corrected_lines, corrected_rows, decisive_cell
from app.reporting.data import OUTCOME_KEYS
from app.reporting.manifest import manifest_lines
from app.reporting.repair_column import repair_cell
from app.reporting.warrant_text import both_figures, provenance
from graphs.analysis.paper_tables import LEVELS

CSV_FIELDS = (
    "model",
    "arm",
    *(f"items_{key}" for key in (*OUTCOME_KEYS, "total")),
    "scored_items",
    "problems",
    "pass_rate",
    "pass_rate_ci95_low",
    "pass_rate_ci95_high",
    "pass_rate_corrected",
    "pass_rate_corrected_ci95_low",
    "pass_rate_corrected_ci95_high",
    "pass_rate_ppi",
    "pass_rate_ppi_ci95_low",
    "pass_rate_ppi_ci95_high",
    "avg_quality_final",
    "avg_quality_final_ci95_low",
    "avg_quality_final_ci95_high",
    "avg_quality_all_steps",
    "rounds_to_pass_passers",
    "median_rounds_to_pass",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "cost_usd",
    "llm_calls",
    "retries",
    "abstentions",
    "top_error",
)


def _csv_row(row: dict[str, Any], corrected: dict[str, Any]) -> dict[str, Any]:
    flat = {key: value for key, value in row.items() if key in CSV_FIELDS}
    ppi = corrected.get("ppi") or {}
    flat["pass_rate_corrected"] = corrected.get("corrected")
    flat["pass_rate_corrected_ci95_low"], flat["pass_rate_corrected_ci95_high"] = corrected.get(
        "corrected_ci95"
    ) or (None, None)
    flat["pass_rate_ppi"] = ppi.get("estimate")
    flat["pass_rate_ppi_ci95_low"], flat["pass_rate_ppi_ci95_high"] = ppi.get("ci95") or (None, None)
    flat |= {f"items_{key}": n for key, n in row["items"].items()}
    for name in ("pass_rate", "avg_quality_final"):
        interval = row[f"{name}_ci95"] or (None, None)
        flat[f"{name}_ci95_low"], flat[f"{name}_ci95_high"] = interval
    flat["median_rounds_to_pass"] = (row["time_to_pass"] or {}).get("median")
    flat["top_error"] = row["errors"][0]["cause"] if row["errors"] else None
    return flat


def to_csv(report: dict[str, Any]) -> str:
    """One row per model and arm: outcome counts, then the scored statistics with their intervals
    (the pass rate raw, corrected for the judges' measured error, and prediction-powered; empty
    cells where the report has none)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator=CSV_LINE_END)
    writer.writeheader()
    corrected = corrected_rows(report)
    rows = (_csv_row(row, corrected.get((row["model"], row["arm"]), {})) for row in report["rows"])
    writer.writerows(inert_row(row) for row in rows)  # no cell runs as a formula
    return buffer.getvalue()


def f(value: Any, digits: int = 2) -> str:
    """A number for a table; an em dash for nothing."""
    return "—" if value is None else f"{value:.{digits}f}"


def ci(interval: Any, scale: float = 1.0, digits: int = 1) -> str:
    """An interval as low–high."""
    return "—" if not interval else f"{scale * interval[0]:.{digits}f}–{scale * interval[1]:.{digits}f}"


def p_value(value: float | None) -> str:
    """A p-value, small ones as < 0.001."""
    return "—" if value is None else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def median_rounds(survival: dict[str, Any] | None) -> str:
    """The Kaplan-Meier median rounds to pass with its interval ('> limit' when not reached)."""
    if not survival:
        return "—"
    if survival["median"] is None:
        return f"> {survival['limit']}"
    low, high = survival["median_ci95"] or (None, None)
    upper = str(high) if high is not None else f"> {survival['limit']}"
    return f"{survival['median']} ({low or '—'}–{upper})"


def repeats_line(repeats: dict[str, Any]) -> str:
    """What the report says about repeats."""
    if repeats["identical"] is None:
        return "One run per problem and model: statistics count problems."
    if repeats["identical"]:
        return (
            f"{repeats['repeats']} repeats per problem came out identical (temperature 0, cache): "
            "statistics count problems, not items."
        )
    return (
        f"{repeats['repeats']} repeats per problem differ: each problem's repeats are averaged "
        "before any interval, and the spread is shown below."
    )


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: outcomes, errors, scored statistics, by flaw type, Table 1, comparisons,
    agreement."""
    lines = _header(report) + _outcomes(report) + _scored(report) + corrected_lines(report)
    lines += _by_flaw(report) + _table1(report)
    lines += _comparisons(report) + _agreement(report) + _teachers(report) + _manifest(report)
    return "\n".join(lines) + "\n"


def _teachers(report: dict[str, Any]) -> list[str]:
    """How the judges agree with the teachers who reviewed this batch's runs (none reviewed: nothing)."""
    found = report.get("teachers")  # reports stored before reviews have none
    if not found:
        return []
    rows = [
        [judge, str(k["n"]), "–" if k["kappa"] is None else f"{k['kappa']:.3f}", _kappa_interval(k)]
        for judge, k in found["judges"].items()
    ]
    flawed = found["false_accept"]
    return [
        "",
        "## Judges against the teachers",
        "",
        f"{found['decided']} of this batch's runs decided by {found['reviewers']} teacher(s); Cohen's κ of "
        "each judge's pass or fail with the teacher's decision (95 % bootstrap interval):",
        "",
        *_table(["judge", "n", "κ", "95 % interval"], rows),
        "",
        f"- flawed by the teachers, passed by the panel: {flawed['count']} of {flawed['n']}",
        *(f"- {line['text']}" for line in found["audit"].values()),
    ]


def _kappa_interval(found: dict[str, Any]) -> str:
    return "–" if found["low"] is None else f"{found['low']:.3f}–{found['high']:.3f}"


def _manifest(report: dict[str, Any]) -> list[str]:
    manifest = report.get("manifest")  # reports stored before the manifest have none
    if not manifest:
        return []
    return ["", "## Manifest", "", *(f"- {line}" for line in manifest_lines(manifest))]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _header(report: dict[str, Any]) -> list[str]:
    batch, counts = report["batch"], report["outcomes"]
    # .get: a report stored before an outcome existed (screened) counts none of it
    tally = " · ".join(f"{key.replace('_', ' ')} {counts.get(key, 0)}" for key in OUTCOME_KEYS)
    return [
        f"# Batch {batch['id']} ({batch['status']})",
        "",
        f"Judges `{batch['judge_model']}`, policy `{batch['policy']}`, at most {batch['max_rounds']} rounds, "
        f"{batch['repeats']} repeat(s).",
        "",
        f"Items: {counts['total']} — {tally}.",
        "",
        repeats_line(report["repeats"]),
    ]


def _outcomes(report: dict[str, Any]) -> list[str]:
    rows = [
        [r["model"], r["arm"], str(r["items"]["total"]), *(str(r["items"].get(k, 0)) for k in OUTCOME_KEYS)]
        for r in report["rows"]
    ]
    lines = ["", "## Outcomes", "", *_table(["model", "arm", "items", *OUTCOME_KEYS], rows)]
    lines += _not_revised(report) + _warrants(report)
    errors = [
        [r["model"], r["arm"], str(e["count"]), e["cause"], e["example"][:120]]
        for r in report["rows"]
        for e in r["errors"]
    ]
    if errors:
        lines += [
            "",
            "### Errors (top causes)",
            "",
            *_table(["model", "arm", "items", "cause", "example"], errors),
        ]
    return lines


def _not_revised(report: dict[str, Any]) -> list[str]:
    """The exhausted items whose model under test did not revise, per model and arm."""
    counts = [f"{r['model']} ({r['arm']}) {r['not_revised']}" for r in report["rows"] if r.get("not_revised")]
    if not counts:
        return []
    return ["", "Exhausted because the model under test did not revise: " + ", ".join(counts) + "."]


def words(report: dict[str, Any]) -> dict[str, str]:
    """The names of a report's pass figures: a batch judged by the offline panel is a screen, and its
    pass rate and RoundsToPass say so (a screened item passed the screen; it was never accepted)."""
    if (report.get("batch") or {}).get("screen"):
        return {
            "pass_rate": "screen pass rate",
            "rounds_to_pass": "RoundsToPass (screen)",
            "scored": "screened or exhausted; the offline panel is a screen: a pass is an item that passed "
            "the screen, not an acceptance",
        }
    return {"pass_rate": "pass rate", "rounds_to_pass": "RoundsToPass", "scored": "accepted or exhausted"}


def _scored(report: dict[str, Any]) -> list[str]:
    said = words(report)
    keyed = any(r.get("repair") for r in report["rows"])  # the dataset's rows carry answer keys
    head = [
        "model",
        "arm",
        "scored items / problems",
        f"{said['pass_rate']} (95% Wilson)",
        "AvgQualityScore final (95% CI)",
        "all steps",
        f"{said['rounds_to_pass']} (passers)",
        *(["repaired (95% Wilson, of problems)"] if keyed else []),
        "median rounds to pass (KM, 95% CI)",
        "tokens (cached input)",
        "cost $",
    ]
    rows = []
    for r in report["rows"]:
        rate = None if r["pass_rate"] is None else 100 * r["pass_rate"]
        rows.append(
            [
                r["model"],
                r["arm"],
                f"{r['scored_items']} / {r['problems']}",
                f"{f(rate, 1)}% ({ci(r['pass_rate_ci95'], 100)})",
                f"{f(r['avg_quality_final'], 3)} ({ci(r['avg_quality_final_ci95'], digits=3)})",
                f(r["avg_quality_all_steps"], 3),
                f(r["rounds_to_pass_passers"]),
                *([repair_cell(r.get("repair"))] if keyed else []),
                median_rounds(r["time_to_pass"]),
                f"{r['input_tokens'] + r['output_tokens']} ({r['cached_input_tokens']})",
                f(r["cost_usd"], 4),
            ]
        )
    note = f"Over scored items only ({said['scored']}); the other outcomes are counted above."
    if keyed:
        note += (
            " Repaired: the final version passed, the verifier checked its chain, its answer is the "
            "corrected version's, its givens are the original's or the correction's, and it is not "
            "the flawed original unrevised."
        )
    return ["", "## Scored statistics", "", note, "", *_table(head, rows)]


def pass_cell(row: dict[str, Any]) -> str:
    """A pass rate in percent with its Wilson 95% interval, or an em dash when nothing was scored."""
    if row["pass_rate"] is None:
        return "—"
    return f"{f(100 * row['pass_rate'], 1)}% ({ci(row['pass_rate_ci95'], 100)})"


def _by_flaw(report: dict[str, Any]) -> list[str]:
    if not report.get("by_flaw"):  # no labels (or a report from before the section existed)
        return []
    said = words(report)
    head = ["model", "arm", "flaw", "items", *OUTCOME_KEYS, "scored", f"{said['pass_rate']} (95% Wilson)"]
    rows = [
        [
            r["model"],
            r["arm"],
            r["flaw"],
            str(r["items"]["total"]),
            *(str(r["items"].get(k, 0)) for k in OUTCOME_KEYS),
            str(r["scored_items"]),
            pass_cell(r),
        ]
        for r in report["by_flaw"]
    ]
    note = f"Flaw labels from the dataset's metadata.flaw; {said['pass_rate']} over scored items "
    note += f"({said['scored']})."
    return ["", "## By flaw type", "", note, "", *_table(head, rows)]


def _table1(report: dict[str, Any]) -> list[str]:
    paper, plain = DEFINITIONS["levels"], DEFINITIONS["level_mean_final"]
    rows = [
        [
            r["model"],
            r["arm"],
            *(f"{f(r['levels'][lvl]['score'])} ({f(r['levels'][lvl]['change'])})" for lvl in LEVELS),
        ]
        for r in report["rows"]
    ]
    means = [
        [r["model"], r["arm"], *(f((r.get("level_mean_final") or {}).get(j)) for j in JUDGES)]
        for r in report["rows"]
    ]
    return [
        "",
        "## Table 1: final score per Bloom level, the THiNK paper's definition (change)",
        "",
        f"The paper's definition: {paper['definition']}. Beside it, the {plain['name']}.",
        "",
        *_table(["model", "arm", *LEVELS], rows),
        "",
        f"### {plain['name'].capitalize()} (over all scored items)",
        "",
        f"{plain['definition'].capitalize()}.",
        "",
        *_table(["model", "arm", *JUDGES], means),
    ]


def _comparisons(report: dict[str, Any]) -> list[str]:
    if not report["comparisons"]:
        return []
    head = [
        "A",
        "B",
        "problems",
        "pass A",
        "pass B",
        "A only / B only",
        "McNemar p (Holm)",
        "ΔAvgQualityScore A−B (95% CI)",
        "Wilcoxon p (Holm)",
        "corrected pass A / B (95 %)",
    ]
    rows = [
        [
            c["a"],
            c["b"],
            str(c["problems"]),
            f(c["pass_rate_a"]),
            f(c["pass_rate_b"]),
            f"{c['a_only']} / {c['b_only']}",
            f"{p_value(c['mcnemar_p'])} ({p_value(c['mcnemar_p_holm'])})",
            f"{f(c['delta_avg_quality'], 3)} ({ci(c['delta_ci95'], digits=3)})",
            f"{p_value(c['delta_p'])} ({p_value(c['delta_p_holm'])})",
            decisive_cell(c),
        ]
        for c in report["comparisons"]
    ]
    return ["", "## Paired comparisons on the same problems", "", *_table(head, rows)]


def kappa(value: float | None, undefined: str | None, digits: int = 3) -> str:
    """A κ for a table: "undefined" (never 0.00) when the report says why it is undefined."""
    return "undefined" if value is None and undefined else f(value, digits)


def undefined_lines(agreement: dict[str, Any]) -> list[str]:
    """Why each undefined κ of one arm is undefined: Fleiss' κ, then Cohen's κ grouped by reason
    (reports stored before the reasons were kept have none)."""
    lines = []
    if agreement.get("fleiss_kappa_undefined"):
        lines.append(f"Fleiss' κ is undefined: {agreement['fleiss_kappa_undefined']}.")
    by_reason: dict[str, list[str]] = {}
    reasons = agreement.get("cohen_kappa_undefined") or {}
    judges = [j for j in JUDGES if j in reasons] + [j for j in reasons if j not in JUDGES]
    for index, left in enumerate(judges):
        for right in judges[index + 1 :]:
            if right in reasons[left]:
                by_reason.setdefault(reasons[left][right], []).append(f"{left}–{right}")
    for reason, pairs in by_reason.items():
        lines.append(f"Cohen's κ is undefined for {', '.join(pairs)}: {reason}.")
    return lines


def _agreement(report: dict[str, Any]) -> list[str]:
    head = ["arm", "judged versions", "Fleiss' κ", "Krippendorff's α", "Gwet's AC1", "pass rate per judge"]
    rows = []
    for arm, a in report["agreement"].items():
        rates = ", ".join(f"{j} {f(v)}" for j, v in a["judge_pass_rates"].items())
        rows.append(
            [
                arm,
                str(a["versions"]),
                kappa(a["fleiss_kappa"], a.get("fleiss_kappa_undefined")),
                f(a["krippendorff_alpha"], 3),
                f(a["gwet_ac1"], 3),
                rates,
            ]
        )
    notes = [f"- {arm}: {line}" for arm, a in report["agreement"].items() for line in undefined_lines(a)]
    lines = ["", "## Judge agreement (unique judged versions)", "", *_table(head, rows)]
    return [*lines, "", *notes] if notes else lines


def _warrants(report: dict[str, Any]) -> list[str]:
    """A line per arm with accepted items: how many acceptances carry a warrant, and under it each
    record cited: its bound with the flawed problems it rests on."""
    lines = []
    for row in report["rows"]:
        warrants = row.get("warrants") or {}
        if not warrants.get("valid") and not warrants.get("none"):
            continue
        lines.append(
            f"- {row['model']} / {row['arm']}: {warrants['valid']} accepted with a warrant, "
            f"{warrants['none']} with none (the panel was never validated)"
        )
        lines += [f"  - {cited_line(c)}" for c in warrants.get("cited") or []]
    return ["", "Warrants of the accepted items:", "", *lines] if lines else []


def cited_line(cited: dict[str, Any]) -> str:
    """One record a batch's acceptances cite: both its bounds with their n and split, its set and
    hash, and how many items cite it."""
    figure = both_figures(
        cited["false_accept_upper"],
        cited["n_flawed"],
        cited.get("sound_passed_lower"),
        int(cited.get("n_sound") or 0),
        cited["split"],
    )
    return f"{figure} ({provenance(cited)}): {cited['items']} item(s)"
