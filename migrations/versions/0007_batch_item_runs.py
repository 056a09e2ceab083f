"""batch item runs

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 01:00:00.000000

A finished batch item is recorded as a run (rounds, verdicts, revisions, transcript), like a run
submitted over the API: the item points at its run, the run at its batch and arm.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "arm", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False, server_default="loop"
            )
        )
        batch_op.create_index("ix_runs_batch_id", ["batch_id"], unique=False)
        batch_op.create_foreign_key("fk_runs_batch_id_batches", "batches", ["batch_id"], ["id"])
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_foreign_key("fk_batch_items_run_id_runs", "runs", ["run_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_constraint("fk_batch_items_run_id_runs", type_="foreignkey")
        batch_op.drop_column("run_id")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint("fk_runs_batch_id_batches", type_="foreignkey")
        batch_op.drop_index("ix_runs_batch_id")
        batch_op.drop_column("arm")
        batch_op.drop_column("batch_id")
