"""`judges validate` on several sets at once: figures per source and per the source's own category,
with the pairs told apart, and the shipped set one source among others (issue 52, item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from app.cli import cli
from graphs.analysis.validity_sources import pairs_told_apart
from tests.helpers.validity_metrics import judged

runner = CliRunner()
THEATRE = "The school theatre has 14 rows with 9 seats in each row. How many seats are there in total?"
BENCH = {"name": "UMWP", "kind": "benchmark", "licence": "CC-BY-SA-4.0"}


def item(n: str, kind: str, solution: str, **extra: Any) -> dict[str, Any]:
    flaws = [{"type": "arithmetic_symbolic", "levels": ["apply"], "evidence": "14 × 9 is 126"}]
    body = {"id": n, "split": "heldout", "kind": kind, "question": THEATRE, "solution": solution}
    return body | ({"flaws": [f | extra.pop("flaw", {}) for f in flaws]} if kind == "flawed" else {}) | extra


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_several_sets_are_reported_per_source_with_the_pairs_told_apart(tmp_path: Path) -> None:
    bench = write(
        tmp_path / "umwp.jsonl",
        [
            item(
                "u-1",
                "flawed",
                "14 × 9 = 116 seats.",
                source=BENCH,
                pair="p1",
                flaw={"category": "wrong sum"},
            ),
            item("u-1o", "control", "14 × 9 = 126 seats.", source=BENCH, pair="p1"),
        ],
    )
    own = write(tmp_path / "district.jsonl", [item("d-1", "control", "14 × 9 = 126 seats, so 126 seats.")])
    result = runner.invoke(
        cli, ["judges", "validate", "--dataset", str(bench), "--dataset", str(own), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    sources = json.loads(result.stdout)["by_source"]
    assert set(sources) == {"UMWP", "district.jsonl"}
    assert sources["UMWP"]["kind"] == "benchmark" and sources["district.jsonl"]["kind"] == "own"
    umwp = sources["UMWP"]
    assert (umwp["false_accept"]["n"], umwp["false_accept"]["count"]) == (1, 0)  # the wrong sum refused
    assert (umwp["pairs_told_apart"]["n"], umwp["pairs_told_apart"]["count"]) == (1, 1)
    assert umwp["by_category"]["wrong sum"]["n"] == 1
    assert sources["district.jsonl"]["specificity"]["n"] == 1
    text = runner.invoke(cli, ["judges", "validate", "--dataset", str(bench), "--dataset", str(own)]).stdout
    assert "## By source" in text and "| UMWP | benchmark |" in text
    clash = runner.invoke(cli, ["judges", "validate", "--dataset", str(own), "--dataset", str(own)])
    assert clash.exit_code == 2 and "ids are not unique" in clash.output


def test_a_pair_is_told_apart_only_when_the_flaw_is_refused_and_the_original_passes() -> None:
    told = [judged("flawed", "exhausted", item="a"), judged("control", "accepted", item="ao")]
    both_passed = [judged("flawed", "accepted", item="b"), judged("control", "accepted", item="bo")]
    both_refused = [judged("flawed", "exhausted", item="c"), judged("control", "exhausted", item="co")]
    versions = [
        *(j.__class__(**{**j.__dict__, "pair": "a"}) for j in told),
        *(j.__class__(**{**j.__dict__, "pair": "b"}) for j in both_passed),
        *(j.__class__(**{**j.__dict__, "pair": "c"}) for j in both_refused),
    ]
    found = pairs_told_apart(versions)
    assert (found["count"], found["n"]) == (1, 3)
