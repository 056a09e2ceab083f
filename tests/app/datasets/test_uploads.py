"""Problem sets: every row validated with its line number; duplicates folded; nothing dropped silently."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.datasets.parsing import MAX_DATASET_ROWS, DatasetError, parse_dataset
from tests.helpers.paths import SAMPLES

runner = CliRunner()
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


def jsonl(*rows: object) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows).encode()


def test_the_bundled_sample_is_valid() -> None:
    parsed = parse_dataset(SAMPLE.read_bytes(), SAMPLE.name)
    assert parsed.format == "jsonl" and len(parsed.rows) == 12 and not parsed.errors
    assert (
        parsed.rows[0].external_id == "fp-01" and parsed.rows[0].metadata["flaw"] == "false proportionality"
    )


def test_bad_jsonl_rows_are_reported_by_line() -> None:
    data = jsonl(
        {"question": "What is 1 + 1?", "solution": "2"},
        "{not json",
        "",
        [1, 2],
        {"question": "   "},
        {"question": "q" * 8001},
        {"question": "What is 2 + 2?", "metadata": "oops"},
        {"question": "What is 1 + 1?", "solution": "2 "},
    )
    parsed = parse_dataset(data, "set.jsonl")
    assert [r.line for r in parsed.rows] == [1]
    assert [(e.line, e.message.split(":")[0]) for e in parsed.errors] == [
        (2, "invalid JSON"),
        (4, "expected a JSON object"),
        (5, "the question is empty"),
        (6, "the question is longer than 8000 characters"),
        (7, "metadata must be an object"),
    ]
    assert [(d.line, d.message) for d in parsed.duplicates] == [(8, "same problem as line 1")]


def test_csv_in_our_schema_keeps_extra_columns_as_metadata() -> None:
    data = b'id,question,solution,grade\nA1,"Two lines\nof question?",42,5\nA2,,1,3\nA3,What?,1,2,extra\n'
    parsed = parse_dataset(data, "set.csv")
    assert parsed.format == "csv"
    assert parsed.rows[0].external_id == "A1" and parsed.rows[0].metadata == {"grade": "5"}
    assert [(e.line, e.message) for e in parsed.errors] == [
        (4, "the question is empty"),
        (5, "more cells than the header has columns"),
    ]


def test_think_layout_is_detected_and_suspicious_rows_warned() -> None:
    header = (
        "ID,question,Figure,LaTeX question,solution,mathConcept1,mathConcept2,mathConcept3,"
        "Difficulty,Grade,Resource\n"
    )
    rows = (
        '1,"A train goes 60 km/h. How far in 2 h?",N,x,120 km,Rates,,,Easy,6,Web\n'
        "2,Riddle with no solution,N,x,,,,,Hard,https://example.org/q,Forum\n"
        '3,"A train goes 60 km/h. How far in 2 h?",N,x,"60 × 2 = 120 km",Rates,,,Easy,6,Web\n'
    )
    parsed = parse_dataset((header + rows).encode(), "bad_questions.csv")
    assert parsed.format == "think-csv" and len(parsed.rows) == 3 and not parsed.errors
    assert parsed.rows[0].external_id == "1" and parsed.rows[0].metadata["mathConcept1"] == "Rates"
    assert [w.line for w in parsed.warnings] == [3, 4]
    assert "columns may be shifted" in parsed.warnings[0].message
    assert "same question as line 2" in parsed.warnings[1].message


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"\xff\xfe\x00bad", "x.jsonl", "not UTF-8"),
        (b"title,body\nx,y\n", "x.csv", "lacks column(s): question"),
        (b"ID,question,LaTeX question\n1,q,q\n", "x.csv", "lacks column(s): solution"),
        (b"x" * (10 * 1024 * 1024 + 1), "x.jsonl", "larger than 10 MiB"),
        (
            jsonl(*[{"question": f"What is {i} + 1?"} for i in range(MAX_DATASET_ROWS + 1)]),
            "x.jsonl",
            "more than",
        ),
    ],
)
def test_unreadable_files_are_refused(data: bytes, name: str, message: str) -> None:
    with pytest.raises(DatasetError, match=re.escape(message)):
        parse_dataset(data, name)


def test_validate_command(tmp_path: Path) -> None:
    ok = runner.invoke(cli, ["datasets", "validate", str(SAMPLE)])
    assert ok.exit_code == 0 and "12 valid problem(s), 0 bad row(s)" in ok.output
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(jsonl({"question": "Fine?"}, "{oops"))
    result = runner.invoke(cli, ["datasets", "validate", str(bad)])
    assert result.exit_code == 1 and f"{bad}:2: error: invalid JSON" in result.output
    assert runner.invoke(cli, ["datasets", "validate", str(tmp_path / "none.csv")]).exit_code == 2
    assert runner.invoke(cli, ["datasets", "validate", str(SAMPLE), "--format", "xml"]).exit_code == 2


def test_synthetic_sets_are_distinct_valid_and_reproducible() -> None:
    from app.datasets.synthetic import MAX_SYNTHETIC, synthetic_jsonl

    text = synthetic_jsonl(MAX_SYNTHETIC, seed=1)
    parsed = parse_dataset(text.encode(), "s.jsonl")
    assert len(parsed.rows) == MAX_SYNTHETIC and not parsed.errors and not parsed.duplicates
    flaws = {row.metadata["flaw"] for row in parsed.rows}
    assert flaws == {"false proportionality", "arithmetic error", "fractional count", "none"}
    assert synthetic_jsonl(50, seed=1) == "".join(text.splitlines(keepends=True)[:50])
    assert synthetic_jsonl(50, seed=2) != synthetic_jsonl(50, seed=1)
