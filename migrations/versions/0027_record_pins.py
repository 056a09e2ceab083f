"""Which record a run cites: a project's pins, and records an operator published for every project

Revision ID: 0027
Revises: 0026

``validity_records.published_at``: when an operator published the record for every project's runs
to cite (null: only its own project's runs cite it; every record stored before is its project's
only, the default project's included). ``validity_pins``: the record a project's runs cite for one
panel identity, over the default choice (the record of the most held-out flawed versions).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(length: int | None = None) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    with op.batch_alter_table("validity_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("published_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "validity_pins",
        sa.Column("project_id", _text(), nullable=False),
        sa.Column("panel_id", _text(64), nullable=False),
        sa.Column("record_id", _text(), nullable=False),
        sa.Column("pinned_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
        sa.ForeignKeyConstraint(["record_id"], ["validity_records.id"]),
        sa.PrimaryKeyConstraint("project_id", "panel_id"),
    )


def downgrade() -> None:
    op.drop_table("validity_pins")
    with op.batch_alter_table("validity_records", schema=None) as batch_op:
        batch_op.drop_column("published_at")
