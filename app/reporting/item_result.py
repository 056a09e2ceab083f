"""What a report reads of one finished batch item, as a typed model built from its run's rows.

An item's result is a query, never a stored copy: its rounds are ``rounds`` rows, each judge's
score a ``judgements`` row, its metrics, warrant and call counts the run's ``runs.result``
(``RunFacts``), and its cache hits a column of its own. ``item_results`` reads them for any number of
items in a few set-based queries (a report over a batch of hundreds of items makes four or so).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select as sa_select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.llm.calls import CallFailure
from agents.schemas import JUDGES
from app.models import BatchItem, JudgementRow, RoundRow, Run, RunFacts
from app.problems import content_hash

# Ids per IN list: well under every database's bound on bound parameters.
CHUNK = 500


class ItemRound(BaseModel):
    """One judged version: Q, the decision, each judge's score (None: no verdict), mean confidence."""

    round: int
    quality: float | None
    decision: str
    scores: dict[str, float | None]
    confidence: float
    version: str = Field(default="", description="Content hash of the judged question and solution")
    n_failed: int = 0


class CallCounts(BaseModel):
    """LLM calls answered, HTTP retries behind them, judge verdicts missing, and replies taken from
    the response cache (not counted among the calls: they cost nothing)."""

    llm_calls: int = 0
    retries: int = 0
    abstentions: int = 0
    cache_hits: int = 0


class ItemResult(BaseModel):
    """A finished item: its outcome, metrics and per-round summaries."""

    outcome: str
    stop_reason: str = ""
    metrics: dict[str, Any] | None = Field(description="None for an error run: a failure is never a score")
    rounds: list[ItemRound]
    calls: CallCounts = Field(default_factory=CallCounts)
    failure: CallFailure | None = None
    # An accepted item's warrant (app.validity.records.warrant_of); null for any other outcome
    warrant: dict[str, Any] | None = None
    # The last judged version (what a repair is checked on); empty when no round was judged
    final_question: str = ""
    final_solution: str = ""

    @property
    def figures(self) -> dict[str, Any]:
        """The run metrics; empty for an error run (it has none)."""
        return self.metrics or {}


async def item_results(session: AsyncSession, items: Iterable[BatchItem]) -> dict[int, ItemResult]:
    """The result of every item whose run finished through the loop, by item id: None (absent) for
    an item not run yet, running, or whose run failed outside the loop (its ``error`` and
    ``failure`` columns say why)."""
    linked = {item.id: item for item in items if item.run_id is not None and item.id is not None}
    run_ids = sorted({item.run_id for item in linked.values() if item.run_id is not None})
    runs: dict[str, Run] = {}
    rounds: dict[str, list[Any]] = {}
    verdicts: dict[tuple[str, int], list[Any]] = {}
    for chunk in _chunks(run_ids):
        query = select(Run).where(col(Run.id).in_(chunk), col(Run.result).is_not(None))
        runs.update((run.id, run) for run in (await session.execute(query)).scalars().all())
        finished = [run_id for run_id in chunk if run_id in runs]
        if not finished:
            continue
        round_query = sa_select(
            col(RoundRow.run_id),
            col(RoundRow.round),
            col(RoundRow.question),
            col(RoundRow.solution),
            col(RoundRow.quality),
            col(RoundRow.decision),
            col(RoundRow.n_failed),
        ).where(col(RoundRow.run_id).in_(finished))
        for row in (await session.execute(round_query)).all():
            rounds.setdefault(row.run_id, []).append(row)
        verdict_query = sa_select(
            col(JudgementRow.run_id),
            col(JudgementRow.round),
            col(JudgementRow.judge),
            col(JudgementRow.score),
            col(JudgementRow.confidence),
        ).where(col(JudgementRow.run_id).in_(finished))
        for verdict in (await session.execute(verdict_query)).all():
            verdicts.setdefault((verdict.run_id, verdict.round), []).append(verdict)
    out: dict[int, ItemResult] = {}
    for item_id, item in linked.items():
        run = runs.get(item.run_id or "")
        if run is not None:
            out[item_id] = _result(item, run, rounds.get(run.id, []), verdicts)
    return out


def _chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def _result(
    item: BatchItem, run: Run, rounds: list[Any], verdicts: dict[tuple[str, int], list[Any]]
) -> ItemResult:
    facts = RunFacts.of(run) or RunFacts()
    summaries, abstentions = [], 0
    last = max(rounds, key=lambda r: r.round) if rounds else None
    for row in sorted(rounds, key=lambda r: r.round):
        judged = sorted(verdicts.get((run.id, row.round), []), key=lambda v: _panel_order(v.judge))
        confidences = [v.confidence for v in judged if v.score is not None and v.confidence is not None]
        abstentions += sum(1 for v in judged if v.score is None)
        summaries.append(
            ItemRound(
                round=row.round,
                quality=row.quality,
                decision=row.decision,
                scores={v.judge: v.score for v in judged},
                confidence=sum(confidences) / len(confidences) if confidences else 0.0,
                version=content_hash(row.question, row.solution),
                n_failed=row.n_failed,
            )
        )
    return ItemResult(
        outcome=run.status,
        stop_reason=run.stop_reason or "",
        metrics=facts.metrics,
        rounds=summaries,
        calls=CallCounts(
            llm_calls=facts.llm_calls,
            retries=facts.retries,
            abstentions=abstentions,
            cache_hits=item.cache_hits,
        ),
        failure=CallFailure.model_validate(run.failure) if run.failure else None,
        warrant=facts.warrant,
        final_question=last.question if last is not None else "",
        final_solution=last.solution if last is not None else "",
    )


def _panel_order(judge: str) -> int:
    return JUDGES.index(judge) if judge in JUDGES else len(JUDGES)
