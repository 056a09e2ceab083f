"""The ``thinkloop`` command against Gemma 3 270M on llama.cpp's server, as a user runs it.

A base model of 270M parameters writes junk: these tests assert what must hold whatever it writes
(tests/realmodel/invariants.py), never what it writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.realmodel import GEMMA_FILE, MODEL_ID, NAME
from tests.helpers.realmodel import RealModel, Result, command
from tests.helpers.realmodel_invariants import (
    assert_batch_report,
    assert_echo_is_a_failure,
    assert_run,
    assert_validity_report,
)

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
    # Jinja on: the server takes tools (with --no-jinja it answered them with HTTP 500), whatever Gemma
    # then writes; and the judges' prompts for a long problem fit the tier's slots with their max_tokens.
    assert found["tools"] in ("supported", "ignored (answered in prose)"), found
    assert (found["context_per_slot"], found["fits"], found["problems"]) == (4096, True, []), found
    assert found["model_file"]["name"] == GEMMA_FILE, found
    assert found["identity"].startswith(f"{MODEL_ID} [file {GEMMA_FILE}, "), found


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


@dataclass(frozen=True)
class PanelBench:
    """Gemma's panel on the labelled slice, then on a run: the commands, run once for the module."""

    flawed: int
    sound: int
    refused: Result  # judges validate --save
    validated: Result  # judges validate
    refined: Result  # refine, Gemma under test and as every judge, two rounds


@pytest.fixture(scope="module")
def panel_bench(realmodel: RealModel, tmp_path_factory: pytest.TempPathFactory) -> PanelBench:
    """Three CLI runs on one database, as a user would run them: ``judges validate --save`` on a
    small held-out slice (refused before any call), the bench without ``--save``, then a refine with
    Gemma as the whole panel. Run once: three tests read it (the bench's report, the panel's run,
    and its first round's calls queued on the server's slots), where the queueing test made a run of
    the whole panel of its own (docs/development.md)."""
    directory = tmp_path_factory.mktemp("panel-bench")
    models = directory / "models.toml"
    models.write_text(realmodel.models_toml(), "utf-8")
    thinkloop = command(directory, models)
    dataset, flawed, sound = labelled_slice(directory)
    refused = thinkloop("judges", "validate", "--dataset", str(dataset), "--judge-model", NAME, "--save")
    validated = thinkloop(
        "judges", "validate", "--dataset", str(dataset), "--judge-model", NAME, "--format", "json"
    )
    refined = thinkloop(
        "refine", "--example", "orchestra", "--model", NAME, "--judge-model", NAME,
        "--max-rounds", "2", "--json",
    )  # fmt: skip
    return PanelBench(flawed, sound, refused, validated, refined)


# The module's three CLI runs are made by whichever of its tests comes first: a hang guard for all.
@pytest.mark.timeout(1500)
def test_judges_validate_refuses_save_then_benches_gemmas_panel(
    panel_bench: PanelBench, realmodel: RealModel
) -> None:
    """Gemma's panel on a small held-out slice: ``--save`` is refused before any call (a record rests
    on at least 20 sound versions, the slice holds one: issue 49); without it, each version is judged
    or counted apart, every rate's denominator excludes the versions that did not end in a verdict,
    and a bench with errored versions exits non-zero; the report names the model id llama-server
    reports. The simulator's tests save and cite records (tests/app/validity/test_warrants_api.py),
    which a bench of 20 sound versions of Gemma would take too long to."""
    refused, done = panel_bench.refused, panel_bench.validated
    assert (
        refused.code == 1 and f"the held-out split holds {panel_bench.sound} sound version(s)" in refused.err
    ), refused.err
    assert refused.out == ""  # refused before the bench: no call was made, no report printed
    report = json.loads(done.out)
    assert_validity_report(report, flawed=panel_bench.flawed, sound=panel_bench.sound, exit_code=done.code)
    answered = report["calls"]["total"] > report["calls"]["failed"]
    # llama-server names the model it loaded (its --alias), whatever the request asked for; thinkloop
    # adds the model file it serves (issue 53), so another file behind the alias is another panel
    served = realmodel.reported_model()
    assert report["reported_models"] == ([served] if answered else []), report["reported_models"]
    assert report["record"] is None


@pytest.mark.timeout(1500)
def test_gemma_as_the_whole_panel_after_an_unsaved_bench(
    panel_bench: PanelBench, realmodel: RealModel
) -> None:
    """Then Gemma judges (seven judges and the solver) and revises: junk verdicts are abstentions with
    a reason, a panel with none usable ends in error with its cause, never a score; an acceptance
    carries no warrant, since nothing was saved (both commands use the tier's models file: its reply
    bounds are part of the panel's identity)."""
    panel = panel_bench.refined
    result = json.loads(panel.out)
    assert_run(result, panel.code)
    assert_echo_is_a_failure(result)
    judges = {o["model"] for r in result["rounds"] for o in r["outcomes"]}
    assert judges == {NAME}, judges
    last = result["rounds"][-1]
    calls = [*last["outcomes"], *([last["solver"]] if last.get("solver") else [])]
    reported = {c["reported_model"] for c in calls if c["reported_model"] is not None}
    assert reported <= {realmodel.reported_model()}, reported
    # nothing was saved: an acceptance carries no warrant, and any other outcome none at all
    assert result["warrant"] == ({"status": "none"} if result["outcome"] == "accepted" else None), result[
        "warrant"
    ]


@pytest.mark.timeout(1500)
def test_more_calls_in_flight_than_slots_are_queued_not_failed(
    panel_bench: PanelBench, realmodel: RealModel
) -> None:
    """Gemma as the whole panel with thinkloop's defaults: seven judges and the solver at once
    against a server with fewer slots. Waiting in the server's queue is no failure: no call times
    out for it, and every call is accounted for."""
    slots = realmodel.total_slots()
    result = json.loads(panel_bench.refined.out)
    assert_run(result, panel_bench.refined.code)
    first = result["rounds"][0]  # every judge and the solver at once
    calls = [*first["outcomes"], *([first["solver"]] if first.get("solver") else [])]
    assert len(calls) > slots, f"{len(calls)} calls against {slots} slots: nothing had to wait"
    for judged in result["rounds"]:
        calls = [*judged["outcomes"], *([judged["solver"]] if judged.get("solver") else [])]
        timeouts = [
            c["failure"] for c in calls if c.get("failure") and "Timeout" in c["failure"]["exception"]
        ]
        assert not timeouts, f"calls failed while waiting for one of {slots} slots: {timeouts}"
        assert all(c["usage"]["calls"] >= 1 for c in calls), [c["usage"] for c in calls]
