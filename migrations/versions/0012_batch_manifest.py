"""batch manifest

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 12:00:00.000000

What a batch was run with (versions, dataset hash, endpoints, prompts, policy), recorded when it is
created; batches made before it have none, and their reports say so.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("manifest", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.drop_column("manifest")
