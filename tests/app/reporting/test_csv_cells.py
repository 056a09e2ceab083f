"""CSV exports: a dataset's text that a spreadsheet would run as a formula comes out inert."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from app.reporting.cells import inert
from app.reporting.item_export import to_csv
from app.reporting.item_rows import ITEM_COLUMNS
from app.reporting.text import to_csv as report_csv
from tests.helpers.batches import JSONL, settle, upload
from tests.helpers.service import Service

FORMULAS = [
    '=HYPERLINK("http://evil","x")',
    "=cmd|' /C calc'!A0",
    "+SUM(1,2)",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
]


# Issue 51: a bare CR once went unquoted and began a new row; a formula may also hide behind a line
# break, leading blanks or a full-width sign.
HIDDEN = ["\r=1+1", "\n@SUM(1)", "＝1+1", " =1+1", "ok\r\n+1", "a\r-2+3\nb", "\u3000＠x", "x\n\t=1"]
_LIVE = ("=", "+", "-", "@", "＝", "＋", "－", "＠")


def live(cell: str) -> bool:
    """Whether a spreadsheet would run ``cell``: a formula start, also after blanks (numbers aside)."""
    try:
        float(cell)
        return False
    except ValueError:
        return cell.startswith(("\t", "\r", "\n")) or cell.lstrip().startswith(_LIVE)


def cells_as_read(text: str) -> list[str]:
    """Every cell, read as a CSV parser would and as a reader splitting lines on any CR or LF would."""
    quoted = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    lines = [cell for line in re.split(r"\r\n|\r|\n", text) for row in csv.reader([line]) for cell in row]
    return quoted + lines


def test_no_cell_starts_a_formula_however_the_export_is_split_into_lines() -> None:
    row: dict[str, Any] = dict.fromkeys(ITEM_COLUMNS)
    rows = [row | {"external_id": h, "flaw": h, "error": h, "cost_usd": 1.5} for h in HIDDEN]
    items = to_csv(rows).decode()
    report = report_csv(
        {
            "rows": [
                {
                    "model": h,
                    "arm": h,
                    "items": {"total": 1},
                    "pass_rate_ci95": None,
                    "avg_quality_final_ci95": None,
                    "time_to_pass": None,
                    "errors": [{"cause": h}],
                }
                for h in HIDDEN
            ]
        }
    )
    for text in (items, report):
        cells = cells_as_read(text)
        assert cells and [c for c in cells if live(c)] == []
    read = list(csv.DictReader(io.StringIO(items, newline="")))  # one row per item, text kept readable
    assert len(read) == len(HIDDEN) and read[0]["external_id"] == "'\r'=1+1"
    assert [r["external_id"] for r in read][2:4] == ["'＝1+1", "' =1+1"]
    assert items.split("\r\n", 1)[0] == ",".join(ITEM_COLUMNS) and items.endswith("\r\n")  # RFC 4180


def test_every_formula_start_gets_an_apostrophe_and_numbers_stay_numbers() -> None:
    assert [inert(f) for f in FORMULAS] == ["'" + f for f in FORMULAS[:-1]] + ["'\r'x"]
    assert inert("fp-01") == "fp-01" and inert(-0.5) == -0.5 and inert(None) is None


def test_item_rows_with_formulas_are_written_inert() -> None:
    row: dict[str, Any] = dict.fromkeys(ITEM_COLUMNS)
    rows = [row | {"external_id": f, "flaw": f, "error": f, "cost_usd": -1.5} for f in FORMULAS]
    text = to_csv(rows).decode()
    assert "\"'\r'x\"" in text  # a leading CR, too: quoted, and the line after it starts inert
    read = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["external_id"] for r in read] == [inert(f) for f in FORMULAS]
    assert all(r["flaw"] == r["error"] == r["external_id"] for r in read)
    assert {r["cost_usd"] for r in read} == {"-1.5"}


def test_the_report_csv_writes_model_names_and_errors_inert() -> None:
    row = {
        "model": '=HYPERLINK("x")',
        "arm": "loop",
        "items": {"total": 1},
        "pass_rate_ci95": None,
        "avg_quality_final_ci95": None,
        "time_to_pass": None,
        "errors": [{"cause": "@cmd"}],
    }
    (read,) = csv.DictReader(io.StringIO(report_csv({"rows": [row]})))
    assert read["model"] == '\'=HYPERLINK("x")' and read["top_error"] == "'@cmd"


async def test_an_exported_batch_with_formula_ids_and_flaws_is_inert(service: Service) -> None:
    lines = [
        json.dumps({"id": f, "question": f"Q{n}: 2 + {n}?", "solution": f"{2 + n}", "metadata": {"flaw": f}})
        for n, f in enumerate(FORMULAS[:4])
    ]
    dataset = (await upload(service, "\n".join(lines).encode(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim"], "judge_model": "sim", "max_rounds": 1}
    batch = (await service.client.post("/v1/batches", json=body, headers=service.keys.auth())).json()
    await settle(service, batch["id"])
    text = await service.client.get(
        f"/v1/batches/{batch['id']}/items/export", params={"format": "csv"}, headers=service.keys.auth("read")
    )
    rows = list(csv.DictReader(io.StringIO(text.text)))
    assert sorted(r["external_id"] for r in rows) == sorted("'" + f for f in FORMULAS[:4])
    assert sorted(r["flaw"] for r in rows) == sorted("'" + f for f in FORMULAS[:4])
    jsonl = await service.client.get(
        f"/v1/batches/{batch['id']}/items/export",
        params={"format": "jsonl"},
        headers=service.keys.auth("read"),
    )
    _, *items = [json.loads(line) for line in jsonl.text.splitlines()]
    assert sorted(i["external_id"] for i in items) == sorted(FORMULAS[:4])  # typed formats: exact
