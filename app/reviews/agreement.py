"""How the judges agree with the teachers: for each Bloom judge and the holistic judge, its
pass/fail on the version a teacher decided against the teacher's decision (Cohen's κ with a 95 %
bootstrap interval and n), and the panel's error rates as the teachers see them.

Every figure is of the project's own problems and teachers, and every one says what it is: items
enter the queue for a reason (a split, an audit draw, a request), so the panel's figures here are
of those items, not of all traffic. The audit sample is the exception that makes the false-accept
rate measurable in production: accepted runs drawn at random, of which the teachers judged k
flawed.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.schemas import JUDGES
from app.models import Batch, BatchItem, JudgementRow, Project, ReviewDecision, ReviewItem, Run, RunStatus
from app.reviews.decisions import latest
from graphs.analysis.agreement import cohen_kappa
from graphs.analysis.validity_metrics import share
from graphs.scoring import get_policy

RESAMPLES = 2000  # bootstrap resamples of a κ's interval (seeded: the same figures every time)
ACCEPTING = frozenset({RunStatus.ACCEPTED, RunStatus.SCREENED})


def kappa_interval(pairs: Sequence[tuple[bool, bool]], resamples: int = RESAMPLES) -> dict[str, Any]:
    """Cohen's κ of ``pairs`` (judge passed, teacher said sound), its n and a percentile bootstrap
    95 % interval over items (None where κ is undefined: one side constant)."""
    kappa = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]) if pairs else None
    low = high = None
    if kappa is not None:
        rng = random.Random(len(pairs))  # seeded: a report is reproducible
        draws = []
        for _ in range(resamples):
            sample = [pairs[rng.randrange(len(pairs))] for _ in pairs]
            value = cohen_kappa([a for a, _ in sample], [b for _, b in sample])
            if value is not None:
                draws.append(value)
        if draws:
            draws.sort()
            low, high = draws[int(0.025 * (len(draws) - 1))], draws[int(0.975 * (len(draws) - 1))]
    return {"n": len(pairs), "kappa": kappa, "low": low, "high": high}


async def _decided(
    session: AsyncSession, project_id: str, run_ids: Collection[str] | None = None
) -> list[tuple[ReviewItem, ReviewDecision, Run]]:
    """The project's decided items (of ``run_ids``, when given), each with its latest decision and
    its run (three queries)."""
    query = select(ReviewItem).where(
        col(ReviewItem.project_id) == project_id, col(ReviewItem.decision).is_not(None)
    )
    if run_ids is not None:
        query = query.where(col(ReviewItem.run_id).in_(list(run_ids)))
    items = list((await session.execute(query)).scalars().all())
    decisions = await latest(session, [i.id for i in items])
    found = await session.execute(select(Run).where(col(Run.id).in_({i.run_id for i in items})))
    runs = {run.id: run for run in found.scalars().all()}
    return [(i, decisions[i.id], runs[i.run_id]) for i in items if i.id in decisions and i.run_id in runs]


async def _votes(
    session: AsyncSession, decided: Sequence[tuple[ReviewItem, ReviewDecision, Run]]
) -> dict[str, dict[str, bool]]:
    """Item id → judge → whether it passed the version decided (abstentions left out), from one
    query of the decided runs' verdicts."""
    if not decided:
        return {}
    rows = await session.execute(
        select(JudgementRow).where(col(JudgementRow.run_id).in_({item.run_id for item, _, _ in decided}))
    )
    by_round: dict[tuple[str, int], list[JudgementRow]] = {}
    for row in rows.scalars().all():
        by_round.setdefault((row.run_id, row.round), []).append(row)
    out = {}
    for item, _, run in decided:
        policy = get_policy(run.policy)
        verdicts = by_round.get((item.run_id, item.round), [])
        out[item.id] = {
            v.judge: v.score >= policy.threshold(v.judge) for v in verdicts if v.score is not None
        }
    return out


async def teacher_agreement(
    session: AsyncSession,
    project: Project,
    judge_model: str | None = None,
    run_ids: Collection[str] | None = None,
) -> dict[str, Any]:
    """The judges against the project's teachers (of runs judged by ``judge_model``, or all; of
    ``run_ids``, when given: a batch's)."""
    decided = [
        (item, decision, run)
        for item, decision, run in await _decided(session, project.id, run_ids)
        if judge_model is None or run.judge_model == judge_model
    ]
    pairs: dict[str, list[tuple[bool, bool]]] = {judge: [] for judge in JUDGES}
    votes = await _votes(session, decided)
    for item, decision, _ in decided:
        for judge, passed in votes[item.id].items():
            pairs.setdefault(judge, []).append((passed, decision.decision == "sound"))
    flawed = [item.run_status in ACCEPTING for item, d, _ in decided if d.decision == "flawed"]
    sound = [item.run_status in ACCEPTING for item, d, _ in decided if d.decision == "sound"]
    return {
        "project": project.name,
        "judge_model": judge_model,
        "decided": len(decided),
        "reviewers": len({d.reviewer for _, d, _ in decided}),
        "judges": {judge: kappa_interval(found) for judge, found in pairs.items()},
        "false_accept": _public(share(flawed)),
        "specificity": _public(share(sound)),
        "audit": _audit(decided),
    }


def _audit(decided: Sequence[tuple[ReviewItem, ReviewDecision, Run]]) -> dict[str, Any]:
    """Of the runs drawn for audit, by outcome: those the teachers judged flawed (k of n)."""
    out = {}
    for outcome in (RunStatus.ACCEPTED, RunStatus.SCREENED):
        hits = [
            d.decision == "flawed" for i, d, _ in decided if i.reason == "audit" and i.run_status == outcome
        ]
        found = _public(share(hits))
        found["text"] = audit_line(outcome, found)
        out[str(outcome)] = found
    return out


def audit_line(outcome: str, found: dict[str, Any]) -> str:
    """ "accepted runs that teachers judged flawed: k of n (95 % interval)"."""
    if not found["n"]:
        return f"{outcome} runs that teachers judged flawed: none audited yet"
    return (
        f"{outcome} runs that teachers judged flawed: {found['count']} of {found['n']} "
        f"({found['low']:.1%}–{found['high']:.1%}, 95 %)"
    )


def _public(found: dict[str, Any]) -> dict[str, Any]:
    return {key: found[key] for key in ("n", "count", "rate", "low", "high")}


async def batch_teachers(
    session: AsyncSession, batch: Batch, items: Sequence[BatchItem]
) -> dict[str, Any] | None:
    """How the judges agree with the teachers on a batch's runs (asked for review one by one: a
    batch's runs never enter the queue by themselves); None when none was decided."""
    project = await session.get(Project, batch.project_id)
    run_ids = [item.run_id for item in items if item.run_id is not None]
    if project is None or not run_ids:
        return None
    found = await teacher_agreement(session, project, run_ids=run_ids)
    return found if found["decided"] else None
