"""outcomes and failures

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 21:30:00.000000

Every run and batch item ends in exactly one outcome (accepted, exhausted, needs_review, error,
cancelled), and a failure keeps its cause (model, endpoint host, HTTP status or exception, message):
runs that used to end 'failed' are 'error'; batch items get an ``outcome``, derived from their
status and stored result. A judgement keeps a reasoning model's own reasoning; a round, the
verifier's findings on its solution.
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OUTCOMES = {"accepted", "exhausted", "needs_review", "error", "cancelled"}


def upgrade() -> None:
    for table in ("runs", "judgements", "revisions", "batch_items"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("failure", sa.JSON(), nullable=True))
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("n_failed", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("verification", sa.JSON(), nullable=True))
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reasoning", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True))
    op.execute("UPDATE runs SET status = 'error' WHERE status = 'failed'")
    op.execute("UPDATE batch_items SET outcome = 'error' WHERE status = 'failed'")
    op.execute("UPDATE batch_items SET outcome = 'cancelled' WHERE status = 'cancelled'")
    _backfill_done_items()


def _backfill_done_items() -> None:
    """A finished item's outcome is the one its stored result names."""
    connection = op.get_bind()
    items = sa.table("batch_items", sa.column("id"), sa.column("result"), sa.column("outcome"))
    rows = connection.execute(sa.text("SELECT id, result FROM batch_items WHERE status = 'done'")).all()
    for item_id, result in rows:
        data = json.loads(result) if isinstance(result, str) else (result or {})
        outcome = data.get("outcome")
        if outcome in _OUTCOMES:
            connection.execute(items.update().where(items.c.id == item_id).values(outcome=outcome))


def downgrade() -> None:
    op.execute("UPDATE runs SET status = 'failed' WHERE status = 'error'")
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_column("outcome")
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("verification")
        batch_op.drop_column("n_failed")
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_column("reasoning")
    for table in ("runs", "judgements", "revisions", "batch_items"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("failure")
