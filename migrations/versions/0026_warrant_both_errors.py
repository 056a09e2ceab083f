"""A warrant bounds both errors: the specificity's lower bound and the twins of a validity record, and
a project's required lower bound of sound versions passed.

Revision ID: 0026
Revises: 0025

``validity_records.specificity_low`` (the Wilson 95 % lower bound of the share of sound versions
passed, what a required warrant's floor is compared with) and ``validity_records.n_twins`` (the
adversarial twins judged) are null on records saved before: such a record meets no required
warrant, since its specificity was never checked against a floor. ``projects.require_specificity``
is null (the setting) for every project.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels = None
depends_on = None

COLUMNS = (
    ("validity_records", "specificity_low", sa.Float()),
    ("validity_records", "n_twins", sa.Integer()),
    ("projects", "require_specificity", sa.Float()),
)


def upgrade() -> None:
    for table, column, kind in COLUMNS:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column(column, kind, nullable=True))


def downgrade() -> None:
    for table, column, _ in reversed(COLUMNS):
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column(column)
