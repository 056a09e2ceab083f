"""idempotency per project

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 05:50:00.000000

An ``Idempotency-Key`` belonged to the API key that sent it, so a client that rotated its key and
retried a submission made a second run. It is now the project's: ``runs`` is unique on
(project_id, idempotency_key) instead of (api_key_id, idempotency_key). Two keys of one project
may already have used the same Idempotency-Key for two runs: the older run keeps it, the later ones
keep their rows but lose the key (a replay now finds the older run).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW = "uq_runs_project_idempotency"
# The key-scoped constraint was created unnamed: PostgreSQL named it itself; on SQLite a batch
# operation names it through this convention so it can be dropped.
POSTGRES_OLD = "runs_api_key_id_idempotency_key_key"
SQLITE_OLD = "uq_runs_api_key_id_idempotency_key"
CONVENTION = {"uq": "uq_%(table_name)s_%(column_0_N_name)s"}

KEEP_OLDEST = (
    "UPDATE runs SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND EXISTS ("
    " SELECT 1 FROM runs AS earlier WHERE earlier.project_id = runs.project_id"
    " AND earlier.idempotency_key = runs.idempotency_key"
    " AND (earlier.created_at < runs.created_at"
    " OR (earlier.created_at = runs.created_at AND earlier.id < runs.id)))"
)


def upgrade() -> None:
    op.execute(KEEP_OLDEST)
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint(POSTGRES_OLD, "runs", type_="unique")
        op.create_unique_constraint(NEW, "runs", ["project_id", "idempotency_key"])
        return
    with op.batch_alter_table("runs", naming_convention=CONVENTION) as batch_op:
        batch_op.drop_constraint(SQLITE_OLD, type_="unique")
        batch_op.create_unique_constraint(NEW, ["project_id", "idempotency_key"])


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint(NEW, "runs", type_="unique")
        op.create_unique_constraint(POSTGRES_OLD, "runs", ["api_key_id", "idempotency_key"])
        return
    with op.batch_alter_table("runs") as batch_op:
        batch_op.drop_constraint(NEW, type_="unique")
        batch_op.create_unique_constraint(SQLITE_OLD, ["api_key_id", "idempotency_key"])
