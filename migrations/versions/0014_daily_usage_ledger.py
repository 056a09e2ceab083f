"""daily usage ledger

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 19:45:00.000000

The daily token and cost caps read a per-project, per-day ledger that deleting runs leaves alone
(they summed the stored calls of the runs created that day, so deleting runs gave spend back). The
ledger starts from what is stored: each project's judge and reviser calls, on the UTC day their run
was created, as the caps counted them until now.
"""

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SPENT = (
    "SELECT runs.project_id, runs.created_at, SUM(calls.input_tokens), SUM(calls.output_tokens),"
    " SUM(COALESCE(calls.cost_usd, 0)) FROM {table} AS calls JOIN runs ON runs.id = calls.run_id"
    " GROUP BY runs.id, runs.project_id, runs.created_at"
)


def _day(value: datetime | str) -> date:
    """The UTC day of a stored time (SQLite answers text without an offset, which is UTC)."""
    if isinstance(value, str):
        return date.fromisoformat(value[:10])
    return (value.astimezone(UTC) if value.tzinfo else value).date()


def _backfill(ledger: sa.Table) -> None:
    bind = op.get_bind()
    days: defaultdict[tuple[str, date], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for table in ("judgements", "revisions"):
        for project_id, created_at, inputs, outputs, cost in bind.execute(sa.text(SPENT.format(table=table))):
            spent = days[(project_id, _day(created_at))]
            spent[0] += int(inputs or 0)
            spent[1] += int(outputs or 0)
            spent[2] += float(cost or 0.0)
    rows = [
        {"project_id": p, "day": d, "input_tokens": i, "output_tokens": o, "cost_usd": c}
        for (p, d), (i, o, c) in days.items()
        if i or o or c
    ]
    if rows:
        op.bulk_insert(ledger, rows)


def upgrade() -> None:
    ledger = op.create_table(
        "daily_usage",
        sa.Column("project_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
        sa.PrimaryKeyConstraint("project_id", "day"),
    )
    assert ledger is not None
    _backfill(ledger)


def downgrade() -> None:
    op.drop_table("daily_usage")
