"""one record

Revision ID: 0020
Revises: 0018
Create Date: 2026-11-27 06:00:00.000000

A round's verdicts are stored once: as ``judgements`` rows (and their transcript events). Until
now ``runs.result`` also held the whole run (every round with every verdict and raw output, every
revision) and ``batch_items.result`` a summary of it. After this migration:

- ``runs.result`` holds only what no row holds (``app.models.RunFacts``): the run's metrics, its
  warrant, and its LLM calls and retries. Any round, verdict or revision the old JSON held that has
  no row yet is stored as rows first.
- ``batch_items.result`` is gone: an item's result is a query over its run's rows
  (``app/reporting/item_result.py``). What only the item knew, its cache hits, moves to
  ``batch_items.cache_hits``. (A retried item whose new run failed outside the loop kept its
  earlier run's summary; it now shows the run it links, which has no result, as a fresh one does.)
- An item finished before migration 0007 (a result, no run) has no rows to query: the migration
  stops with a message saying how to export it and delete its batch first, rather than drop it.

Downgrade rebuilds ``batch_items.result`` from the rows; ``runs.result`` stays in its short form
(the code before read only its ``metrics`` and ``warrant``, which it keeps).
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JUDGES = ("remember", "understand", "apply", "analyze", "evaluate", "create", "holistic")
FIGURES = ("quality", "pass_rate", "agreement", "confidence", "n_voting", "n_passing", "n_failed", "decision")

runs = sa.table(
    "runs",
    sa.column("id", sa.String),
    sa.column("problem_id", sa.String),
    sa.column("status", sa.String),
    sa.column("stop_reason", sa.Text),
    sa.column("failure", sa.JSON),
    sa.column("result", sa.JSON),
    sa.column("finished_at", sa.DateTime),
    sa.column("created_at", sa.DateTime),
)
items = sa.table(
    "batch_items",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.String),
    sa.column("result", sa.JSON),
    sa.column("cache_hits", sa.Integer),
)
rounds = sa.table(
    "rounds",
    sa.column("run_id", sa.String),
    sa.column("round", sa.Integer),
    sa.column("question", sa.Text),
    sa.column("solution", sa.Text),
    sa.column("quality", sa.Float),
    sa.column("pass_rate", sa.Float),
    sa.column("agreement", sa.Float),
    sa.column("confidence", sa.Float),
    sa.column("n_voting", sa.Integer),
    sa.column("n_passing", sa.Integer),
    sa.column("n_failed", sa.Integer),
    sa.column("verification", sa.JSON),
    sa.column("solver", sa.JSON),
    sa.column("decision", sa.String),
    sa.column("created_at", sa.DateTime),
)
_CALL = (
    sa.column("model", sa.String),
    sa.column("prompt_version", sa.String),
    sa.column("input_tokens", sa.Integer),
    sa.column("output_tokens", sa.Integer),
    sa.column("latency_s", sa.Float),
    sa.column("cost_usd", sa.Float),
    sa.column("raw_outputs", sa.JSON),
)
judgements = sa.table(
    "judgements",
    sa.column("run_id", sa.String),
    sa.column("round", sa.Integer),
    sa.column("judge", sa.String),
    sa.column("score", sa.Integer),
    sa.column("confidence", sa.Integer),
    sa.column("rationale", sa.Text),
    sa.column("details", sa.JSON),
    sa.column("abstain_reason", sa.Text),
    sa.column("failure", sa.JSON),
    sa.column("reasoning", sa.Text),
    sa.column("reported_model", sa.Text),
    *_CALL,
)
revisions = sa.table(
    "revisions",
    sa.column("run_id", sa.String),
    sa.column("round", sa.Integer),
    sa.column("question", sa.Text),
    sa.column("solution", sa.Text),
    sa.column("thinking", sa.Text),
    sa.column("error", sa.Text),
    sa.column("failure", sa.JSON),
    *(sa.column(c.name, c.type) for c in _CALL),
)


def upgrade() -> None:
    bind = op.get_bind()
    orphans = bind.execute(
        sa.select(sa.func.count()).where(items.c.result.is_not(None), items.c.run_id.is_(None))
    ).scalar_one()
    if orphans:  # finished before 0007 made items runs: no row holds their rounds, and none can
        raise RuntimeError(
            f"{orphans} batch item(s) finished before migration 0007 have a stored result but no run, "
            "so their rounds cannot become rows. Export them first (`thinkloop batch items BATCH_ID "
            "--format jsonl` with the previous release), then delete their batches, and migrate again."
        )
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cache_hits", sa.Integer(), nullable=False, server_default="0"))
    item_calls: dict[str, dict[str, Any]] = {}
    for item_id, run_id, result in bind.execute(
        sa.select(items.c.id, items.c.run_id, items.c.result).where(items.c.result.is_not(None))
    ).all():
        calls = (result or {}).get("calls") or {}
        bind.execute(
            items.update().where(items.c.id == item_id).values(cache_hits=int(calls.get("cache_hits") or 0))
        )
        if run_id is not None:
            item_calls[run_id] = calls
    for run_id, result, finished_at, created_at in bind.execute(
        sa.select(runs.c.id, runs.c.result, runs.c.finished_at, runs.c.created_at).where(
            runs.c.result.is_not(None)
        )
    ).all():
        result = result or {}
        _store_missing_rows(bind, run_id, result, finished_at or created_at or datetime.now(UTC))
        usage = result.get("usage") or {}
        calls = item_calls.get(run_id) or {}
        facts = {
            "metrics": result.get("metrics"),
            "warrant": result.get("warrant"),
            "llm_calls": int(usage.get("calls", calls.get("llm_calls", 0)) or 0),
            "retries": int(usage.get("retries", calls.get("retries", 0)) or 0),
        }
        bind.execute(runs.update().where(runs.c.id == run_id).values(result=facts))
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_column("result")


def _store_missing_rows(bind: sa.Connection, run_id: str, result: dict[str, Any], at: datetime) -> None:
    """The rounds (with their verdicts) and revisions of an old ``runs.result`` that have no row."""
    stored = {r for (r,) in bind.execute(sa.select(rounds.c.round).where(rounds.c.run_id == run_id))}
    judged = {
        (r, j)
        for r, j in bind.execute(
            sa.select(judgements.c.round, judgements.c.judge).where(judgements.c.run_id == run_id)
        )
    }
    for record in result.get("rounds") or []:
        number = int(record["round"])
        if number not in stored:
            problem = record.get("problem") or {}
            bind.execute(
                rounds.insert().values(
                    run_id=run_id,
                    round=number,
                    question=problem.get("question", ""),
                    solution=problem.get("solution", ""),
                    verification=record.get("verification") or None,
                    solver=record.get("solver"),
                    created_at=at,
                    **{name: record.get(name) for name in FIGURES},
                )
            )
        for outcome in record.get("outcomes") or []:
            if (number, outcome["judge"]) not in judged:
                bind.execute(judgements.insert().values(run_id=run_id, **_judgement(number, outcome)))
    revised = {r for (r,) in bind.execute(sa.select(revisions.c.round).where(revisions.c.run_id == run_id))}
    for outcome in result.get("revisions") or []:
        if int(outcome["round"]) in revised:
            continue
        problem = outcome.get("problem") or {}
        bind.execute(
            revisions.insert().values(
                run_id=run_id,
                round=int(outcome["round"]),
                question=problem.get("question"),
                solution=problem.get("solution"),
                thinking=outcome.get("thinking") or "",
                error=outcome.get("error"),
                failure=outcome.get("failure"),
                **_call(outcome),
            )
        )


def _judgement(number: int, outcome: dict[str, Any]) -> dict[str, Any]:
    """A judgement row of an old result's judge outcome (as ``app.runs.repository`` stores one)."""
    verdict = outcome.get("verdict")
    details: dict[str, Any] | None = None
    if verdict and "five_keys" in verdict:
        details = {"five_keys": verdict["five_keys"], "suggestions": verdict.get("suggestions", [])}
    if verdict and verdict.get("own_answer"):
        details = (details or {}) | {"own_answer": verdict["own_answer"]}
    return {
        "round": number,
        "judge": outcome["judge"],
        "score": verdict.get("score") if verdict else None,
        "confidence": verdict.get("confidence") if verdict else None,
        "rationale": verdict.get("rationale") if verdict else None,
        "details": details,
        "abstain_reason": outcome.get("abstain_reason"),
        "failure": outcome.get("failure"),
        "reasoning": outcome.get("reasoning") or "",
        "reported_model": outcome.get("reported_model"),
        **_call(outcome),
    }


def _call(outcome: dict[str, Any]) -> dict[str, Any]:
    usage = outcome.get("usage") or {}
    return {
        "model": outcome.get("model", ""),
        "prompt_version": outcome.get("prompt_version", ""),
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "latency_s": usage.get("latency_s", 0.0),
        "cost_usd": usage.get("cost_usd"),
        "raw_outputs": outcome.get("raw_outputs") or [],
    }


def downgrade() -> None:
    """``batch_items.result`` again, rebuilt from its run's rows (the summary the code before wrote)."""
    import hashlib
    import json

    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("result", sa.JSON(), nullable=True))
    bind = op.get_bind()
    problems = sa.table("problems", sa.column("id", sa.String), sa.column("question"), sa.column("solution"))

    def version(question: str, solution: str) -> str:
        text = json.dumps([" ".join(question.split()), " ".join(solution.split())])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    query = (
        sa.select(
            items.c.id.label("item_id"),
            items.c.cache_hits,
            runs.c.id.label("run_id"),
            runs.c.problem_id,
            runs.c.status,
            runs.c.stop_reason,
            runs.c.failure,
            runs.c.result,
        )
        .join(runs, runs.c.id == items.c.run_id)
        .where(runs.c.result.is_not(None))
    )
    for row in bind.execute(query).mappings().all():
        facts = row["result"] or {}
        summaries, abstentions, final = [], 0, None
        for r in bind.execute(
            sa.select(rounds).where(rounds.c.run_id == row["run_id"]).order_by(rounds.c.round)
        ).mappings():
            votes = bind.execute(
                sa.select(judgements.c.judge, judgements.c.score, judgements.c.confidence).where(
                    judgements.c.run_id == row["run_id"], judgements.c.round == r["round"]
                )
            ).all()
            votes = sorted(votes, key=lambda v: JUDGES.index(v[0]) if v[0] in JUDGES else len(JUDGES))
            confidences = [c for _, s, c in votes if s is not None and c is not None]
            abstentions += sum(1 for _, s, _ in votes if s is None)
            summaries.append(
                {
                    "round": r["round"],
                    "quality": r["quality"],
                    "decision": r["decision"],
                    "scores": {j: s for j, s, _ in votes},
                    "confidence": sum(confidences) / len(confidences) if confidences else 0.0,
                    "version": version(r["question"], r["solution"]),
                    "n_failed": r["n_failed"],
                }
            )
            final = {"question": r["question"], "solution": r["solution"]}
        if final is None:
            problem = bind.execute(
                sa.select(problems.c.question, problems.c.solution).where(problems.c.id == row["problem_id"])
            ).one()
            final = {"question": problem[0], "solution": problem[1]}
        summary = {
            "outcome": row["status"],
            "stop_reason": row["stop_reason"] or "",
            "metrics": facts.get("metrics"),
            "rounds": summaries,
            "final": final,
            "calls": {
                "llm_calls": facts.get("llm_calls", 0),
                "retries": facts.get("retries", 0),
                "abstentions": abstentions,
                "cache_hits": row["cache_hits"],
            },
            "failure": row["failure"],
            "warrant": facts.get("warrant"),
        }
        bind.execute(items.update().where(items.c.id == row["item_id"]).values(result=summary))
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_column("cache_hits")
