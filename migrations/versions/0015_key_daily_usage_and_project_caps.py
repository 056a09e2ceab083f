"""key daily usage and project caps

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24 20:15:00.000000

Daily caps per API key read a per-key, per-day ledger (``key_daily_usage``), charged with the
project's; a project may carry its own daily caps (null: the global setting); a batch records the
key that created it, so that its items' runs are charged to that key. Batches made before take
their key from the audit log's "created" entry; the key ledger starts from the stored calls of runs
with a key (a batch's through its batch), on their run's creation day, as 0014 did per project.
"""

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_KEYS = (
    "UPDATE batches SET api_key_id = (SELECT MIN(audit_events.key_id) FROM audit_events"
    " WHERE audit_events.target_type = 'batch' AND audit_events.action = 'created'"
    " AND audit_events.target_id = batches.id)"
)
SPENT = (
    "SELECT COALESCE(runs.api_key_id, batches.api_key_id), runs.created_at, SUM(calls.input_tokens),"
    " SUM(calls.output_tokens), SUM(COALESCE(calls.cost_usd, 0)) FROM {table} AS calls"
    " JOIN runs ON runs.id = calls.run_id LEFT JOIN batches ON batches.id = runs.batch_id"
    " WHERE COALESCE(runs.api_key_id, batches.api_key_id) IS NOT NULL"
    " GROUP BY runs.id, runs.api_key_id, batches.api_key_id, runs.created_at"
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
        for key_id, created_at, inputs, outputs, cost in bind.execute(sa.text(SPENT.format(table=table))):
            spent = days[(key_id, _day(created_at))]
            spent[0] += int(inputs or 0)
            spent[1] += int(outputs or 0)
            spent[2] += float(cost or 0.0)
    rows = [
        {"api_key_id": k, "day": d, "input_tokens": i, "output_tokens": o, "cost_usd": c}
        for (k, d), (i, o, c) in days.items()
        if i or o or c
    ]
    if rows:
        op.bulk_insert(ledger, rows)


def upgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("daily_tokens", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("daily_cost_usd", sa.Float(), nullable=True))
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("api_key_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
    op.execute(BATCH_KEYS)
    ledger = op.create_table(
        "key_daily_usage",
        sa.Column("api_key_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("api_key_id", "day"),
    )
    assert ledger is not None
    _backfill(ledger)


def downgrade() -> None:
    op.drop_table("key_daily_usage")
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.drop_column("api_key_id")
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("daily_cost_usd")
        batch_op.drop_column("daily_tokens")
