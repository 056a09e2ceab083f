"""Webhook signing per project: every project gets a signing secret, and deliveries name their project.

Revision ID: 0024
Revises: 0023

``projects.webhook_secret`` signs a run's own ``webhook_url`` when THINKLOOP_WEBHOOK_SECRET is unset
(so no delivery goes out unsigned); each existing project gets a fresh one here.
``webhook_deliveries.project_id`` lets a project list and redeliver its deliveries (filled from the
delivery's run or endpoint).
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(sa.Column("webhook_secret", sa.String(length=100), nullable=True))
    with op.batch_alter_table("webhook_deliveries") as batch_op:
        batch_op.add_column(sa.Column("project_id", sa.String(), nullable=True))
        batch_op.create_index("ix_webhook_deliveries_project_id", ["project_id"])
    bind = op.get_bind()
    for (project_id,) in bind.execute(sa.text("SELECT id FROM projects")).all():
        bind.execute(
            sa.text("UPDATE projects SET webhook_secret = :secret WHERE id = :id"),
            {"secret": "whsec_" + secrets.token_urlsafe(24), "id": project_id},
        )
    bind.execute(
        sa.text(
            "UPDATE webhook_deliveries SET project_id = "
            "(SELECT runs.project_id FROM runs WHERE runs.id = webhook_deliveries.run_id) "
            "WHERE run_id IS NOT NULL"
        )
    )
    bind.execute(
        sa.text(
            "UPDATE webhook_deliveries SET project_id = (SELECT webhook_endpoints.project_id "
            "FROM webhook_endpoints WHERE webhook_endpoints.id = webhook_deliveries.endpoint_id) "
            "WHERE project_id IS NULL AND endpoint_id IS NOT NULL"
        )
    )


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_project_id")
        batch_op.drop_column("project_id")
    with op.batch_alter_table("projects") as batch_op:
        batch_op.drop_column("webhook_secret")
