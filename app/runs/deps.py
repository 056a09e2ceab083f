"""The run executor as a FastAPI dependency (beside its feature, so app.deps knows no feature)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.runs.executor import RunExecutor
from app.webhooks import WebhookOutbox


def get_executor(request: Request) -> RunExecutor:
    """The app's run executor."""
    executor: RunExecutor = request.app.state.executor
    return executor


Executor = Annotated[RunExecutor, Depends(get_executor)]


def get_outbox(request: Request) -> WebhookOutbox:
    """The app's webhook outbox sender (to wake it after committing a delivery)."""
    outbox: WebhookOutbox = request.app.state.outbox
    return outbox


Outbox = Annotated[WebhookOutbox, Depends(get_outbox)]
