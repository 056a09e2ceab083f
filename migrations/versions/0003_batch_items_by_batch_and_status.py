"""batch items indexed by (batch, status)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 09:10:00.000000

Whether a batch has items left is asked after every item; with an index on the batch alone that
question scanned the batch's items, so a batch's total work grew with the square of its size.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.create_index("ix_batch_items_batch_id_status", ["batch_id", "status"], unique=False)
        # the unique (batch_id, problem_id, ...) constraint and the new index both lead with batch_id
        batch_op.drop_index("ix_batch_items_batch_id")


def downgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.create_index("ix_batch_items_batch_id", ["batch_id"], unique=False)
        batch_op.drop_index("ix_batch_items_batch_id_status")
