"""Where a validity record's figures come from, checked before they are stored: the set's name, its
hash, and labels that do not contradict themselves.

A record names its set and holds its hash (agents.labelled.canonical): anyone holding the file can
reproduce the hash and see which set a warrant rests on. A name thinkloop gives a set it ships
(``shipped``) is reserved: a record takes it only when its set's hash is that set's, so no other
file can pass itself off as the shipped set, and a copy of the shipped set is named ``shipped``
whatever its file is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from agents.labelled.canonical import file_hash
from agents.labelled.labels import LabelledItem, contradictions

SHIPPED = "shipped"
REVIEWS = "reviews"  # the source kind of a project's review set (app.reviews.labels)
# Each set thinkloop ships: its reserved name → its file under app/samples.
SHIPPED_SETS = {SHIPPED: ("validity", "problems.jsonl")}
# The fewest sound versions a record rests on: with fewer, the specificity's interval is too wide
# to tell a panel that passes sound problems from one that refuses everything (20 of 20 passed:
# lower bound 83.9 %).
MIN_SOUND = 20


class NotRecordable(ValueError):
    """A bench that must not become a validity record (a version errored, nothing flawed judged, too
    few sound versions or too few passed, a set whose labels contradict themselves or whose name
    impersonates a set thinkloop ships)."""


def shipped_path(name: str = SHIPPED) -> Path:
    """The file of the set thinkloop ships as ``name``."""
    return Path(str(resources.files("app").joinpath("samples", *SHIPPED_SETS[name])))


@cache
def shipped_hash(name: str = SHIPPED) -> str:
    """The set hash of the set thinkloop ships as ``name``."""
    return file_hash(shipped_path(name))


def reserved(name: str) -> str | None:
    """The shipped set's name that ``name`` claims (``shipped``, ``Shipped.jsonl``…), or None."""
    stem = name.strip().casefold().split(".")[0]
    return stem if stem in SHIPPED_SETS else None


def set_name(name: str, digest: str) -> str:
    """The name a record gives the set named ``name`` with hash ``digest``: a shipped set's name when
    the hash is that set's, else ``name``; NotRecordable when ``name`` claims a shipped set's name
    with another hash."""
    for shipped in SHIPPED_SETS:
        if digest == shipped_hash(shipped):
            return shipped
    claimed = reserved(name)
    if claimed is not None:
        raise NotRecordable(
            f"the set name {name!r} is reserved for the set shipped with thinkloop ({claimed}, hash "
            f"{shipped_hash(claimed)[:12]}), and this set's hash is {digest[:12]}: rename the file (or "
            "send another set_name); no validity record was saved"
        )
    return name


def check_set(items: Sequence[LabelledItem], name: str, digest: str) -> str:
    """The name a record of ``items`` (hash ``digest``) takes; NotRecordable when their labels
    contradict themselves (a version labelled both flawed and sound) or the name is reserved."""
    contradicted = contradictions(list(items))
    if contradicted:
        more = f" and {len(contradicted) - 3} more" if len(contradicted) > 3 else ""
        shown = ", ".join(contradicted[:3]) + more
        raise NotRecordable(
            f"the labels contradict themselves: {shown} (the same question and solution labelled both "
            "flawed and sound); no validity record was saved"
        )
    return set_name(name, digest)


def sound_versions(items: Sequence[LabelledItem]) -> int:
    """The sound versions a bench over ``items`` judges: each control and each corrected version."""
    return sum(item.kind == "control" or item.corrected is not None for item in items)


def preflight(items: Sequence[LabelledItem], chosen: Sequence[LabelledItem], name: str, digest: str) -> str:
    """Before a bench that is to be saved: the name its record takes, or NotRecordable when no record
    could be (``check_set``, or fewer than MIN_SOUND sound versions in the held-out ``chosen``
    items), so no call is spent on a bench that cannot be saved."""
    resolved = check_set(items, name, digest)
    held = [item for item in chosen if item.split == "heldout"]
    if held and sound_versions(held) < MIN_SOUND:
        raise NotRecordable(
            f"the held-out split holds {sound_versions(held)} sound version(s) (controls and corrected "
            f"versions); a record needs at least {MIN_SOUND}, or a panel that refuses everything would "
            "look perfect: no validity record was saved"
        )
    return resolved
