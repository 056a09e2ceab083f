"""Validity records and warrants as pure functions: Wilson shares, what may be recorded, the
warrant an acceptance carries, and when a required warrant is met."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agents.identity import panel_identity
from agents.models import ModelRegistry, ModelSpec
from app.cli.render import warrant_line
from app.models import ValidityRecord
from app.validity.records import (
    NotRecordable,
    bench_identity,
    identity_of,
    new_record,
    share,
    uncertified,
    warrant_of,
)
from graphs.decision import decision_version
from graphs.scoring import get_policy


def report(flawed: tuple[int, int], errored: int = 0, split: str = "heldout") -> dict[str, Any]:
    """A bench report whose headline split accepted ``flawed[0]`` of ``flawed[1]`` flawed problems."""
    count, n = flawed
    summary = {
        "split": split,
        "false_accept": {"n": n, "count": count, "rate": count / n if n else None},
        "specificity": {"n": 40, "count": 38, "rate": 0.95},
        "detection": {"n": n, "count": n - count, "rate": (n - count) / n if n else None},
        "adversarial_gap": {"n": 0, "count": 0, "rate": None},
    }
    return {
        "judge_model": "judge",
        "policy": "default",
        "versions": n + 40,
        "excluded": {"total": errored, "errored": errored, "undecided": 0},
        "splits": {split: summary, "all": summary | {"split": "all"}},
        "targets": {"split": split},
    }


IDENTITY = panel_identity("rubric", None, get_policy("default"), "0.1.0", decision="decide@1")


def test_a_share_carries_its_wilson_interval() -> None:
    none_of_35 = share({"n": 35, "count": 0, "rate": 0.0})
    # Wilson 95 % for 0 of n has upper bound z² / (n + z²): 3.8415 / 38.8415
    assert none_of_35 == pytest.approx(
        {"n": 35, "count": 0, "rate": 0.0, "low": 0.0, "high": 0.098901}, abs=1e-6
    )
    assert share({"n": 0, "count": 0, "rate": None}) == {
        "n": 0,
        "count": 0,
        "rate": None,
        "low": None,
        "high": None,
    }
    given = share({"n": 10, "count": 1, "rate": 0.1, "low": 0.01, "high": 0.4})  # the bench's own interval
    assert (given["low"], given["high"]) == (0.01, 0.4)


def test_a_record_keeps_the_headline_split_with_intervals() -> None:
    record = new_record(IDENTITY, report((2, 120)), "district", "ab" * 32, "p1")
    assert (
        record.panel_id == IDENTITY.id and record.identity == IDENTITY.parts() and record.project_id == "p1"
    )
    assert (record.split, record.n_flawed, record.n_sound) == ("heldout", 120, 40)
    assert record.false_accept["count"] == 2 and record.false_accept_high == record.false_accept["high"]
    assert 0.0 < record.false_accept["low"] < 2 / 120 < record.false_accept["high"] < 0.06
    assert record.detection["count"] == 118 and record.specificity["high"] is not None


@pytest.mark.parametrize(
    ("bench", "why"),
    [
        (report((2, 120), errored=3), "3 of 160 versions did not end in the panel's verdict \\(3 errored"),
        (report((0, 0)), "holds no flawed problem"),
        (report((2, 120), split="all"), "the bench judged no held-out problem"),  # tune problems only
    ],
)
def test_no_record_of_a_bench_that_is_no_measurement(bench: dict[str, Any], why: str) -> None:
    with pytest.raises(NotRecordable, match=why):
        new_record(IDENTITY, bench, "district", "ab" * 32)


REGISTRY = ModelRegistry({"judge": ModelSpec(name="judge", model="qwen", base_url="http://127.0.0.1:9/v1")})


@pytest.mark.parametrize(
    ("reported", "why"),
    [
        ([], "the judge endpoint never answered, so it reported no model id"),
        (["qwen", "llama"], "reported 2 model ids during the bench \\('llama', 'qwen'\\)"),
    ],
)
def test_no_record_without_one_reported_model_id(reported: list[str], why: str) -> None:
    bench = report((2, 120)) | {"reported_models": sorted(reported)}
    with pytest.raises(NotRecordable, match=why):
        bench_identity(REGISTRY, bench)
    unanswered = identity_of(REGISTRY, "judge", get_policy("default"))
    with pytest.raises(NotRecordable, match="reported no model id"):
        new_record(unanswered, report((2, 120)), "district", "ab" * 32)


def test_a_record_is_of_the_reported_model() -> None:
    identity = bench_identity(REGISTRY, report((2, 120)) | {"reported_models": ["qwen2.5-7b-q4"]})
    assert identity.model == "qwen" and identity.reported_model == "qwen2.5-7b-q4"
    assert identity.decision == decision_version() and identity.decision.startswith("decide@")
    assert (
        new_record(identity, report((2, 120)), "d", "ab" * 32).identity["reported_model"] == "qwen2.5-7b-q4"
    )


def stored(high: float | None, n: int = 120) -> ValidityRecord:
    record = new_record(IDENTITY, report((2, n)), "district", "ab" * 32)
    record.id, record.false_accept_high = "rec1", high
    record.measured_at = datetime(2026, 11, 26, 23, 0, tzinfo=UTC)
    return record


def test_a_warrant_cites_the_record_or_says_none() -> None:
    warrant = warrant_of(stored(0.0585))
    assert warrant["status"] == "valid" and warrant["record_id"] == "rec1" and warrant["set"] == "district"
    assert warrant["false_accept_upper"] == 0.0585 and warrant["split"] == "heldout"
    assert warrant["measured_at"] == "2026-11-26T23:00:00+00:00"
    assert warrant_of(None) == {"status": "none"}


def test_a_required_warrant_is_met_only_at_or_below_its_bound() -> None:
    assert uncertified(warrant_of(stored(0.0585)), None) is None  # nothing required
    assert uncertified(warrant_of(None), None) is None
    assert uncertified(warrant_of(stored(0.0585)), 0.10) is None
    assert uncertified(warrant_of(stored(0.10)), 0.10) is None  # at the bound
    above = uncertified(warrant_of(stored(0.1001)), 0.10)
    assert above == (
        "panel not certified: its newest validity record (rec1) bounds false accepts at 10.0% (95 %), "
        "above the required 10.0%"
    )
    assert uncertified(warrant_of(None), 0.10) == (
        "panel not certified: this panel has never been validated (required: false accepts ≤ 10.0%)"
    )


def test_the_trace_line_of_a_warrant() -> None:
    record = stored(0.0789)
    record.false_accept = share({"n": 120, "count": 4})
    assert warrant_line(warrant_of(record)) == (
        "accepted — warrant: false accepts ≤ 7.9 % (95 %), 120 held-out flawed problems "
        "(record rec1, set district)"
    )
    assert warrant_line({"status": "none"}) == "accepted — no warrant: this panel has never been validated"
    legacy = warrant_of(record) | {"split": "all"}  # saved before records were held-out only
    assert "120 flawed problems of every split (tune split included: not held out)" in warrant_line(legacy)
