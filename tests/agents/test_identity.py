"""A panel's identity: stable, and changed by every part that decides an acceptance."""

from __future__ import annotations

import dataclasses

import pytest

import prompts
from agents.identity import JUDGE_PROMPTS, panel_identity, source_version
from agents.models import ModelSpec
from graphs.scoring import get_policy

SPEC = ModelSpec(name="judge", model="qwen2.5:7b", base_url="http://user:secret@127.0.0.1:8080/v1/?k=1")


def test_the_same_panel_has_the_same_id() -> None:
    one = panel_identity("judge", SPEC, get_policy("default"), "0.1.0")
    two = panel_identity("judge", SPEC, get_policy("default"), "0.1.0")
    assert one.id == two.id and len(one.id) == 16
    assert one.parts()["endpoint"] == "http://127.0.0.1:8080/v1"  # never a credential or a query
    assert set(one.prompts) == set(JUDGE_PROMPTS) and one.solver == prompts.load_prompt("solver").version
    assert one.checks is None and one.verifier == source_version("verify")


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
    ],
)
def test_any_part_changed_is_another_panel(change: dict[str, object]) -> None:
    base: dict[str, object] = {
        "judge_model": "judge",
        "spec": SPEC,
        "policy": get_policy("default"),
        "thinkloop": "0.1.0",
    }
    before = panel_identity(**base)  # type: ignore[arg-type]
    after = panel_identity(**(base | change))  # type: ignore[arg-type]
    assert after.id != before.id


def test_a_new_prompt_version_is_another_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    before = panel_identity("judge", SPEC, get_policy("default"), "0.1.0")
    real = prompts.load_prompt

    def load(name: str) -> prompts.Prompt:
        found = real(name)
        return dataclasses.replace(found, version=f"{name}@000000000000") if name == "judge_create" else found

    monkeypatch.setattr("agents.identity.load_prompt", load)
    after = panel_identity("judge", SPEC, get_policy("default"), "0.1.0")
    assert after.id != before.id and after.prompts["judge_create"] == "judge_create@000000000000"


def test_the_round_limit_is_not_part_of_the_panel() -> None:
    three = panel_identity("judge", SPEC, get_policy("default"), "0.1.0")
    five = panel_identity("judge", SPEC, get_policy("default", max_rounds=5), "0.1.0")
    assert three.id == five.id and "max_rounds" not in three.policy


def test_the_offline_panel_is_named_by_its_checks_not_by_prompts() -> None:
    offline = panel_identity("rubric", None, get_policy("default"), "0.1.0")
    assert offline.prompts == {} and offline.solver is None and offline.model is None
    assert offline.checks == source_version("rubric") and offline.checks.startswith("rubric@")
    assert offline.id != panel_identity("judge", SPEC, get_policy("default"), "0.1.0").id
