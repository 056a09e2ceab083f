"""What served each call: the endpoint's reported model id and its ``system_fingerprint``.

Revision ID: 0025
Revises: 0024

Judgements gain ``system_fingerprint``; revisions gain ``reported_model`` and ``system_fingerprint``
(judgements kept ``reported_model`` already). All are nullable: null for what was stored before,
and for a reply that did not carry the field. A batch's manifest lists them per model.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels = None
depends_on = None

COLUMNS = (
    ("judgements", "system_fingerprint"),
    ("revisions", "reported_model"),
    ("revisions", "system_fingerprint"),
)


def upgrade() -> None:
    for table, column in COLUMNS:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column(column, sa.Text(), nullable=True))


def downgrade() -> None:
    for table, column in reversed(COLUMNS):
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column(column)
