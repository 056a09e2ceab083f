"""structlog configuration: console or JSON lines on stderr."""

from __future__ import annotations

import logging
import sys
from typing import TextIO, cast

import structlog


class _Stderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing, not at configuration time."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


# Libraries that log whole statements or requests at INFO/DEBUG: secrets (webhook URLs with tokens,
# provider keys in headers) would reach the logs. thinkloop's own events never carry them.
PAYLOAD_LOGGERS = ("aiosqlite", "sqlalchemy", "psycopg", "httpx", "httpcore", "openai", "langchain")


def configure_logging(level: str = "INFO", json_lines: bool = False) -> None:
    """Route structlog and stdlib logging to stderr at ``level``."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s", force=True)
    for name in PAYLOAD_LOGGERS:  # their debug lines carry SQL parameters, request bodies, headers
        logging.getLogger(name).setLevel(max(numeric, logging.WARNING))
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )
