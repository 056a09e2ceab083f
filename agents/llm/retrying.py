"""What every wait-out-an-outage retry shares: its backoff, and one warning per attempt naming the error."""

from __future__ import annotations

from collections.abc import Callable

import structlog
from tenacity import RetryCallState, wait_exponential

log = structlog.get_logger(__name__)

# 0.2 s, then doubling up to 5 s between attempts: quick after a blip, gentle through a restart.
OUTAGE_BACKOFF = wait_exponential(multiplier=0.2, max=5.0)


def log_retry(event: str) -> Callable[[RetryCallState], None]:
    """A tenacity ``before_sleep`` that logs ``event`` with the error's type and the attempt."""

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning(event, error=type(error).__name__, attempt=state.attempt_number)

    return before_sleep
