"""Cached input tokens: of each call's prompt tokens, those the server served from its prompt cache.

Revision ID: 0023
Revises: 0022_one_lease

Judgements, revisions and batch items gain ``cached_input_tokens`` (0 for what was stored before:
no server's cache was read then). Nothing else changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022_one_lease"
branch_labels = None
depends_on = None

TABLES = ("judgements", "revisions", "batch_items")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(
                sa.Column("cached_input_tokens", sa.Integer(), nullable=False, server_default="0")
            )


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("cached_input_tokens")
