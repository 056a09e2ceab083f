"""batch item waiting

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 02:20:00.000000

A pending batch item keeps why the last process that was handed it left it alone (its registry
does not know the item's model), so that a batch whose items wait for a model no process has says
so in its progress instead of sitting at "running". Cleared when a process claims the item.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("waiting", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_items", schema=None) as batch_op:
        batch_op.drop_column("waiting")
