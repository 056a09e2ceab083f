"""How a warrant's figure is worded wherever it is shown (the refine trace, batch reports): both
errors it bounds, each with the number of versions it rests on and their split: the false-accept
upper bound over the flawed problems, and the lower bound of sound versions passed."""

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


def sound_figure(lower: float | None, n: int, split: str | None) -> str:
    """``sound passed ≥ 81.0 % (95 %), 70 held-out sound versions``; a record saved before the bound
    was kept says so."""
    if lower is None:
        return "sound passed: not recorded (saved before records kept it)"
    held = "held-out " if split == "heldout" else ""
    return f"sound passed ≥ {100 * lower:.1f} % (95 %), {n} {held}sound versions"


def both_figures(
    upper: float | None, n_flawed: int, lower: float | None, n_sound: int, split: str | None
) -> str:
    """Both errors a record bounds: ``false accepts ≤ …, 120 held-out flawed problems; sound passed ≥ …``."""
    return f"{bound_figure(upper, n_flawed, split)}; {sound_figure(lower, n_sound, split)}"


def warrant_figure(warrant: Mapping[str, Any]) -> str:
    """A valid warrant's figures: both its bounds, with the n and split of the record it cites."""
    flawed = warrant.get("false_accept") or {}
    sound = warrant.get("specificity") or {}
    return both_figures(
        warrant.get("false_accept_upper"),
        int(flawed.get("n") or 0),
        warrant.get("sound_passed_lower"),
        int(sound.get("n") or 0),
        warrant.get("split"),
    )


def source_bound(source: Mapping[str, Any]) -> str:
    """``≤ 9.0 % on 200 flawed from umwp (benchmark)``: one source's false-accept bound."""
    n = int(source.get("n_flawed") or 0)
    upper = source.get("false_accept_upper")
    where = f"from {source.get('name')} ({source.get('kind') or 'unknown kind'})"
    return f"no flawed {where}" if not n or upper is None else f"≤ {100 * upper:.1f} % on {n} flawed {where}"


def sources_text(warrant: Mapping[str, Any]) -> str:
    """``false accepts ≤ 9.0 % on 200 flawed from umwp (benchmark); ≤ 4.0 % on 176 flawed from
    shipped (shipped)``: where the bound was measured, per source; empty for a warrant of one
    source (its provenance names it) or stored before sources were kept."""
    sources = warrant.get("sources") or []
    if len(sources) < 2:
        return ""
    return "false accepts " + "; ".join(source_bound(source) for source in sources)


# What each kind of labelled set is called where a warrant names its source.
_KINDS = {
    "shipped": "the set thinkloop ships",
    "own": "the user's own labelled set",
    "benchmark": "a public benchmark",
    "reviews": "this project's teachers' reviews",
}


def source_text(warrant: Mapping[str, Any]) -> str:
    """``measured on this project's teachers' reviews (3 teachers)``: where a warrant's labels came
    from; empty for a warrant stored before sources were kept."""
    if len(warrant.get("sources") or []) > 1:
        return f"measured on {len(warrant['sources'])} labelled sets"
    source = warrant.get("source") or {}
    kind = source.get("kind")
    if kind is None:
        return ""
    teachers = source.get("reviewers")
    by = f" ({teachers} teacher{'s' if teachers != 1 else ''})" if kind == "reviews" and teachers else ""
    return f"measured on {_KINDS.get(kind, kind)}{by}"


def provenance(warrant: Mapping[str, Any]) -> str:
    """``record 3f0c…, set shipped, sha256 17407c95d697, measured on …``: what a warrant cites,
    checkably, and where its labels came from."""
    digest = f", sha256 {warrant['set_hash']}" if warrant.get("set_hash") else ""
    where = source_text(warrant)
    return (
        f"record {warrant.get('record_id')}, set {warrant.get('set')}{digest}{', ' + where if where else ''}"
    )
