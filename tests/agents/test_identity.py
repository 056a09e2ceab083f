"""A panel's identity: stable, and changed by every part that decides an acceptance."""

from __future__ import annotations

import dataclasses
import shutil
import uuid
from pathlib import Path

import pytest

import agents
import prompts
from agents.identity import (
    DECISION_MODULES,
    JUDGE_PROMPTS,
    NO_WARRANT,
    Requirement,
    Warrants,
    panel_identity,
    reported_by,
    source_hash,
    source_version,
)
from agents.llm.models import MaxTokens, ModelSpec
from graphs.scoring import get_policy

SPEC = ModelSpec(name="judge", model="qwen2.5:7b", base_url="http://user:secret@127.0.0.1:8080/v1/?k=1")


def test_the_same_panel_has_the_same_id() -> None:
    one = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    two = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    assert one.id == two.id and len(one.id) == 16
    assert one.parts()["endpoint"] == "http://127.0.0.1:8080/v1"  # never a credential or a query
    assert set(one.prompts) == set(JUDGE_PROMPTS) and one.solver == prompts.load_prompt("solver").version
    assert one.checks is None and one.verifier == source_version("verify")
    assert one.code == source_hash("agents", DECISION_MODULES, "agents") and one.code.startswith("agents@")


@pytest.mark.parametrize(
    "change",
    [
        {"judge_model": "other"},
        {"spec": SPEC.model_copy(update={"model": "qwen2.5:14b"})},
        {"spec": SPEC.model_copy(update={"base_url": "http://127.0.0.1:8081/v1"})},
        {"spec": SPEC.model_copy(update={"temperature": 0.7})},
        {"spec": SPEC.model_copy(update={"seed": 7})},
        {"policy": get_policy("think-paper")},
        {"policy": get_policy("default", tau=0.9)},
        {"policy": get_policy("default", judge_thresholds={"evaluate": 90.0})},
        {"thinkloop": "0.2.0"},
        {"reported_model": "qwen2.5:7b-instruct-q4_K_M"},
        {"spec": SPEC.model_copy(update={"max_tokens": MaxTokens(judge=600)})},
        {"spec": SPEC.model_copy(update={"max_tokens": MaxTokens(solver=300)})},
        {"spec": SPEC.model_copy(update={"structured_output": "prompt"})},
        {"spec": SPEC.model_copy(update={"parse_retries": 0})},
        {"decision": "decide@2"},
    ],
)
def test_any_part_changed_is_another_panel(change: dict[str, object]) -> None:
    base: dict[str, object] = {
        "judge_model": "judge",
        "spec": SPEC,
        "policy": get_policy("default"),
        "thinkloop": "0.1.0",
        "decision": "decide@1",
        "reported_model": "qwen2.5:7b",
    }
    before = panel_identity(**base)  # type: ignore[arg-type]
    after = panel_identity(**(base | change))  # type: ignore[arg-type]
    assert after.id != before.id


def test_a_new_prompt_version_is_another_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    before = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    real = prompts.load_prompt

    def load(name: str) -> prompts.Prompt:
        found = real(name)
        return dataclasses.replace(found, version=f"{name}@000000000000") if name == "judge_create" else found

    monkeypatch.setattr("agents.identity.load_prompt", load)
    after = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    assert after.id != before.id and after.prompts["judge_create"] == "judge_create@000000000000"


def test_the_round_limit_is_not_part_of_the_panel() -> None:
    three = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    five = panel_identity("judge", SPEC, get_policy("default", max_rounds=5), "0.1.0", decision="decide@1")
    assert three.id == five.id and "max_rounds" not in three.policy


def test_the_offline_panel_is_named_by_its_checks_not_by_prompts() -> None:
    offline = panel_identity("rubric", None, get_policy("default"), "0.1.0", decision="decide@1")
    assert offline.prompts == {} and offline.solver is None and offline.model is None
    assert offline.checks == source_version("rubric") and offline.checks.startswith("rubric@")
    assert offline.id != panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1").id


def test_the_reported_model_completes_the_identity() -> None:
    asked = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    assert asked.reported_model is None and not asked.answered  # its endpoint has not answered yet
    answered = asked.reporting("qwen2.5:7b-q4")
    assert answered.answered and answered.reported_model == "qwen2.5:7b-q4" and answered.id != asked.id
    assert answered.parts()["max_tokens"] == {"judge": 1000, "solver": 500}
    assert answered.structured_output == "json_schema" and answered.decision == "decide@1"
    offline = panel_identity("rubric", None, get_policy("default"), "0.1.0", decision="decide@1")
    assert offline.answered and offline.reporting("anything") is offline  # no endpoint to report one
    assert offline.max_tokens == {} and offline.structured_output is None


def test_one_reported_id_or_none() -> None:
    assert reported_by(["m", None, "m"]) == "m"
    assert reported_by([None, None]) is None  # nothing answered
    assert reported_by(["m", "n"]) is None  # the endpoint changed models between calls
    assert reported_by(["", None]) == ""  # it answered without naming a model


def test_warrants_are_picked_by_the_reported_id() -> None:
    panel = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    valid = {"status": "valid", "record_id": "r1", "false_accept_upper": 0.05, "sound_passed_lower": 0.9}
    warrants = Warrants(panel, {"qwen2.5:7b": valid}, bound=Requirement(0.10))
    assert warrants.warrant("qwen2.5:7b") == valid and warrants.uncertified("qwen2.5:7b") is None
    assert warrants.warrant("llama3:8b") == NO_WARRANT  # another model behind the same name
    assert warrants.warrant(None) == NO_WARRANT  # the endpoint never answered
    assert str(warrants.uncertified("llama3:8b")).startswith("panel not certified: this panel has never")


def test_the_code_part_hashes_the_agents_modules_that_decide() -> None:
    # the solver comparison, the degenerate checks and the reply parsing decide acceptances (issue 49)
    assert {"answers", "judges", "solver", "llm/client", "llm/structured", "schemas"} <= set(DECISION_MODULES)
    offline = panel_identity("rubric", None, get_policy("default"), "0.1.0", decision="decide@1")
    judged = panel_identity("judge", SPEC, get_policy("default"), "0.1.0", decision="decide@1")
    assert offline.code == judged.code


def test_the_code_part_changes_with_any_edit_of_a_hashed_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"agents_copy_{uuid.uuid4().hex[:8]}"  # a copy of the package as another install of it
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(agents.__file__).parent, tmp_path / name, ignore=ignore)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = source_hash(name, DECISION_MODULES, "agents")
    assert before == source_hash("agents", DECISION_MODULES, "agents")  # the same bytes, the same hash
    answers = tmp_path / name / "answers.py"
    source = answers.read_text(encoding="utf-8")
    edited = source.replace("return 0.5 /", "return 0.6 /")  # a wider rounding: fewer solver refusals
    assert edited != source
    answers.write_text(edited, encoding="utf-8")
    source_hash.cache_clear()
    assert source_hash(name, DECISION_MODULES, "agents") != before
