"""Validity records per source, a warrant's minimum of flawed problems, and repair records.

Revision ID: 0032
Revises: 0031

``validity_records.sources`` (JSON, null on records saved before: one source, their own set): per
labelled set of a bench over several, its name, kind, hash, counts and figures.
``projects.require_warrant_min_flawed``: the fewest flawed versions a warrant's required source holds.
``repair_records``: saved repair measurements (``thinkloop judges repair --save``), one per reviser,
of one judging panel's identity.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

_WHEN = sa.DateTime(timezone=True)

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.add_column(sa.Column("sources", sa.JSON(), nullable=True))
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(sa.Column("require_warrant_min_flawed", sa.Integer(), nullable=True))
    op.create_table(
        "repair_records",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("project_id", sa.String(), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("panel_id", sa.String(length=64), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.Column("judge_model", sa.String(length=200), nullable=False),
        sa.Column("reviser", sa.String(length=200), nullable=False),
        sa.Column("set_name", sa.String(length=200), nullable=False),
        sa.Column("set_hash", sa.String(length=64), nullable=False),
        sa.Column("split", sa.String(length=16), nullable=False),
        sa.Column("max_rounds", sa.Integer(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("decided", sa.Integer(), nullable=False),
        sa.Column("repaired", sa.JSON(), nullable=False),
        sa.Column("accepted_but_wrong", sa.JSON(), nullable=False),
        sa.Column("gave_up", sa.JSON(), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("measured_at", _WHEN, nullable=False),
    )
    op.create_index("ix_repair_records_project_id", "repair_records", ["project_id"])
    op.create_index("ix_repair_records_panel_id_measured_at", "repair_records", ["panel_id", "measured_at"])


def downgrade() -> None:
    op.drop_table("repair_records")
    with op.batch_alter_table("projects") as batch_op:
        batch_op.drop_column("require_warrant_min_flawed")
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.drop_column("sources")
