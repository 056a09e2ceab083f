"""One definition per name in the batch report: Table 1 is labelled as the THiNK paper's definition
beside the plainly named mean final score per level, and an undefined κ reads as undefined, with
its reason, never as 0.00."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.reporting.batch import DEFINITIONS
from app.reporting.html import to_html
from app.reporting.text import to_markdown
from graphs.analysis.agreement import cohen_matrix, cohen_undefined_reasons, fleiss_kappa, fleiss_undefined
from tests.helpers.paths import APP_DATA

# A stored report (written before the definitions and the κ reasons were kept).
STORED = APP_DATA / "report.json"
# Seven judges' votes on four versions; "remember" passes every one of them.
VOTES: dict[str, list[bool | None]] = {
    "remember": [True, True, True, True],
    "understand": [True, False, True, True],
    "apply": [True, False, False, True],
    "analyze": [True, True, False, True],
    "evaluate": [False, True, True, True],
    "create": [True, False, True, False],
    "holistic": [True, True, False, False],
}


@pytest.fixture
def report() -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(STORED.read_text())
    for row in stored["rows"]:
        row.setdefault("cached_input_tokens", 0)  # kept since; the Markdown report reads it
    return stored


def test_a_judge_that_always_passes_has_an_undefined_cohen_kappa_with_its_reason() -> None:
    matrix, reasons = cohen_matrix(VOTES), cohen_undefined_reasons(VOTES)
    assert matrix["remember"]["apply"] is None and matrix["apply"]["remember"] is None  # was 0.0
    assert matrix["remember"]["remember"] is None
    assert (
        reasons["remember"]["apply"]
        == reasons["apply"]["remember"]
        == "remember passed every version it voted on"
    )
    assert matrix["apply"]["analyze"] is not None and "analyze" not in reasons.get("apply", {})
    assert matrix["apply"]["apply"] == 1.0
    lone = {"a": [None, True], "b": [False, None]}
    assert cohen_undefined_reasons(lone)["a"]["b"] == "no version that both a and b voted on"


def test_fleiss_kappa_says_why_it_is_undefined() -> None:
    assert fleiss_undefined(VOTES) is None and fleiss_kappa(VOTES) is not None
    every_pass = {"a": [True, True], "b": [True, True]}
    assert fleiss_kappa(every_pass) is None
    assert fleiss_undefined(every_pass) == "every judge passed every version that all of them voted on"
    assert (
        fleiss_undefined({"a": [False], "b": [False]})
        == "every judge failed every version that all of them voted on"
    )
    assert fleiss_undefined({"a": [True, None], "b": [None, True]}) == "no version that every judge voted on"


def _with_a_judge_that_always_passes(report: dict[str, Any]) -> dict[str, Any]:
    report["agreement"]["loop"] |= {
        "fleiss_kappa": None,
        "fleiss_kappa_undefined": "every judge passed every version that all of them voted on",
        "cohen_kappa": cohen_matrix(VOTES),
        "cohen_kappa_undefined": cohen_undefined_reasons(VOTES),
    }
    return report


def test_the_markdown_report_shows_undefined_kappa_with_the_reason(report: dict[str, Any]) -> None:
    markdown = to_markdown(_with_a_judge_that_always_passes(report))
    row = next(line for line in markdown.splitlines() if line.startswith("| loop |"))
    assert row.split(" | ")[2] == "undefined"  # Fleiss' κ, not "—" or 0.000
    assert (
        "- loop: Fleiss' κ is undefined: every judge passed every version that all of them voted on."
        in markdown
    )
    assert (
        "- loop: Cohen's κ is undefined for remember–understand, remember–apply, remember–analyze, "
        "remember–evaluate, remember–create, remember–holistic: remember passed every version it voted on."
    ) in markdown


def test_the_html_report_shows_undefined_kappa_with_the_reason(report: dict[str, Any]) -> None:
    page = to_html(_with_a_judge_that_always_passes(report))
    assert 'title="remember passed every version it voted on">undefined</td>' in page
    matrix = page.split("Pairwise Cohen's κ (loop)")[1].split("</table>")[0]
    remember = matrix.split("<tr><td>remember</td>")[1].split("</tr>")[0]
    assert remember.count(">undefined</td>") == 7 and "0.00" not in remember
    assert (
        "Cohen&#39;s κ is undefined for remember–understand" in page or "Cohen's κ is undefined for" in page
    )


def test_table1_is_labelled_as_the_papers_definition_beside_the_mean_final_score(
    report: dict[str, Any],
) -> None:
    markdown = to_markdown(report)
    assert "## Table 1: final score per Bloom level, the THiNK paper's definition (change)" in markdown
    assert "an item that passed in round 1 counts 0" in markdown
    assert "### Mean final score per level (over all scored items)" in markdown
    loop = next(r for r in report["rows"] if r["arm"] == "loop")
    means = next(
        line
        for line in markdown.split("### Mean final score per level")[1].splitlines()
        if "| loop |" in line
    )
    assert f"{loop['level_mean_final']['holistic']:.2f}" in means
    page = to_html(report)
    assert "Table 1: final score per Bloom level, the THiNK paper's definition" in page
    assert "so an item that passed in round 1 counts 0" in page
    assert "Mean final score per level (over all scored items)</h3>" in page
    assert DEFINITIONS["levels"]["name"].startswith(
        "final score per Bloom level (the THiNK paper's definition"
    )
    assert DEFINITIONS["level_mean_final"]["name"] == "mean final score per level"
