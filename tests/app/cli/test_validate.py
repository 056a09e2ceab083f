"""`thinkloop judges validate` on the offline panel: the shipped set, --check, and bad label files."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.labelled.labels import read_labelled
from app.cli import cli
from app.validity.service import builtin_set
from tests.helpers.paths import SAMPLES
from tests.helpers.validity import assert_figures

runner = CliRunner()
SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}


@pytest.mark.slow  # a data sweep: every version of the tune split
def test_the_shipped_tune_split_on_the_offline_panel() -> None:
    result = runner.invoke(cli, ["judges", "validate", "--split", "tune", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    tune = [item for item in builtin_set() if item.split == "tune"]
    assert report["judge_model"] == "rubric" and report["items"] == len(tune)
    assert list(report["splits"]) == ["tune", "all"] and report["targets"]["split"] == "all"
    assert report["versions"] == sum(2 if item.corrected else 1 for item in tune)
    assert set(report["splits"]["tune"]["by_flaw"]) == {item.flaw_type for item in tune if item.flaws}
    # no held-out part: nothing is claimed, met or missed
    assert report["targets"]["claimed"] is False and set(report["targets"]["met"].values()) == {None}
    assert report["offline"] is True and report["complete"] is True
    assert_figures(report)


def test_check_exits_1_when_a_target_is_missed(tmp_path: Path) -> None:
    # The same sound problem, once labelled flawed and once as a control: the panel sees the same
    # text both times, so it either accepts a "flaw" (a false accept) or rejects a control.
    mislabelled = {
        "id": "sound-but-labelled-flawed",
        "split": "tune",
        "kind": "flawed",
        **SOUND,
        "flaws": [{"type": "missing_data", "levels": ["understand"], "evidence": "labelled so on purpose"}],
    }
    control = {"id": "the-same-as-a-control", "split": "tune", "kind": "control", **SOUND}
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(f"{json.dumps(mislabelled)}\n{json.dumps(control)}\n")
    args = ["judges", "validate", "--dataset", str(dataset)]
    reported = runner.invoke(cli, args)
    assert reported.exit_code == 0, reported.output  # without --check a missed target is only reported
    assert "Targets (all): not claimed: targets are claimed on a held-out split only" in reported.stdout
    checked = runner.invoke(cli, [*args, "--check"])
    assert checked.exit_code == 1 and checked.stdout == reported.stdout


def test_check_claims_nothing_on_a_small_held_out_part(tmp_path: Path) -> None:
    """A held-out part of one flawed problem and one control: perfect figures, and still no claim."""
    flawed = read_labelled(SAMPLES / "validity" / "problems.jsonl")[0]
    item = flawed.model_copy(update={"split": "heldout"}).model_dump_json(exclude_none=True)
    control = {"id": "the-control", "split": "heldout", "kind": "control", **SOUND}
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(f"{item}\n{json.dumps(control)}\n")
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset), "--check"])
    assert result.exit_code == 1, result.output
    assert "detection (refused, a check matching the flaw fired) | 1/1 = 100.0 % (95 % CI 20.7–100.0 %)" in (
        result.stdout
    )
    assert "not claimed: not enough held-out flawed problems to claim (n = 1 < 60)." in result.stdout
    assert "NOT met" not in result.stdout and "- false_accept <= 5%: met" not in result.stdout


def test_a_judge_endpoint_where_nothing_listens_exits_1_with_every_version_errored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on: every call is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MODEL", "m")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MAX_RETRIES", "0")
    control = {"id": "the-control", "split": "heldout", "kind": "control", **SOUND}
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(json.dumps(control) + "\n")
    args = ["judges", "validate", "--dataset", str(dataset), "--judge-model", "down", "--format", "json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)  # the whole report is printed before the exit
    assert report["complete"] is False and report["judged"] == 0
    causes = report["excluded"].pop("causes")
    assert report["excluded"] == {
        "total": 1,
        "errored": 1,
        "undecided": 0,
        "by_decision": {"error": 1},
        "versions": ["the-control (control): error"],
    }
    assert [(c["version"], c["ended"]) for c in causes] == [("the-control (control)", "error")]
    assert any(
        line.startswith("remember, understand, apply, analyze, evaluate, create, holistic failed: down")
        for line in causes[0]["causes"]
    ), causes
    assert report["calls"] == {"total": 7, "failed": 7, "abstained": 0}
    assert report["splits"]["heldout"]["specificity"]["n"] == 0
    assert "1 of 1 versions did not end in the panel's verdict (1 errored" in result.stderr
    markdown = runner.invoke(cli, args[:-2])
    assert markdown.exit_code == 1 and "0 judged, 1 excluded (1 errored, 0 undecided)" in markdown.stdout
    assert "specificity (sound versions accepted) | 0/0: nothing judged; 1 excluded |" in markdown.stdout


def test_a_bad_label_file_names_the_line_and_field(tmp_path: Path) -> None:
    dataset = tmp_path / "bad.jsonl"
    item = {"id": "x", "split": "tune", "kind": "flawed", **SOUND, "flaws": [{"type": "typo"}]}
    dataset.write_text("\n" + json.dumps(item) + "\n")
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset)])
    assert result.exit_code == 2 and "bad.jsonl:2: flaws.0.type: Input should be" in result.output
    dataset.write_text(json.dumps({**item, "split": "heldout", "kind": "control", "flaws": []}) + "\n")
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset), "--split", "tune"])
    assert result.exit_code == 2 and "no items in the tune split" in result.output


def test_the_dev_set_is_a_valid_labelled_set_apart_from_the_shipped_one() -> None:
    """`app/samples/validity/validity_dev.jsonl`: written apart from the detectors, for the next round of
    work on them; every flawed item has a corrected version, and no question is one of the shipped set."""
    dev = read_labelled(SAMPLES / "validity" / "validity_dev.jsonl")
    flawed = [item for item in dev if item.flaws]
    assert len(dev) == 160 and len(flawed) == 132 and all(item.corrected for item in flawed)
    assert len({item.flaw_type for item in flawed}) == 10
    shipped = {item.question for item in builtin_set()}
    assert not shipped & {item.question for item in dev}


def test_the_fresh_set_is_a_valid_labelled_set_apart_from_the_others() -> None:
    """`app/samples/validity/validity_fresh.jsonl`: a fifth measurement by two writers who never saw the
    panel, split a third held out per flaw type before the panel judged it."""
    data = SAMPLES / "validity"
    fresh = read_labelled(data / "validity_fresh.jsonl")
    flawed = [item for item in fresh if item.flaws]
    assert len(fresh) == 104 and len(flawed) == 80 and all(item.corrected for item in flawed)
    assert sum(item.split == "heldout" for item in fresh) == 35
    others = {item.question for item in builtin_set()}
    others |= {item.question for item in read_labelled(data / "validity_dev.jsonl")}
    assert not others & {item.question for item in fresh}


def test_the_sixth_set_is_a_valid_labelled_set_apart_from_the_others() -> None:
    """`app/samples/validity/validity_sixth.jsonl`: a sixth measurement (2026-11-26) by a writer who never
    saw the panel or the other sets, split before the panel judged it."""
    data = SAMPLES / "validity"
    sixth = read_labelled(data / "validity_sixth.jsonl")
    flawed = [item for item in sixth if item.flaws]
    assert len(sixth) == 70 and len(flawed) == 56 and all(item.corrected for item in flawed)
    assert sum(item.split == "heldout" for item in sixth) == 25
    assert len({item.flaw_type for item in flawed}) == 8
    others = {item.question for item in builtin_set()}
    for name in ("validity_dev.jsonl", "validity_fresh.jsonl"):
        others |= {item.question for item in read_labelled(data / name)}
    assert not others & {item.question for item in sixth}


def test_the_seventh_set_is_sound_problems_apart_from_the_others() -> None:
    """`app/samples/validity/validity_seventh.jsonl`: 80 correct problems (2026-11-26) by a writer who never
    saw the panel or the other sets, half of them built to look wrong: a measure of false refusals."""
    data = SAMPLES / "validity"
    seventh = read_labelled(data / "validity_seventh.jsonl")
    assert len(seventh) == 80 and not any(item.flaws for item in seventh)
    others = {item.question for item in builtin_set()}
    for name in ("validity_dev.jsonl", "validity_fresh.jsonl", "validity_sixth.jsonl"):
        others |= {item.question for item in read_labelled(data / name)}
    assert not others & {item.question for item in seventh}
