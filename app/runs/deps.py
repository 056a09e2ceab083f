"""The run executor as a FastAPI dependency (beside its feature, so app.deps knows no feature)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.runs.executor import RunExecutor


def get_executor(request: Request) -> RunExecutor:
    """The app's run executor."""
    executor: RunExecutor = request.app.state.executor
    return executor


Executor = Annotated[RunExecutor, Depends(get_executor)]
