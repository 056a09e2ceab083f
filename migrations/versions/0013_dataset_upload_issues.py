"""dataset upload issues

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 19:30:00.000000

A dataset keeps the duplicates its upload folded and the warnings it raised (by line, the first 100
of each), so that reading it answers what the upload did. Datasets uploaded before have none kept
(null; read as empty lists): the uploaded file itself was never stored, so they cannot be recovered.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("duplicates", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("warnings", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.drop_column("warnings")
        batch_op.drop_column("duplicates")
