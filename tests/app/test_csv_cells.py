"""CSV exports: a dataset's text that a spreadsheet would run as a formula comes out inert."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from app.reporting.cells import inert
from app.reporting.item_export import to_csv
from app.reporting.item_rows import ITEM_COLUMNS
from app.reporting.text import to_csv as report_csv
from tests.app.conftest import Service
from tests.app.test_batches_api import JSONL, settle, upload

FORMULAS = [
    '=HYPERLINK("http://evil","x")',
    "=cmd|' /C calc'!A0",
    "+SUM(1,2)",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
]


def test_every_formula_start_gets_an_apostrophe_and_numbers_stay_numbers() -> None:
    assert [inert(f) for f in FORMULAS] == ["'" + f for f in FORMULAS]
    assert inert("fp-01") == "fp-01" and inert(-0.5) == -0.5 and inert(None) is None


def test_item_rows_with_formulas_are_written_inert() -> None:
    row: dict[str, Any] = dict.fromkeys(ITEM_COLUMNS)
    rows = [row | {"external_id": f, "flaw": f, "error": f, "cost_usd": -1.5} for f in FORMULAS]
    text = to_csv(rows).decode()
    assert "'\rx" in text and "\n\rx" not in text  # a leading CR, too (one that Python's reader cannot split)
    read = list(csv.DictReader(io.StringIO(to_csv(rows[:-1]).decode())))
    assert [r["external_id"] for r in read] == ["'" + f for f in FORMULAS[:-1]]
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
