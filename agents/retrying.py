"""What every wait-out-an-outage retry shares: one warning per attempt, naming the error."""

from __future__ import annotations

from collections.abc import Callable

import structlog
from tenacity import RetryCallState

log = structlog.get_logger(__name__)


def log_retry(event: str) -> Callable[[RetryCallState], None]:
    """A tenacity ``before_sleep`` that logs ``event`` with the error's type and the attempt."""

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning(event, error=type(error).__name__, attempt=state.attempt_number)

    return before_sleep
