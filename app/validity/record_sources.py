"""A validity record's sources: the labelled sets a bench judged at once, each with its kind, hash,
counts and figures, so that a warrant says where its bound was measured (a shipped set's figure
does not carry over to a public benchmark's problems, nor the other way).

A source's kind is kept as its items say it (a public benchmark, the user's own), except the two
kinds no item's word can give: shipped (only a source whose hash is the shipped set's) and reviews
(only a project's review set, read from its review queue).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.labelled.canonical import canonical_hash
from agents.labelled.labels import LabelledItem
from app.models import ValidityRecord
from app.validity.provenance import REVIEWS, SHIPPED, shipped_hash
from graphs.analysis.validity_metrics import share as bench_share
from graphs.analysis.validity_sources import UNNAMED

OWN = "own"  # a record's source kind: the user's own labelled set (shipped, benchmark, reviews the others)
BENCHMARK = "benchmark"


def share(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``{"n", "count", "rate", "low", "high"}``: the bench's share with its Wilson 95 % interval
    (taken from the bench when it reports one, else computed by the bench's own ``share``)."""
    if "low" in raw and "high" in raw:
        return {key: raw[key] for key in ("n", "count", "rate", "low", "high")}
    n, count = int(raw["n"]), int(raw["count"])
    measured = bench_share([True] * count + [False] * (n - count))
    return {key: measured[key] for key in ("n", "count", "rate", "low", "high")}


@dataclass(frozen=True)
class Source:
    """Where a set's labels came from: its kind (shipped, benchmark, own or reviews) and, for a
    review set, how many teachers decided its items."""

    kind: str = OWN
    reviewers: int | None = None


def sources_of(
    report: Mapping[str, Any],
    figures: Mapping[str, Any],
    named: tuple[str, str],
    source: Source,
    hashes: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Per source of the bench (``report["by_source"]``, on the held-out split): its name, kind,
    set hash, counts, false accepts and specificity with their Wilson intervals, and the pairs told
    apart. A bench of one set that names no source: that set (``named``: its name and hash), with
    the record's own ``figures``. A kind is kept as the items say it, except that only the shipped
    set's hash makes a source shipped and only a project's review set is of kind reviews."""
    by_source = report.get("by_source") or {}
    if not by_source:
        name, digest = named
        return [_source_entry(name, source.kind, digest, figures, None, source.reviewers)]
    entries = []
    for name, measured in by_source.items():
        digest = hashes.get(name, "")
        kind = _checked_kind(measured.get("kind") or OWN, digest, source)
        pairs = share(measured["pairs_told_apart"]) if measured.get("pairs_told_apart") else None
        entries.append(_source_entry(name, kind, digest, measured, pairs, source.reviewers))
    return entries


def _checked_kind(claimed: str, digest: str, source: Source) -> str:
    """The kind a source's record keeps: shipped only with the shipped set's hash, reviews only of a
    project's review set; any other claim of those is the user's own."""
    if claimed == SHIPPED:
        return SHIPPED if digest == shipped_hash() else OWN
    if claimed == REVIEWS:
        return REVIEWS if source.kind == REVIEWS else OWN
    return claimed if claimed in (BENCHMARK, OWN) else OWN


def _source_entry(
    name: str,
    kind: str,
    digest: str,
    measured: Mapping[str, Any],
    pairs: dict[str, Any] | None,
    reviewers: int | None,
) -> dict[str, Any]:
    false_accept, specificity = share(measured["false_accept"]), share(measured["specificity"])
    return {
        "name": name,
        "kind": kind,
        "set_hash": digest,
        "reviewers": reviewers if kind == REVIEWS else None,
        "n_flawed": false_accept["n"],
        "n_sound": specificity["n"],
        "false_accept": false_accept,
        "specificity": specificity,
        "pairs_told_apart": pairs,
    }


def record_sources(record: ValidityRecord) -> list[dict[str, Any]]:
    """The record's sources; for a record saved before they were kept, its own set as its one source
    (with no pairs told apart: they were not counted then)."""
    if record.sources:
        return [dict(entry) for entry in record.sources]
    # the bound apart is what a required warrant was always compared with
    upper = {"high": record.false_accept_high} if record.false_accept_high is not None else {}
    headline = {"false_accept": record.false_accept | upper, "specificity": record.specificity}
    name, kind, digest = record.set_name, record.source_kind, record.set_hash
    return [_source_entry(name, kind, digest, headline, None, record.reviewers)]


def source_hashes(items: Sequence[LabelledItem], objects: Sequence[Any]) -> dict[str, str]:
    """Each source's set hash (by the name the items give it; items that name none: ``unnamed``):
    of its items' JSON objects as sent (``objects``, in the items' order)."""
    grouped: dict[str, list[Any]] = {}
    for item, sent in zip(items, objects, strict=True):
        grouped.setdefault(item.source.name if item.source else UNNAMED, []).append(sent)
    return {name: canonical_hash(found) for name, found in grouped.items()}


def warrant_source(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A record's source as a warrant names it: its kind, name, hash's first 12 hex digits, counts
    and both bounds."""
    return {
        "name": entry["name"],
        "kind": entry["kind"],
        "set_hash": (entry.get("set_hash") or "")[:12] or None,
        "reviewers": entry.get("reviewers"),
        "n_flawed": entry["n_flawed"],
        "n_sound": entry["n_sound"],
        "false_accept_upper": entry["false_accept"].get("high"),
        "sound_passed_lower": entry["specificity"].get("low"),
    }
