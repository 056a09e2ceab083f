"""The review set: a project's teachers' decisions as a labelled set (agents.labelled.labels).

Each decided item gives the version decided, labelled as the teacher decided (``flawed`` with its
flaw types and evidence, else a ``control``), and a corrected version the teacher gave, labelled
sound: a flawed item's as its ``corrected`` version, a sound item's (an edit the teacher approved)
as a second control. Every item is held out: no check of the panel was tuned on a teacher's
decision. The set holds one project's decisions only, each item's latest, in the order the items
entered the queue; its hash is the canonical hash of its JSONL (``thinkloop reviews export`` writes
that file, and ``thinkloop datasets hash`` of it prints the same hash), so a decision made, replaced
or erased with its run changes the hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.labelled.canonical import canonical_hash, canonical_jsonl
from agents.labelled.labels import TAXONOMY, Flaw, LabelledItem
from app.models import Project, ReviewDecision, ReviewItem
from app.reviews.decisions import corrected_of, latest


def set_name(project: Project) -> str:
    """The name a project's review set goes by: ``reviews of <project>``."""
    return f"reviews of {project.name}"


@dataclass(frozen=True)
class ReviewSet:
    """A project's review set: its name, items (labelled, held out), hash and teachers."""

    name: str
    items: list[LabelledItem]
    reviewers: list[str]

    @property
    def objects(self) -> list[dict[str, Any]]:
        """The items as JSON objects (their canonical JSONL is the set's file)."""
        return [item.model_dump(mode="json", exclude_none=True) for item in self.items]

    @property
    def hash(self) -> str:
        """The set hash (agents.labelled.canonical) of its items."""
        return canonical_hash(self.objects)

    def jsonl(self) -> bytes:
        """The set as a labelled JSONL file, in its canonical form."""
        return canonical_jsonl(self.objects)

    def counts(self) -> dict[str, int]:
        """Versions by label: flawed, sound (controls and corrected versions), and teachers."""
        flawed = sum(1 for item in self.items if item.kind == "flawed")
        corrected = sum(1 for item in self.items if item.corrected is not None)
        return {
            "flawed": flawed,
            "sound": len(self.items) - flawed + corrected,
            "reviewers": len(self.reviewers),
        }


def labelled(item: ReviewItem, decision: ReviewDecision) -> list[LabelledItem]:
    """The labelled versions one decision gives."""
    corrected = corrected_of(decision)
    if decision.decision == "flawed":
        flaws = [
            Flaw(type=f["type"], levels=list(TAXONOMY[f["type"]][1]), evidence=f["evidence"])
            for f in decision.flaws
        ]
        return [_item(item.id, "flawed", item.question, item.solution, flaws=flaws, corrected=corrected)]
    out = [_item(item.id, "control", item.question, item.solution)]
    if corrected is not None:
        out.append(_item(f"{item.id}-edited", "control", corrected.question, corrected.solution))
    return out


def _item(item_id: str, kind: str, question: str, solution: str, **labels: Any) -> LabelledItem:
    return LabelledItem.model_validate(
        {
            "id": item_id,
            "split": "heldout",
            "kind": kind,
            "question": question,
            "solution": solution,
            **labels,
        },
        strict=False,
    )


async def review_set(session: AsyncSession, project: Project) -> ReviewSet:
    """The project's review set, as its decisions stand now."""
    query = (
        select(ReviewItem)
        .where(col(ReviewItem.project_id) == project.id, col(ReviewItem.decision).is_not(None))
        .order_by(col(ReviewItem.created_at), col(ReviewItem.id))
    )
    items = list((await session.execute(query)).scalars().all())
    decisions = await latest(session, [item.id for item in items])
    out: list[LabelledItem] = []
    for item in items:
        if item.id in decisions:
            out += labelled(item, decisions[item.id])
    reviewers = sorted({decisions[i.id].reviewer for i in items if i.id in decisions})
    return ReviewSet(set_name(project), out, reviewers)
