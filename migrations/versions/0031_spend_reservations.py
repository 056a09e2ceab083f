"""Spend reservations: the daily ledgers hold what work under way has reserved, beside what it spent.

Revision ID: 0031
Revises: 0030

``daily_usage`` and ``key_daily_usage`` get ``reserved_tokens`` and ``reserved_cost_usd``: a daily cap
admits new model work only while spent plus reserved is under it (``app.access.reserve``).
``spend_holds`` says what each run or bench holds of those reservations, per day, so that whoever
ends it (or resumes it after its process died) settles and releases exactly that.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels = None
depends_on = None

LEDGERS = ("daily_usage", "key_daily_usage")


def upgrade() -> None:
    for ledger in LEDGERS:
        with op.batch_alter_table(ledger) as batch_op:
            batch_op.add_column(
                sa.Column("reserved_tokens", sa.BigInteger(), nullable=False, server_default="0")
            )
            batch_op.add_column(
                sa.Column("reserved_cost_usd", sa.Float(), nullable=False, server_default="0")
            )
    op.create_table(
        "spend_holds",
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("project_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("api_key_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("holder", "day"),
    )


def downgrade() -> None:
    op.drop_table("spend_holds")
    for ledger in reversed(LEDGERS):
        with op.batch_alter_table(ledger) as batch_op:
            batch_op.drop_column("reserved_cost_usd")
            batch_op.drop_column("reserved_tokens")
