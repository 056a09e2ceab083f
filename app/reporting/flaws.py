"""The report's "by flaw type" section: outcomes and pass rate per model, arm and labelled flaw.

A problem's flaw is the ``flaw`` field of its dataset metadata (``{"metadata": {"flaw": ...}}`` in
JSONL, as in the bundled samples and ``thinkloop datasets synth``), taken as written. Problems
without one are counted under ``unlabelled``; with no label anywhere the section is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.reporting.data import Entry, by_problem, outcome_counts, pass_summary

UNLABELLED = "unlabelled"


def by_flaw(
    groups: Mapping[tuple[str, str], Sequence[Entry]], flaws: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Per model, arm and flaw: items by outcome, and the pass rate among scored items over problems
    with its Wilson 95% interval (as the main rows count them); [] when no problem has a label."""
    if not flaws:
        return []
    rows = []
    for (model, arm), entries in groups.items():
        labelled: dict[str, list[Entry]] = {}
        for entry in entries:
            labelled.setdefault(flaws.get(entry.item.problem_id, UNLABELLED), []).append(entry)
        for flaw in sorted(labelled, key=lambda name: (name == UNLABELLED, name)):
            mine = labelled[flaw]
            rows.append(
                {
                    "model": model,
                    "arm": arm,
                    "flaw": flaw,
                    "items": outcome_counts(mine),
                    **pass_summary(by_problem(mine)),
                }
            )
    return rows
