"""The default choice among a panel's records, as a pure function: the most held-out flawed versions,
the newest among equals, a pin over both, and a record of every split counting as none held out."""

from __future__ import annotations

from datetime import UTC, datetime

from app.models import ValidityRecord
from app.validity.selection import choose


def record(rid: str, n_flawed: int, day: int, split: str = "heldout", panel: str = "p1") -> ValidityRecord:
    share = {"n": n_flawed, "count": 0, "rate": 0.0, "low": 0.0, "high": 0.5}
    return ValidityRecord(
        id=rid,
        panel_id=panel,
        identity={},
        judge_model="sim",
        set_name=rid,
        set_hash="ab" * 32,
        split=split,
        n_flawed=n_flawed,
        n_sound=20,
        false_accept=share,
        specificity=share,
        detection=share,
        adversarial_gap=share,
        measured_at=datetime(2026, 11, day, tzinfo=UTC),
    )


def test_the_most_held_out_flawed_versions_win_whatever_came_later() -> None:
    rows = [record("one", 1, 28), record("big", 22, 20), record("mid", 10, 27)]
    assert choose(rows, {})["p1"].id == "big"


def test_among_equals_the_newest_wins() -> None:
    assert choose([record("old", 22, 20), record("new", 22, 21)], {})["p1"].id == "new"


def test_a_record_of_every_split_counts_as_none_held_out() -> None:
    rows = [record("legacy", 200, 20, split="all"), record("held", 3, 19)]
    assert choose(rows, {})["p1"].id == "held"


def test_a_pin_wins_and_a_pin_of_a_record_not_listed_does_not() -> None:
    rows = [record("one", 1, 28), record("big", 22, 20), record("other", 5, 20, panel="p2")]
    chosen = choose(rows, {"p1": "one", "p2": "gone"})
    assert (chosen["p1"].id, chosen["p2"].id) == ("one", "other")
