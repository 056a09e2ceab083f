"""webhook endpoints

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 07:30:00.000000

Receivers a project registers, each with its own signing secret; a delivery may be to one of them,
and a test event belongs to no run.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("project_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("secret", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_endpoints_project_id", "webhook_endpoints", ["project_id"], unique=False)
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.alter_column("run_id", existing_type=sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        batch_op.add_column(sa.Column("endpoint_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_index("ix_webhook_deliveries_endpoint_id", ["endpoint_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_webhook_deliveries_endpoint_id", "webhook_endpoints", ["endpoint_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_constraint("fk_webhook_deliveries_endpoint_id", type_="foreignkey")
        batch_op.drop_index("ix_webhook_deliveries_endpoint_id")
        batch_op.drop_column("endpoint_id")
        batch_op.alter_column("run_id", existing_type=sqlmodel.sql.sqltypes.AutoString(), nullable=False)
    op.drop_index("ix_webhook_endpoints_project_id", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
