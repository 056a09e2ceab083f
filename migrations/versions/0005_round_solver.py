"""round solver

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 23:30:00.000000

A round keeps the solver's call: its answer to the question alone (a disagreeing answer is also a
line of the round's verification), or the cause of its failed call.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("solver", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("solver")
