"""audit log and cache uses

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 07:00:00.000000

The audit log (who created, cancelled, steered or deleted what), and which batch used which cached
reply, so deleting a batch deletes the replies only it used.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "llm_cache_uses",
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("batch_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.id"]),
        sa.ForeignKeyConstraint(["key"], ["llm_cache.key"]),
        sa.PrimaryKeyConstraint("key", "batch_id"),
    )
    op.create_index("ix_llm_cache_uses_batch_id", "llm_cache_uses", ["batch_id"], unique=False)
    op.create_table(
        "audit_events",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("project_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("actor", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("target_type", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("target_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_audit_events_project_id_created_at", "audit_events", ["project_id", "created_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_audit_events_project_id_created_at", table_name="audit_events")
    op.drop_table("audit_events")
    op.drop_index("ix_llm_cache_uses_batch_id", table_name="llm_cache_uses")
    op.drop_table("llm_cache_uses")
