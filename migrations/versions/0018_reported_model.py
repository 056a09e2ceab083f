"""reported model

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 02:50:00.000000

``llm_cache.reported_model``: the model id the endpoint reported in a cached reply. A panel's
identity holds the model id its endpoint reports (``agents.identity``), so a verdict answered from
the cache must keep it; replies cached before have none (null), and a round answered only from them
has no reported id and cites no warrant. ``judgements.reported_model``: the same for each stored
verdict, shown in the run's trace.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_cache", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reported_model", sa.Text(), nullable=True))
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reported_model", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_column("reported_model")
    with op.batch_alter_table("llm_cache", schema=None) as batch_op:
        batch_op.drop_column("reported_model")
