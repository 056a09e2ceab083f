"""validity records and required warrants

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 23:10:00.000000

``validity_records``: one row per saved measurement of one exact panel (its identity's id and
parts) against a labelled set, each share with its Wilson 95 % interval; a run's warrant cites the
newest. ``projects.require_warrant``: the largest false-accept upper bound a project accepts
(null: the global setting).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(length: int | None = None) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    op.create_table(
        "validity_records",
        sa.Column("id", _text(), nullable=False),
        sa.Column("project_id", _text(), nullable=False),
        sa.Column("panel_id", _text(64), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.Column("judge_model", _text(200), nullable=False),
        sa.Column("set_name", _text(200), nullable=False),
        sa.Column("set_hash", _text(64), nullable=False),
        sa.Column("split", _text(16), nullable=False),
        sa.Column("n_flawed", sa.Integer(), nullable=False),
        sa.Column("n_sound", sa.Integer(), nullable=False),
        sa.Column("false_accept", sa.JSON(), nullable=False),
        sa.Column("false_accept_high", sa.Float(), nullable=True),
        sa.Column("specificity", sa.JSON(), nullable=False),
        sa.Column("detection", sa.JSON(), nullable=False),
        sa.Column("adversarial_gap", sa.JSON(), nullable=False),
        sa.Column("measured_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("validity_records", schema=None) as batch_op:
        batch_op.create_index("ix_validity_records_project_id", ["project_id"], unique=False)
        batch_op.create_index(
            "ix_validity_records_panel_id_measured_at", ["panel_id", "measured_at"], unique=False
        )
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("require_warrant", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("require_warrant")
    with op.batch_alter_table("validity_records", schema=None) as batch_op:
        batch_op.drop_index("ix_validity_records_panel_id_measured_at")
        batch_op.drop_index("ix_validity_records_project_id")
    op.drop_table("validity_records")
