"""The batch service as a FastAPI dependency (beside its feature, so app.deps knows no feature)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.batches.service import BatchService


def get_batches(request: Request) -> BatchService:
    """The app's batch service."""
    service: BatchService = request.app.state.batches
    return service


Batches = Annotated[BatchService, Depends(get_batches)]
