"""Validity records and warrants as pure functions: Wilson shares, what may be recorded, the
warrant an acceptance carries, and when a required warrant is met."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agents.identity import Requirement, panel_identity, parse_requirement
from agents.llm.models import ModelRegistry, ModelSpec
from app.cli.render import warrant_line
from app.models import Project, ValidityRecord
from app.validity.records import (
    NotRecordable,
    Source,
    bench_identity,
    identity_of,
    new_record,
    requirement_of,
    share,
    uncertified,
    warrant_of,
)
from graphs.decision import decision_version
from graphs.scoring import get_policy
from tests.helpers.validity import report

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
    # both errors, and the counts of every kind judged
    assert record.specificity_low is not None
    assert record.specificity_low == record.specificity["low"] and 0.8 < record.specificity_low < 0.95
    assert (record.n_twins, record.adversarial_gap["count"]) == (12, 3)


@pytest.mark.parametrize(
    ("bench", "why"),
    [
        (report((2, 120), errored=3), "3 of 160 versions did not end in the panel's verdict \\(3 errored"),
        (report((0, 0)), "holds no flawed problem"),
        (report((2, 120), split="all"), "the bench judged no held-out problem"),  # tune problems only
        # a panel that refused every sound version has no false accepts for that reason alone
        (report((0, 70), sound=(0, 70)), "passed 0 of 70 sound versions \\(0.0%\\), below the floor of 50%"),
        (report((0, 70), sound=(34, 70)), "passed 34 of 70 sound versions"),
        (report((0, 70), sound=(19, 19)), "holds 19 sound version\\(s\\).*at least 20"),
        (report((0, 70), sound=(0, 0)), "holds 0 sound version"),
    ],
)
def test_no_record_of_a_bench_that_is_no_measurement(bench: dict[str, Any], why: str) -> None:
    with pytest.raises(NotRecordable, match=why):
        new_record(IDENTITY, bench, "district", "ab" * 32)


def test_the_specificity_floor_is_a_setting() -> None:
    assert new_record(IDENTITY, report((0, 70), sound=(35, 70)), "d", "ab" * 32).specificity["count"] == 35
    with pytest.raises(NotRecordable, match="below the floor of 70%"):
        new_record(IDENTITY, report((0, 70), sound=(48, 70)), "d", "ab" * 32, floor=0.7)
    assert new_record(IDENTITY, report((0, 70), sound=(49, 70)), "d", "ab" * 32, floor=0.7).n_sound == 70
    # at the floor exactly (0.7 × 20 is 14.000000000000002 in floating point)
    assert new_record(IDENTITY, report((0, 70), sound=(14, 20)), "d", "ab" * 32, floor=0.7).n_sound == 20


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
    assert (
        warrant["sound_passed_lower"] == pytest.approx(0.8350, abs=1e-4) and warrant["specificity"]["n"] == 40
    )
    assert warrant["set_hash"] == "ab" * 6 and warrant["counts"] == {"flawed": 120, "sound": 40, "twins": 12}
    assert warrant["measured_at"] == "2026-11-26T23:00:00+00:00"
    assert warrant_of(None) == {"status": "none"}


def test_a_required_warrant_is_met_only_at_or_below_its_bound() -> None:
    assert uncertified(warrant_of(stored(0.0585)), None) is None  # nothing required
    assert uncertified(warrant_of(None), None) is None
    assert uncertified(warrant_of(stored(0.0585)), 0.10) is None
    assert uncertified(warrant_of(stored(0.10)), 0.10) is None  # at the bound
    above = uncertified(warrant_of(stored(0.1001)), 0.10)
    assert above == (
        "panel not certified: its cited validity record (rec1) bounds false accepts at 10.0% (95 %), "
        "above the required 10.0%"
    )
    assert uncertified(warrant_of(None), 0.10) == (
        "panel not certified: this panel has never been validated (required: false accepts ≤ 10.0%, "
        "sound passed ≥ 50.0%)"
    )


def test_a_required_warrant_bounds_sound_versions_passed_too() -> None:
    warrant = warrant_of(stored(0.0585))  # 38 of 40 sound versions passed: lower bound 83.5 %
    assert uncertified(warrant, Requirement(0.10, 0.80)) is None
    assert uncertified(warrant, Requirement(0.10, 0.90)) == (
        "panel not certified: its cited validity record (rec1) bounds sound passed at ≥ 83.5% (95 %), "
        "below the required 90.0%"
    )
    both = uncertified(warrant_of(stored(0.2)), Requirement(0.10, 0.90))
    assert both is not None and "false accepts at 20.0%" in both and "sound passed at ≥ 83.5%" in both


def test_a_record_saved_before_the_sound_bound_meets_no_requirement() -> None:
    old = stored(0.0585)
    old.specificity_low = None  # saved before records kept it (migration 0026 leaves it null)
    why = uncertified(warrant_of(old), 0.10)
    assert why is not None and "holds no lower bound of sound versions passed" in why
    assert "validate the panel again (required: sound passed ≥ 50.0%)" in why
    assert warrant_line(warrant_of(old)).endswith(
        "sound passed: not recorded (saved before records kept it) "
        "(record rec1, set district, sha256 abababababab, measured on the user's own labelled set)"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        (0.1, Requirement(0.1, 0.5)),
        ("0.10", Requirement(0.1, 0.5)),
        ("0.10,0.70", Requirement(0.1, 0.7)),
        (" 0.05 , 0.9 ", Requirement(0.05, 0.9)),
    ],
)
def test_a_requirement_is_one_bound_or_two(value: Any, expected: Requirement | None) -> None:
    assert parse_requirement(value) == expected


@pytest.mark.parametrize("value", ["0", "1.5", "x", "0.1,0.7,0.9", "0.1,0", "nan", "0.1,", True])
def test_a_bad_requirement_is_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="required warrant"):
        parse_requirement(value)


def test_a_projects_bounds_win_over_the_settings() -> None:
    setting = Requirement(0.10, 0.70)
    assert requirement_of(None, None) is None and requirement_of(None, setting) == setting
    assert requirement_of(Project(name="a"), setting) == setting
    assert requirement_of(Project(name="b", require_warrant=0.05), setting) == Requirement(0.05, 0.70)
    assert requirement_of(Project(name="c", require_warrant=0.05), None, floor=0.6) == Requirement(0.05, 0.6)
    own = Project(name="d", require_warrant=0.05, require_specificity=0.9)
    assert requirement_of(own, setting) == Requirement(0.05, 0.9)
    assert requirement_of(Project(name="e", require_specificity=0.9), setting) == Requirement(0.10, 0.9)
    assert requirement_of(Project(name="f", require_specificity=0.9), None) is None


def test_the_trace_line_of_a_warrant() -> None:
    record = stored(0.0789)
    record.false_accept = share({"n": 120, "count": 4})
    assert warrant_line(warrant_of(record)) == (
        "accepted — warrant: false accepts ≤ 7.9 % (95 %), 120 held-out flawed problems; sound passed "
        "≥ 83.5 % (95 %), 40 held-out sound versions (record rec1, set district, sha256 abababababab, "
        "measured on the user's own labelled set)"
    )
    teachers = warrant_of(record) | {
        "source": {"kind": "reviews", "name": "reviews of north", "reviewers": 3}
    }
    assert warrant_line(teachers).endswith("measured on this project's teachers' reviews (3 teachers))")
    assert warrant_line({"status": "none"}) == "accepted — no warrant: this panel has never been validated"
    legacy = warrant_of(record) | {"split": "all"}  # saved before records were held-out only
    assert "120 flawed problems of every split (tune split included: not held out)" in warrant_line(legacy)


def test_a_records_source_comes_from_its_hash_and_its_items_never_from_a_claim() -> None:
    from agents.labelled.labels import LabelledItem
    from app.validity.records import source_of

    def item(n: int, kind: str | None) -> LabelledItem:
        source = {"source": {"name": "UMWP", "kind": kind}} if kind else {}
        return LabelledItem.model_validate(
            {"id": f"i{n}", "split": "heldout", "kind": "control", "question": f"q{n}", "solution": "s"}
            | source
        )

    assert source_of([item(1, "benchmark"), item(2, "benchmark")], "umwp.jsonl").kind == "benchmark"
    assert source_of([item(1, "benchmark"), item(2, None)], "mixed.jsonl").kind == "own"
    # an item's word never makes a set shipped or a review set
    assert source_of([item(1, "shipped")], "mine.jsonl").kind == "own"
    assert source_of([item(1, "reviews")], "mine.jsonl").kind == "own"
    assert source_of([item(1, None)], "shipped").kind == "shipped"  # the name, checked against the hash


def test_a_source_requirement_refuses_a_warrant_measured_elsewhere() -> None:
    """A project requiring its own teachers' reviews: a record of the shipped set (its name checked
    against its hash makes it of kind shipped) leaves an acceptance uncertified, with the cause."""
    shipped = new_record(IDENTITY, report((2, 120)), "shipped", "ab" * 32)
    shipped.id, shipped.false_accept_high = "rec2", 0.0585
    assert shipped.source_kind == "shipped"
    required = Requirement(1.0, 0.5, "reviews")
    why = uncertified(warrant_of(shipped), required)
    assert why == (
        "panel not certified: its cited validity record (rec2) was measured on shipped (shipped, 120 "
        "flawed), not on the required source: reviews"
    )
    reviewed = new_record(
        IDENTITY, report((2, 120)), "reviews of north", "cd" * 32, source=Source("reviews", 3)
    )
    reviewed.id, reviewed.false_accept_high = "rec3", 0.0585
    assert uncertified(warrant_of(reviewed), required) is None
    assert warrant_of(reviewed)["source"] == {"kind": "reviews", "name": "reviews of north", "reviewers": 3}


def mixed_report() -> dict[str, Any]:
    """A bench over a public benchmark and the shipped set (``by_source``, as judges validate makes it)."""
    umwp = {
        "kind": "benchmark",
        "false_accept": {"n": 150, "count": 82, "rate": 82 / 150},
        "specificity": {"n": 150, "count": 120, "rate": 0.8},
        "pairs_told_apart": {"n": 150, "count": 30, "rate": 0.2},
    }
    shipped = {
        "kind": "shipped",
        "false_accept": {"n": 120, "count": 2, "rate": 2 / 120},
        "specificity": {"n": 40, "count": 38, "rate": 0.95},
        "pairs_told_apart": {"n": 0, "count": 0, "rate": None},
    }
    return report((84, 270)) | {"by_source": {"umwp": umwp, "shipped": shipped}}


def test_a_record_of_several_sets_keeps_each_sources_figures() -> None:
    from app.validity.provenance import shipped_hash

    hashes = {"umwp": "cd" * 32, "shipped": shipped_hash()}
    record = new_record(IDENTITY, mixed_report(), "umwp.jsonl + shipped", "ab" * 32, hashes=hashes)
    umwp, shipped = record.sources or []
    assert (umwp["name"], umwp["kind"], umwp["set_hash"]) == ("umwp", "benchmark", "cd" * 32)
    assert (umwp["n_flawed"], umwp["n_sound"], umwp["pairs_told_apart"]["count"]) == (150, 150, 30)
    assert 0.46 < umwp["false_accept"]["low"] < 82 / 150 < umwp["false_accept"]["high"] < 0.63
    assert (shipped["kind"], shipped["n_flawed"], shipped["specificity"]["n"]) == ("shipped", 120, 40)
    # only the shipped set's hash makes a source shipped: a file claiming the kind is the user's own
    claimed = new_record(IDENTITY, mixed_report(), "x", "ab" * 32, hashes={"shipped": "ef" * 32})
    assert [s["kind"] for s in claimed.sources or []] == ["benchmark", "own"]
    # the warrant line names where its bound was measured, per source; the bound cited stays overall
    record.id, record.measured_at = "rec4", datetime(2026, 11, 26, 23, 0, tzinfo=UTC)
    warrant = warrant_of(record)
    assert warrant["false_accept_upper"] == record.false_accept_high
    assert [s["name"] for s in warrant["sources"]] == ["umwp", "shipped"]
    line = warrant_line(warrant)
    assert "; by source: false accepts ≤ 62.4 % on 150 flawed from umwp (benchmark); ≤ 5.9 % on 120 " in line
    assert "flawed from shipped (shipped) (record rec4, set umwp.jsonl + shipped" in line
    assert line.endswith("measured on 2 labelled sets)")


def test_a_record_saved_before_sources_has_its_own_set_as_its_one_source() -> None:
    from app.validity.panel_schemas import RecordPublic

    old = stored(0.0585)
    old.sources = None  # saved before migration 0032
    (only,) = RecordPublic.of(old).sources
    assert (only.name, only.kind, only.n_flawed, only.set_hash) == ("district", "own", 120, "ab" * 32)
    assert only.pairs_told_apart is None
    assert warrant_of(old)["sources"][0]["false_accept_upper"] == 0.0585


def test_a_not_shipped_requirement_is_met_only_through_a_source_of_enough_flawed() -> None:
    shipped = new_record(IDENTITY, report((2, 120)), "shipped", "ab" * 32)
    shipped.id = "rec5"
    not_shipped = Requirement(1.0, 0.5, "not-shipped")
    assert uncertified(warrant_of(shipped), not_shipped) == (
        "panel not certified: its cited validity record (rec5) was measured on shipped (shipped, 120 "
        "flawed), not on the required source: not-shipped"
    )
    from app.validity.provenance import shipped_hash

    mixed = new_record(IDENTITY, mixed_report(), "m", "ab" * 32, hashes={"shipped": shipped_hash()})
    mixed.id = "rec6"
    assert uncertified(warrant_of(mixed), not_shipped) is None  # through umwp, a public benchmark
    assert uncertified(warrant_of(mixed), Requirement(1.0, 0.5, "not-shipped", 150)) is None
    too_few = uncertified(warrant_of(mixed), Requirement(1.0, 0.5, "benchmark", 200))
    assert too_few is not None and too_few.endswith(
        "was measured on umwp (benchmark, 150 flawed) and shipped (shipped, 120 flawed), not on the "
        "required source: benchmark with at least 200 flawed"
    )
    # the bound is met on the source that qualifies, not on the record's overall figure
    tight = uncertified(warrant_of(mixed), Requirement(0.10, 0.5, "benchmark"))
    assert (
        tight is not None
        and "bounds false accepts at 62.4% on umwp (95 %), above the required 10.0%" in tight
    )
    assert uncertified(warrant_of(mixed), Requirement(0.10, 0.5, "shipped")) is None
    assert uncertified(warrant_of(shipped), Requirement(1.0, 0.5, None, 100)) is None  # any kind, 120 ≥ 100


def test_the_settings_and_a_project_require_a_source_and_a_minimum_of_flawed() -> None:
    from pydantic import ValidationError

    from app.settings import Settings

    settings = Settings(require_warrant_source="not-shipped", require_warrant_min_flawed=100)
    assert settings.warrant_requirement() == Requirement(1.0, 0.5, "not-shipped", 100)
    both = Settings(require_warrant="0.1,0.7", require_warrant_source="benchmark")
    assert both.warrant_requirement() == Requirement(0.1, 0.7, "benchmark")
    assert Settings().warrant_requirement() is None
    with pytest.raises(ValidationError, match="required warrant source is one of"):
        Settings(require_warrant_source="elsewhere")
    own = Project(name="g", require_warrant_min_flawed=50)
    assert requirement_of(own, None) == Requirement(1.0, 0.5, None, 50)
    assert requirement_of(own, Requirement(0.1, 0.7, "benchmark", 100)) == Requirement(
        0.1, 0.7, "benchmark", 50
    )
