"""What must hold whatever a junk model writes (issue 36): every failure is an outcome with its
cause, no failure is a score, and the numbers reported add up.

Each function takes what the project printed or served (a run's JSON, a batch report, a validity
report) and fails with the first thing that does not hold, naming it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# Every way a run or an item may end; `screened` is the offline panel's "found nothing".
OUTCOMES = {"accepted", "exhausted", "needs_review", "error", "cancelled", "screened"}
# Fields that read as a score of the run: an error run must carry none of them with a value.
SCORE_FIELDS = (
    "passed",
    "rounds_to_pass",
    "rounds_to_pass_censored",
    "avg_quality_final",
    "avg_quality_all_steps",
    "quality_change",
)


def words(text: str) -> str:
    """Text compared as a person would: case and runs of whitespace ignored."""
    return " ".join(text.split()).casefold()


def assert_run(result: dict[str, Any], exit_code: int | None = None) -> None:
    """A run's JSON (``refine --json``, or the API's trace) tells the truth about its failures."""
    outcome = result.get("outcome") or result.get("status")
    assert outcome in OUTCOMES, f"unknown outcome {outcome!r}"
    if exit_code is not None:
        assert (exit_code != 0) == (outcome == "error"), f"exit {exit_code} for outcome {outcome}"
    for judged in result["rounds"]:
        assert_round(judged, result)
    for revision in result.get("revisions", []):
        assert_revision(revision)
    if outcome == "error":
        assert_error_run(result)
    if outcome in ("accepted", "exhausted") and result["rounds"]:
        last = result["rounds"][-1]
        assert last["quality"] is not None, "a scored run whose last round has no quality"


def assert_error_run(result: dict[str, Any]) -> None:
    """An error run names its cause and carries nothing that reads as a score."""
    cause = result.get("failure") or {}
    assert cause or result.get("stop_reason"), "an error run without a cause"
    if cause:
        assert cause.get("model") and cause.get("exception") and cause.get("message"), cause
    metrics = result.get("metrics") or {}
    scored = {k: metrics[k] for k in SCORE_FIELDS if metrics.get(k) is not None}
    assert not scored, f"an error run carries score-like metrics: {scored}"


def assert_round(judged: dict[str, Any], result: dict[str, Any]) -> None:
    """Each judge either scored or abstained with its reason; no degenerate verdict is a score."""
    outcomes = judged["outcomes"]
    for one in outcomes:
        if one.get("verdict") is None:
            reason = one.get("abstain_reason") or (one.get("failure") or {}).get("message")
            assert reason, f"judge {one['judge']} abstained without a reason (round {judged['round']})"
    verdicts = [o["verdict"] for o in outcomes if o.get("verdict") is not None]
    problem = judged["problem"]
    for verdict in verdicts:
        assert not copies_input(verdict, problem), (
            f"a verdict that copies the version is a score: {verdict['rationale'][:120]!r}"
        )
    if len(verdicts) >= 2:
        assert not all(v["score"] == 0 and v["confidence"] == 0 for v in verdicts), (
            f"round {judged['round']}: every judge scored 0 with confidence 0, and it was scored"
        )
        rationales = Counter(words(v["rationale"]) for v in verdicts)
        assert rationales.most_common(1)[0][1] < len(verdicts), (
            f"round {judged['round']}: all {len(verdicts)} judges wrote the same rationale, and it was scored"
        )
    if not verdicts:
        outcome = result.get("outcome") or result.get("status")
        assert outcome == "error", f"a round with no usable verdict ended {outcome}, not error"
    solver = judged.get("solver")
    if solver:
        assert_solver(solver)


def copies_input(verdict: dict[str, Any], problem: dict[str, Any]) -> bool:
    """A verdict whose rationale or answer is the version's question or solution, copied."""
    given = {words(problem["question"]), words(problem["solution"])}
    written = {words(verdict.get("rationale", "")), words(verdict.get("own_answer", ""))}
    return bool(given & written - {""})


def assert_solver(solver: dict[str, Any]) -> None:
    """A solver's reply is usable and self-consistent, or a failure with its cause."""
    solution = solver.get("solution")
    if solution is None:
        failure = solver.get("failure") or {}
        assert failure.get("message"), "a solver call with neither a solution nor a cause"
        return
    value = solution.get("value")
    if value is None:
        return
    numbers = [float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", solution["answer"])]
    assert not numbers or any(abs(n - value) <= 1e-6 * max(1.0, abs(value)) for n in numbers), (
        f"the solver's answer {solution['answer']!r} and value {value} disagree, and it was kept"
    )


def assert_revision(revision: dict[str, Any]) -> None:
    """A revision is a revised problem, or a failure with its cause and the raw output kept."""
    if revision.get("problem") is not None:
        return
    failure = revision.get("failure") or {}
    assert revision.get("error") or failure.get("message"), "a failed revision without a cause"


def unchanged_revisions(result: dict[str, Any]) -> list[int]:
    """Rounds whose revision returned the version it revised (after whitespace)."""
    versions = {r["round"]: r["problem"] for r in result["rounds"]}
    same = []
    for revision in result.get("revisions", []):
        revised, before = revision.get("problem"), versions.get(revision["round"])
        if (
            revised
            and before
            and all(words(revised[k]) == words(before[k]) for k in ("question", "solution"))
        ):
            same.append(revision["round"])
    return same


def assert_echo_is_a_failure(result: dict[str, Any]) -> None:
    """A model under test that returned the problem unchanged failed: it is never set aside."""
    outcome = result.get("outcome") or result.get("status")
    if unchanged_revisions(result):
        assert outcome != "needs_review", "an unchanged revision left the run needs_review (unscored)"


def assert_batch_report(report: dict[str, Any], expected_items: int, exit_code: int) -> None:
    """Counts add up to the items, errors carry causes and enter no rate, and the exit says so."""
    counts = report["outcomes"]
    assert counts["total"] == expected_items, counts
    assert sum(v for k, v in counts.items() if k != "total") == expected_items, counts
    assert sum(row["items"]["total"] for row in report["rows"]) == expected_items
    for row in report["rows"]:
        assert_row(row)
    assert (exit_code != 0) == bool(counts.get("error")), f"exit {exit_code} with outcomes {counts}"


def assert_row(row: dict[str, Any]) -> None:
    """One model × arm: scored items are passes and failures only; a rate only over them, with n."""
    items = row["items"]
    assert sum(v for k, v in items.items() if k != "total") == items["total"], items
    unscored = sum(items.get(k, 0) for k in ("error", "needs_review", "cancelled", "unfinished"))
    assert row["scored_items"] <= items["total"] - unscored, row
    assert sum(e["count"] for e in row["errors"]) == items.get("error", 0), row["errors"]
    assert all(e["cause"] and e["example"] for e in row["errors"]), row["errors"]
    if row["scored_items"] == 0:
        assert row["pass_rate"] is None and row["avg_quality_final"] is None, row
    else:
        assert row["problems"] >= 1 and row["pass_rate_ci95"] is not None, row


def assert_validity_report(report: dict[str, Any], flawed: int, sound: int, exit_code: int) -> None:
    """Every version judged or counted apart; no rate's denominator holds an excluded version; a
    bench with excluded versions exits non-zero; a panel refusing all sound versions is named."""
    assert report["versions"] == flawed + sound, report["versions"]
    excluded = report["excluded"]["total"]
    assert report["judged"] + excluded == report["versions"], (report["judged"], report["excluded"])
    everything = report["splits"]["all"]
    for name, kind in (("detection", flawed), ("false_accept", flawed), ("specificity", sound)):
        share = everything[name]
        assert share["n"] + share["excluded"] == kind, (name, share)
        if share["n"] == 0:
            assert share["rate"] is None, (name, share)
    errored = report["excluded"].get("errored", excluded)
    assert exit_code != 0 or not errored, f"exit {exit_code} with {errored} version(s) errored"
    assert exit_code == 0 or excluded, f"exit {exit_code} with every version judged"
    specificity = everything["specificity"]
    refuses_all = specificity["n"] > 0 and specificity["count"] == 0
    assert everything["refuses_every_sound"] == refuses_all, everything["refuses_every_sound"]
