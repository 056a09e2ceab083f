"""The ``thinkloop`` command against Gemma 3 270M on llama.cpp's server, as a user runs it.

A base model of 270M parameters writes junk: these tests assert what must hold whatever it writes
(tests/realmodel/invariants.py), never what it writes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.realmodel.conftest import NAME, TIER_MAX_TOKENS, Result
from tests.realmodel.invariants import (
    assert_batch_report,
    assert_echo_is_a_failure,
    assert_run,
    assert_validity_report,
)
from tests.realmodel.server import MODEL_ID

# A real model on 2 busy cores is slow: a generous hang guard (the suite's default is 300 s a test).
pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
VALIDITY_SET = ROOT / "app" / "samples" / "validity" / "problems.jsonl"
PROBLEMS = ROOT / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


def test_models_check_finds_the_grammar_enforced_json_schema(thinkloop: Any) -> None:
    done: Result = thinkloop("models", "check", NAME, "--json")
    assert done.code == 0, done.err
    found = json.loads(done.out)
    assert found["json_schema"] == "supported" and found["mode"] == "json_schema", found
    assert found["streaming"].startswith("ok"), found


def test_refine_with_gemma_as_the_model_under_test(thinkloop: Any) -> None:
    """The offline panel judges; Gemma revises. Its revision, whatever it is, is judged or fails
    with its cause; an unchanged one is its failure, not a case set aside."""
    done: Result = thinkloop(
        "refine", "--example", "orchestra", "--model", NAME, "--max-rounds", "2", "--json"
    )
    result = json.loads(done.out)
    assert_run(result, done.code)
    assert_echo_is_a_failure(result)
    assert result["revisions"], "the offline panel refuses the orchestra problem: a revision was asked for"
    assert all(r["model"] == NAME for r in result["revisions"])


def test_batch_with_the_control_arm_adds_up(thinkloop: Any, tmp_path: Path) -> None:
    """Two problems × loop and control, Gemma under test: every item counted once by outcome,
    errors with causes and in no rate, and the exit code says whether any item errored."""
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(PROBLEMS.read_text("utf-8").splitlines(keepends=True)[:2]), "utf-8")
    done: Result = thinkloop(
        "batch", "run", "--dataset", str(dataset), "--models", NAME, "--control",
        "--max-rounds", "2", "--format", "json",
    )  # fmt: skip
    report = json.loads(done.out)
    assert_batch_report(report, expected_items=4, exit_code=done.code)
    assert {(row["model"], row["arm"]) for row in report["rows"]} == {(NAME, "loop"), (NAME, "control")}
    if report["outcomes"].get("error"):
        assert "ended in error and are not scored" in done.err, done.err
    items = thinkloop("batch", "items", report["batch"]["id"][:12])
    assert items.code == 0, items.err
    rows = [json.loads(line) for line in items.out.splitlines()[1:]]  # the manifest comes first
    assert len(rows) == 4
    for row in rows:
        if row["outcome"] == "error":  # its cause, and no number that reads as its score
            assert row["error"], row
            assert row["passed"] is None and row["final_quality"] is None, row


def labelled_slice(tmp_path: Path) -> tuple[Path, int, int]:
    """Three held-out labelled items (a warrant rests on held-out problems only), one version each
    (24 calls of Gemma's panel): two short flawed problems without their corrected versions, and a
    sound control."""
    lines = VALIDITY_SET.read_text("utf-8").splitlines()
    items = {json.loads(line)["id"]: json.loads(line) for line in lines}
    alone = {"corrected": None}
    chosen = [items["h2-as-01"] | alone, items["h2-wo-01"] | alone, items["h2-ctl-01"]]
    assert all(item["split"] == "heldout" for item in chosen)
    path = tmp_path / "slice.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in chosen), "utf-8")
    return path, 2, 1


def saved_records(tmp_path: Path) -> list[dict[str, Any]]:
    """The validity records in the test's database (the thinkloop fixture's)."""
    with sqlite3.connect(tmp_path / "thinkloop.db") as connection:
        connection.row_factory = sqlite3.Row
        rows = connection.execute("SELECT id, identity, n_flawed, split FROM validity_records").fetchall()
    return [dict(row) | {"identity": json.loads(row["identity"])} for row in rows]


# Two CLI runs in one test (the bench, then the refine that may cite its record): a hang guard for both.
@pytest.mark.timeout(1500)
def test_judges_validate_save_then_gemma_as_the_whole_panel(thinkloop: Any, tmp_path: Path) -> None:
    """Gemma's panel on a small held-out slice, with ``--save``: each version is judged or counted
    apart, every rate's denominator excludes the versions that did not end in a verdict, and a bench
    with errored versions exits non-zero and saves no record (it claims no rate it did not measure);
    a record is saved only of a complete bench, for the model id llama-server reports.

    Then Gemma judges (seven judges and the solver) and revises: junk verdicts are abstentions with
    a reason, a panel with none usable ends in error with its cause, never a score; an acceptance
    carries the saved record as its warrant only when its round reported the record's model id
    (both commands use the tier's models file: its reply bounds are part of the panel's identity)."""
    dataset, flawed, sound = labelled_slice(tmp_path)
    done: Result = thinkloop(
        "judges", "validate", "--dataset", str(dataset), "--judge-model", NAME, "--format", "json", "--save"
    )
    report = json.loads(done.out)
    assert_validity_report(report, flawed=flawed, sound=sound, exit_code=done.code)
    answered = report["calls"]["total"] > report["calls"]["failed"]
    # llama-server names the model it loaded (its --alias), whatever the request asked for
    assert report["reported_models"] == ([MODEL_ID] if answered else []), report["reported_models"]
    records = saved_records(tmp_path)
    if report["excluded"]["total"]:  # a junk panel: errored or undecided versions, so no measurement
        assert done.code == 1 and "no validity record was saved" in done.err, done.err
        assert records == [] and report["record"] is None
    else:
        assert done.code == 0 and "saved validity record" in done.err, done.err
        (record,) = records
        assert record["id"] == report["record"]["id"] and record["split"] == "heldout"
        assert record["identity"]["reported_model"] == MODEL_ID and record["n_flawed"] == flawed
        assert record["identity"]["max_tokens"] == {k: TIER_MAX_TOKENS[k] for k in ("judge", "solver")}
    panel: Result = thinkloop(
        "refine", "--example", "orchestra", "--model", NAME, "--judge-model", NAME,
        "--max-rounds", "2", "--json",
    )  # fmt: skip
    result = json.loads(panel.out)
    assert_run(result, panel.code)
    assert_echo_is_a_failure(result)
    judges = {o["model"] for r in result["rounds"] for o in r["outcomes"]}
    assert judges == {NAME}, judges
    last = result["rounds"][-1]
    calls = [*last["outcomes"], *([last["solver"]] if last.get("solver") else [])]
    reported = {c["reported_model"] for c in calls if c["reported_model"] is not None}
    assert reported <= {MODEL_ID}, reported
    if result["outcome"] != "accepted":
        assert result["warrant"] is None, result["warrant"]
    elif records and reported == {MODEL_ID}:
        assert result["warrant"]["record_id"] == records[0]["id"], result["warrant"]
    else:
        assert result["warrant"] == {"status": "none"}, result["warrant"]
