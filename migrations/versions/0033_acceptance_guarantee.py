"""Acceptance with a guarantee: a target on projects and runs, a calibration on validity records.

Revision ID: 0033
Revises: 0032

``projects.guarantee_alpha`` / ``guarantee_delta`` and ``runs.guarantee_alpha`` / ``guarantee_delta``:
false accepts ≤ α with confidence 1 − δ (None: no target; a run's own target over its project's).
``validity_records.calibration``: the threshold `judges calibrate` chose on the record's labelled set
and what it guarantees and keeps (``graphs.guarantee.Calibration.as_dict``). ``rounds.escalations``:
each step of a round's escalation (``round.escalated`` events; None: not escalated).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("projects", "runs"):
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column("guarantee_alpha", sa.Float(), nullable=True))
            batch_op.add_column(sa.Column("guarantee_delta", sa.Float(), nullable=True))
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.add_column(sa.Column("calibration", sa.JSON(), nullable=True))
    with op.batch_alter_table("rounds") as batch_op:
        batch_op.add_column(sa.Column("escalations", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as batch_op:
        batch_op.drop_column("escalations")
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.drop_column("calibration")
    for table in ("runs", "projects"):
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("guarantee_delta")
            batch_op.drop_column("guarantee_alpha")
