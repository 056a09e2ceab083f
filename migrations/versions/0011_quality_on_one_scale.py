"""quality on one scale

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 09:30:00.000000

Quality is on Q's 0-1 scale everywhere. A run's metrics (AvgQualityScore final and over all steps,
and the change of Q in the last round) were on 0-100 while Q in its rounds, events and webhooks was
on 0-1: what is stored moves to 0-1 — a run's result, a batch item's result, a transcript's
run.finished event and a webhook not yet sent.
"""

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = ("avg_quality_final", "avg_quality_all_steps", "quality_change")
# (table, key column, JSON column, a condition that picks the rows that may hold metrics)
WHERE = (
    ("runs", "id", "result", "result IS NOT NULL"),
    ("batch_items", "id", "result", "result IS NOT NULL"),
    ("transcript_events", "id", "data", "type = 'run.finished'"),
    ("webhook_deliveries", "id", "payload", "status = 'pending'"),
)


def _rescale(value: Any, factor: float) -> tuple[Any, bool]:
    """A copy of the JSON value with the metric keys (top level and under "metrics") times factor."""
    if not isinstance(value, dict):
        return value, False
    out = dict(value)
    if isinstance(out.get("metrics"), dict):
        out["metrics"] = dict(out["metrics"])
    changed = False
    for holder in (out, out.get("metrics")):
        if not isinstance(holder, dict):
            continue
        for key in KEYS:
            number = holder.get(key)
            if isinstance(number, int | float) and not isinstance(number, bool):
                holder[key] = round(number * factor, 4 if factor < 1 else 2)
                changed = True
    return out, changed


def _move(factor: float) -> None:
    bind = op.get_bind()
    for table, key, column, condition in WHERE:
        rows = bind.execute(sa.text(f"SELECT {key}, {column} FROM {table} WHERE {condition}")).all()
        target = sa.table(table, sa.column(key), sa.column(column, sa.JSON))
        for row_id, raw in rows:
            moved, changed = _rescale(json.loads(raw) if isinstance(raw, str) else raw, factor)
            if changed:
                bind.execute(target.update().where(target.c[key] == row_id).values({column: moved}))


def upgrade() -> None:
    _move(0.01)


def downgrade() -> None:
    _move(100.0)
