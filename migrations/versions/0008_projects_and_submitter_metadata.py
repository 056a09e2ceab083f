"""projects and submitter metadata

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 06:30:00.000000

Tenancy: every API key, run, dataset and batch belongs to a project; what exists already goes to
the project "default", made here. Keys gain an expiry and a last-used time. Metadata moves off the
deduplicated problem (where one submitter's metadata showed in another's trace) onto the run and
the dataset row that carried it; the problem keeps only its text.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT = "default"
OWNED = ("api_keys", "runs", "datasets", "batches")


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    projects = sa.table("projects", sa.column("id"), sa.column("name"), sa.column("created_at"))
    # UTC, stored the way the app stores it on each database (SQLite keeps no offset)
    now = datetime.now(UTC)
    created = now.replace(tzinfo=None) if op.get_bind().dialect.name == "sqlite" else now
    op.execute(projects.insert().values(id=DEFAULT, name=DEFAULT, created_at=created))
    for table in OWNED:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column(
                    "project_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=DEFAULT
                )
            )
            batch_op.create_index(f"ix_{table}_project_id", ["project_id"], unique=False)
            batch_op.create_foreign_key(f"fk_{table}_project_id_projects", "projects", ["project_id"], ["id"])
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    for table in ("runs", "dataset_items"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("meta", sa.JSON(), nullable=True))
    # Each submission keeps the metadata it was shown with so far (its problem's).
    for table in ("runs", "dataset_items"):
        source = f"SELECT problems.meta FROM problems WHERE problems.id = {table}.problem_id"
        op.execute(f"UPDATE {table} SET meta = ({source})")
    op.drop_column("problems", "meta")  # SQLite 3.35+ drops a plain column in place


def downgrade() -> None:
    op.add_column("problems", sa.Column("meta", sa.JSON(), nullable=False, server_default="{}"))
    for table in ("dataset_items", "runs"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("meta")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("expires_at")
    for table in reversed(OWNED):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(f"fk_{table}_project_id_projects", type_="foreignkey")
            batch_op.drop_index(f"ix_{table}_project_id")
            batch_op.drop_column("project_id")
    op.drop_table("projects")
