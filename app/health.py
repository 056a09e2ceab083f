"""/healthz, /readyz and /metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import text

from app.db import migrations_at_head
from app.deps import ReadKey
from app.errors import PROBLEM_JSON, PROBLEM_SCHEMA
from app.errors_http import problem

router = APIRouter(tags=["operations"])


class Health(BaseModel):
    """Liveness or readiness."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"status": "ok", "checks": {"database": True, "migrations": True}}]}
    )

    status: str = Field(description="ok, or not-ready")
    checks: dict[str, bool] = Field(
        default_factory=dict, description="Each readiness check and whether it passed (database, migrations)"
    )


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """Liveness: the process answers."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Health,
    responses={503: {"description": "Not ready", "content": {PROBLEM_JSON: {"schema": PROBLEM_SCHEMA}}}},
)
async def readyz(request: Request) -> Health | Response:
    """Readiness: the database answers and its migrations are at head."""
    checks = {"database": False, "migrations": False}
    try:
        async with request.app.state.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        checks["database"] = True
        checks["migrations"] = await migrations_at_head(request.app.state.engine)
    except Exception:  # any failure means not ready; the body says which check failed
        pass
    if all(checks.values()):
        return Health(status="ready", checks=checks)
    failing = ", ".join(name for name, ok in checks.items() if not ok)
    return problem(
        503, "not-ready", "Service Unavailable", f"Failing checks: {failing}.", "/readyz", checks=checks
    )


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(request: Request, _: ReadKey) -> Response:
    """Prometheus metrics (needs a read key)."""
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
