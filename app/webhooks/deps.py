"""The webhook outbox sender as a FastAPI dependency (beside its feature, so app.deps knows no feature)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.webhooks.outbox import WebhookOutbox


def get_outbox(request: Request) -> WebhookOutbox:
    """The app's webhook outbox sender (to wake it after committing a delivery)."""
    outbox: WebhookOutbox = request.app.state.outbox
    return outbox


Outbox = Annotated[WebhookOutbox, Depends(get_outbox)]
