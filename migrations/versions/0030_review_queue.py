"""The review queue: teachers' decisions on runs, which become the project's review set.

Revision ID: 0030
Revises: 0029

``review_items`` (a run's version awaiting or given a teacher's decision) and ``review_decisions``
(every decision, a later one replacing an earlier); ``projects.audit_rate`` / ``audit_seed`` (the
seeded audit draw of accepted and screened runs) and ``require_warrant_source``;
``runs.review`` (none, pending or decided: a run's grading progress);
``validity_records.source_kind`` (shipped, benchmark, own or reviews) and ``reviewers``.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

_WHEN = sa.DateTime(timezone=True)

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(sa.Column("audit_rate", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("audit_seed", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("require_warrant_source", sa.String(length=16), nullable=True))
    projects = sa.table("projects", sa.column("id", sa.String), sa.column("audit_seed", sa.String))
    connection = op.get_bind()
    for (project_id,) in connection.execute(sa.select(projects.c.id)).all():
        seed = secrets.token_hex(16)  # each project its own seed, as a new project gets
        connection.execute(projects.update().where(projects.c.id == project_id).values(audit_seed=seed))
    with op.batch_alter_table("projects") as batch_op:
        batch_op.alter_column("audit_seed", existing_type=sa.String(length=64), nullable=False)
    with op.batch_alter_table("runs") as batch_op:
        batch_op.add_column(sa.Column("review", sa.String(length=16), nullable=True))
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.add_column(
            sa.Column("source_kind", sa.String(length=16), nullable=False, server_default="own")
        )
        batch_op.add_column(sa.Column("reviewers", sa.Integer(), nullable=True))
    records = sa.table(
        "validity_records", sa.column("set_name", sa.String), sa.column("source_kind", sa.String)
    )
    connection.execute(records.update().where(records.c.set_name == "shipped").values(source_kind="shipped"))
    op.create_table(
        "review_items",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("project_id", sa.String(), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("run_id", sa.String(), sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("cause", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("solution", sa.Text(), nullable=False),
        sa.Column("run_status", sa.String(length=32), nullable=False),
        sa.Column("draw", sa.JSON(), nullable=True),
        sa.Column("requested_by", sa.String(length=200), nullable=True),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("decided_at", _WHEN, nullable=True),
    )
    op.create_index("ix_review_items_project_id", "review_items", ["project_id"])
    op.create_index("ix_review_items_run_id", "review_items", ["run_id"])
    op.create_index("ix_review_items_project_id_status", "review_items", ["project_id", "status"])
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("item_id", sa.String(), sa.ForeignKey("review_items.id"), nullable=False),
        sa.Column("project_id", sa.String(), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("flaws", sa.JSON(), nullable=False),
        sa.Column("corrected_question", sa.Text(), nullable=True),
        sa.Column("corrected_solution", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=True),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("request_hash", sa.String(length=64), nullable=True),
        sa.Column("replaces", sa.String(length=64), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.UniqueConstraint("item_id", "idempotency_key", name="uq_review_decisions_idempotency"),
    )
    op.create_index("ix_review_decisions_item_id", "review_decisions", ["item_id"])
    op.create_index("ix_review_decisions_project_id", "review_decisions", ["project_id"])


def downgrade() -> None:
    op.drop_table("review_decisions")
    op.drop_table("review_items")
    with op.batch_alter_table("validity_records") as batch_op:
        batch_op.drop_column("reviewers")
        batch_op.drop_column("source_kind")
    with op.batch_alter_table("runs") as batch_op:
        batch_op.drop_column("review")
    with op.batch_alter_table("projects") as batch_op:
        batch_op.drop_column("require_warrant_source")
        batch_op.drop_column("audit_seed")
        batch_op.drop_column("audit_rate")
