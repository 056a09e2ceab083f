"""The validity bench's figures per source and per source category: a set written by the project is
one source among others (a public benchmark, the user's own), never the headline. For each source:
let-through (flawed versions passed), specificity (sound versions passed), detection, and the pairs
told apart (a flawed item refused while the sound original it is paired with passed), each with its
Wilson 95 % interval and n; and let-through per category of the source's own taxonomy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphs.analysis.judged import Judged
from graphs.analysis.validity_metrics import detected, share

UNNAMED = "unnamed"  # the source of items that name none


def _share(versions: Sequence[Judged], hit: Any) -> dict[str, Any]:
    decided = [j for j in versions if j.decided]
    return share([bool(hit(j)) for j in decided], len(versions) - len(decided))


def pairs_told_apart(versions: Sequence[Judged]) -> dict[str, Any]:
    """Of the pairs (a flawed item and the sound original it shares ``pair`` with, both decided):
    those whose flawed item was refused and whose original passed."""
    flawed: dict[str, list[Judged]] = {}
    originals: dict[str, Judged] = {}
    for j in versions:
        if j.pair is None or not j.decided:
            continue
        if j.version == "flawed":
            flawed.setdefault(j.pair, []).append(j)
        elif j.version == "control":
            originals[j.pair] = j
    hits = [
        not f.passed and originals[pair].passed for pair in flawed for f in flawed[pair] if pair in originals
    ]
    return share(hits)


def by_source(judged: Sequence[Judged]) -> dict[str, Any]:
    """Source name → its figures (empty when no item names a source: a set of one source)."""
    if not any(j.source for j in judged):
        return {}
    names = sorted({j.source or UNNAMED for j in judged})
    return {name: _figures([j for j in judged if (j.source or UNNAMED) == name]) for name in names}


def _figures(versions: Sequence[Judged]) -> dict[str, Any]:
    flawed = [j for j in versions if j.version == "flawed"]
    sound = [j for j in versions if j.version in ("control", "corrected")]
    categories = sorted({j.category for j in flawed if j.category})
    return {
        "kind": next((j.source_kind for j in versions if j.source_kind), ""),
        "false_accept": _share(flawed, lambda j: j.passed),
        "specificity": _share(sound, lambda j: j.passed),
        "detection": _share(flawed, detected),
        "pairs_told_apart": pairs_told_apart(versions),
        "by_category": {
            name: _share([j for j in flawed if j.category == name], lambda j: j.passed) for name in categories
        },
    }
