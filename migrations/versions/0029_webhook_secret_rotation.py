"""Webhook secret rotation: the secret a rotation replaced keeps signing beside the new one for a while.

Revision ID: 0029
Revises: 0027

``projects.webhook_secret_previous`` / ``webhook_secret_previous_until`` and
``webhook_endpoints.previous_secret`` / ``previous_secret_until``: while ``..._until`` is in the
future, deliveries carry a Standard Webhooks signature with both secrets.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

_WHEN = sa.DateTime(timezone=True)

revision: str = "0029"
down_revision: str | None = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(sa.Column("webhook_secret_previous", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("webhook_secret_previous_until", _WHEN, nullable=True))
    with op.batch_alter_table("webhook_endpoints") as batch_op:
        batch_op.add_column(sa.Column("previous_secret", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("previous_secret_until", _WHEN, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as batch_op:
        batch_op.drop_column("previous_secret_until")
        batch_op.drop_column("previous_secret")
    with op.batch_alter_table("projects") as batch_op:
        batch_op.drop_column("webhook_secret_previous_until")
        batch_op.drop_column("webhook_secret_previous")
