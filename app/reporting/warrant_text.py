"""How a warrant's figure is worded wherever it is shown (the refine trace, batch reports): the
false-accept bound always with the number of flawed problems it rests on and their split."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What each split a record may have been measured on is called beside its n. Records are saved from
# held-out problems only (app.validity.records); "all" and "tune" name records saved before that rule.
_SPLITS = {
    "heldout": "held-out flawed problems",
    "all": "flawed problems of every split (tune split included: not held out)",
    "tune": "flawed problems of the tune split (not held out)",
}


def rests_on(n: int, split: str | None) -> str:
    """``120 held-out flawed problems``: what a record's false-accept bound rests on."""
    return f"{n} {_SPLITS.get(split or '', 'flawed problems')}"


def bound_figure(upper: float | None, n: int, split: str | None) -> str:
    """``false accepts ≤ 8.3 % (95 %), 120 held-out flawed problems``."""
    bound = "unknown" if upper is None else f"{100 * upper:.1f} %"
    return f"false accepts ≤ {bound} (95 %), {rests_on(n, split)}"


def warrant_figure(warrant: Mapping[str, Any]) -> str:
    """A valid warrant's figure: its bound, with the n and split of the record it cites."""
    share = warrant.get("false_accept") or {}
    return bound_figure(warrant.get("false_accept_upper"), int(share.get("n") or 0), warrant.get("split"))
