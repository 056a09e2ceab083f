"""one lease

Revision ID: 0022_one_lease
Revises: 0021
Create Date: 2026-11-27 05:30:00.000000

A batch item is executed under its run's lease (``runs.lease_owner``, ``runs.lease_until``), so
``batch_items.claimed_by`` and ``batch_items.lease_until`` go; ``claimed_at`` stays (when the item
was last claimed: reports show it as its start). An item's status is its run's, in the runs' words:
pending items are queued, done ones take their outcome as their status, failed ones are error; the
``outcome`` column, which said the same twice, goes (the API derives it from the status).

Nothing is lost: a running item's claim is carried to its run where the run held none, and a done
item with no recorded outcome takes its run's (or, with neither, needs_review: it ended without a
verdict anyone can read). Downgrade restores the columns from the statuses and the runs' leases.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0022_one_lease"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VERDICTS = "('accepted', 'screened', 'exhausted', 'needs_review')"
_ENDED = "('accepted', 'screened', 'exhausted', 'needs_review', 'error', 'cancelled')"
_UNFINISHED = "('queued', 'running')"


def upgrade() -> None:
    # A running item's claim becomes its run's lease where the run holds none (both were taken and
    # renewed together; an unfinished run without an owner would otherwise be free while its item runs).
    claimed = (
        "FROM batch_items WHERE batch_items.run_id = runs.id AND batch_items.status = 'running'"
        " AND batch_items.claimed_by IS NOT NULL"
    )
    op.execute(
        f"UPDATE runs SET lease_owner = (SELECT MAX(batch_items.claimed_by) {claimed}),"
        f" lease_until = (SELECT MAX(batch_items.lease_until) {claimed})"
        f" WHERE runs.lease_owner IS NULL AND runs.status IN {_UNFINISHED} AND EXISTS (SELECT 1 {claimed})"
    )
    op.execute("UPDATE batch_items SET status = 'queued' WHERE status = 'pending'")
    op.execute("UPDATE batch_items SET status = 'error' WHERE status = 'failed'")
    op.execute(f"UPDATE batch_items SET status = outcome WHERE status = 'done' AND outcome IN {_VERDICTS}")
    op.execute(
        "UPDATE batch_items SET status = (SELECT runs.status FROM runs WHERE runs.id = batch_items.run_id)"
        " WHERE status = 'done' AND EXISTS (SELECT 1 FROM runs WHERE runs.id = batch_items.run_id"
        f" AND runs.status IN {_VERDICTS})"
    )
    op.execute("UPDATE batch_items SET status = 'needs_review' WHERE status = 'done'")
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_column("outcome")
        batch_op.drop_column("lease_until")
        batch_op.drop_column("claimed_by")


def downgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True)
        )
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True))
    op.execute(f"UPDATE batch_items SET outcome = status WHERE status IN {_ENDED}")
    op.execute(f"UPDATE batch_items SET status = 'done' WHERE status IN {_VERDICTS}")
    op.execute("UPDATE batch_items SET status = 'failed' WHERE status = 'error'")
    op.execute("UPDATE batch_items SET status = 'pending' WHERE status = 'queued'")
    held = "FROM runs WHERE runs.id = batch_items.run_id"
    op.execute(
        f"UPDATE batch_items SET claimed_by = (SELECT runs.lease_owner {held}),"
        f" lease_until = (SELECT runs.lease_until {held}) WHERE status = 'running'"
    )
