"""A batch report's pass rates corrected for the judges' measured error: raw and corrected side by
side when the batch's acceptances cite one validity record, uncorrected with the reason when they
cite none, comparisons that say whether they are decisive once corrected, and prediction-powered
estimates where teachers labelled some of the batch's runs."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from app.batches.schemas import BatchReport
from app.models import Batch, BatchItem
from app.reporting.batch import build_report
from app.reporting.data import Entry
from app.reporting.formats import render_report
from app.reporting.html import to_html
from app.reporting.item_result import ItemResult
from app.reporting.text import to_csv, to_markdown
from graphs.analysis.correction import rogan_gladen

PROBLEMS = 60


def _share(count: int, n: int) -> dict[str, Any]:
    return {"n": n, "count": count, "rate": count / n, "low": 0.0, "high": 1.0}


def warrant(
    false_accepts: int = 12, flawed: int = 120, sound_passed: int = 63, sound: int = 70
) -> dict[str, Any]:
    """A valid warrant citing record vr-1, as ``app.validity.records.warrant_of`` writes it."""
    return {
        "status": "valid",
        "record_id": "vr-1",
        "panel_id": "p-1",
        "false_accept_upper": 0.17,
        "false_accept": _share(false_accepts, flawed),
        "sound_passed_lower": 0.8,
        "specificity": _share(sound_passed, sound),
        "split": "heldout",
        "set": "shipped",
        "set_hash": "17407c95d697",
        "source": {"kind": "shipped", "name": "shipped", "reviewers": None},
    }


def _entry(index: int, model: str, passed: bool, carried: dict[str, Any] | None) -> Entry:
    outcome = "accepted" if passed else "exhausted"
    item = BatchItem(
        id=index, batch_id="b-1", problem_id=f"p-{index % PROBLEMS}", model=model, repeat=0, arm="loop",
        status=outcome, run_id=f"run-{index}",
    )  # fmt: skip
    metrics = {
        "passed": passed,
        "rounds_to_pass": 1 if passed else None,
        "avg_quality_final": 0.9 if passed else 0.5,
        "avg_quality_all_steps": 0.8,
    }
    result = ItemResult(outcome=outcome, metrics=metrics, rounds=[], warrant=carried if passed else None)
    return Entry(item, result)


def batch_of(passes: dict[str, int], carried: dict[str, Any] | None) -> tuple[Batch, list[Entry]]:
    """Two models on the same PROBLEMS problems, the first ``passes[model]`` of them passed."""
    batch = Batch(
        id="b-1", project_id="default", dataset_id="d-1", models=list(passes), judge_model="sim",
        policy="default", max_rounds=3, repeats=1, status="completed",
    )  # fmt: skip
    entries = [
        _entry(offset * PROBLEMS + p, model, p < passes[model], carried)
        for offset, model in enumerate(passes)
        for p in range(PROBLEMS)
    ]
    return batch, entries


def test_a_warranted_batch_reports_each_pass_rate_raw_and_corrected() -> None:
    batch, entries = batch_of({"strong": 45, "weak": 15}, warrant())
    report = build_report(batch, entries)
    found = report["correction"]
    assert found["status"] == "corrected" and found["reason"] is None
    assert "parametric bootstrap" in found["method"]
    assert found["record"] | {} == found["record"] and found["record"]["false_accepts"] == 12
    strong = next(r for r in found["rows"] if r["model"] == "strong")
    assert strong["pass_rate"] == 0.75
    # θ = (0.75 − 0.1) / (0.9 − 0.1)
    assert strong["corrected"] == pytest.approx(float(rogan_gladen(0.75, 0.1, 0.9))) == pytest.approx(0.8125)
    low, high = strong["corrected_ci95"]
    assert low < 0.8125 < high and strong["could_swap"] is False and strong["ppi"] is None
    markdown = to_markdown(report)
    assert "## Pass rates corrected for the judges' error" in markdown
    assert "| strong | loop | 60 | 75.0% | 81.2% (" in markdown
    (comparison,) = report["comparisons"]
    assert comparison["corrected"]["decisive"] is True, comparison["corrected"]
    assert "decisive: strong/loop's corrected interval lies wholly above" in markdown
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert float(rows[0]["pass_rate_corrected"]) == pytest.approx(0.8125)
    assert rows[0]["pass_rate_corrected_ci95_low"] and rows[0]["pass_rate_ppi"] == ""
    html = to_html(report)
    assert "Pass rates corrected for the judges" in html and "81.2%" in html
    typed = BatchReport.model_validate(json.loads(render_report(report, "json")))  # the API's schema
    assert typed.correction is not None and typed.correction.rows[0].corrected == pytest.approx(0.8125)


def test_without_a_warrant_the_report_says_its_figures_are_uncorrected_and_why() -> None:
    batch, entries = batch_of({"strong": 45, "weak": 15}, None)
    report = build_report(batch, entries)
    assert report["correction"]["status"] == "uncorrected"
    assert "no validity record" in report["correction"]["reason"]
    assert all(row["corrected"] is None for row in report["correction"]["rows"])
    assert report["comparisons"][0]["corrected"] is None
    markdown = to_markdown(report)
    assert (
        "The pass rates are uncorrected: the panel that judged this batch has no validity record" in markdown
    )
    assert "Pass rates corrected for the judges" in to_html(report)


def test_a_record_no_better_than_chance_makes_no_comparison_decisive() -> None:
    """3 of 5 flawed and 4 of 5 sound passed: the panel may tell them apart no better than chance,
    so a correction could reverse the order, however far apart the raw rates are."""
    batch, entries = batch_of({"strong": 55, "weak": 5}, warrant(3, 5, 4, 5))
    report = build_report(batch, entries)
    (comparison,) = report["comparisons"]
    assert comparison["corrected"]["decisive"] is False
    assert "could swap the order" in comparison["corrected"]["verdict"]
    assert comparison["mcnemar_p"] < 0.001  # raw, the difference is overwhelming


def test_overlapping_corrected_intervals_are_not_decisive() -> None:
    batch, entries = batch_of({"strong": 33, "weak": 27}, warrant())
    (comparison,) = build_report(batch, entries)["comparisons"]
    assert comparison["corrected"]["decisive"] is False
    assert comparison["corrected"]["verdict"] == "not decisive: the corrected intervals overlap"


def test_acceptances_citing_two_records_are_not_corrected() -> None:
    batch, entries = batch_of({"strong": 45, "weak": 15}, warrant())
    other = warrant() | {"record_id": "vr-2"}
    entries[-PROBLEMS].result.warrant = other  # type: ignore[union-attr]
    found = build_report(batch, entries)["correction"]
    assert found["status"] == "uncorrected" and "cite 2 validity records" in found["reason"]


def test_teachers_labels_on_the_batchs_runs_give_prediction_powered_estimates() -> None:
    """Teachers decided every third run of the strong model (20 of 60, 15 of them passed): they
    agreed with the panel but for two passed versions they judged flawed."""
    batch, entries = batch_of({"strong": 45, "weak": 15}, warrant())
    strong = [e for e in entries if e.item.model == "strong"][::3]
    labels = {str(e.item.run_id): bool(e.result and e.result.figures["passed"]) for e in strong}
    labels["run-0"] = labels["run-3"] = False
    report = build_report(batch, entries, labels=labels)
    rows = {row["model"]: row for row in report["correction"]["rows"]}
    ppi = rows["strong"]["ppi"]
    assert ppi["labelled"] == 20 and ppi["unlabelled"] == 40
    # the panel's 75 % less the bias the labels show (2 of 20 labelled runs passed but flawed)
    assert ppi["estimate"] == pytest.approx(0.65, abs=0.03)
    assert ppi["ci95"][0] < ppi["estimate"] < ppi["ci95"][1] < 0.9
    assert rows["weak"]["ppi"] is None  # no label on the weak model's runs
    assert "20 labelled" in to_markdown(report)
