"""structlog configuration: console or JSON lines on stderr."""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from typing import TYPE_CHECKING, TextIO, cast

import structlog

if TYPE_CHECKING:  # only the server's middleware below needs them, as annotations
    from starlette.types import ASGIApp, Message, Receive, Scope, Send


class _Stderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing, not at configuration time."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


# Libraries that log whole statements or requests at INFO/DEBUG: secrets (webhook URLs with tokens,
# provider keys in headers) would reach the logs. thinkloop's own events never carry them.
PAYLOAD_LOGGERS = (
    "aiosqlite",
    "sqlalchemy",
    "psycopg",
    "httpx",
    "httpcore",
    "httpx2",  # the OpenAI SDK's HTTP client: one INFO line per request, with its URL
    "httpcore2",
    "openai",
    "langchain",
)


def configure_logging(level: str = "INFO", json_lines: bool = False) -> None:
    """Route structlog and stdlib logging to stderr at ``level``."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    for name in PAYLOAD_LOGGERS:  # their debug lines carry SQL parameters, request bodies, headers
        logging.getLogger(name).setLevel(max(numeric, logging.WARNING))
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    )
    # JSON lines carry the exception's type, message and traceback text; the console shows the type
    # and message on the line, and the traceback only at DEBUG (a failed LLM call is a warning, not
    # a crash, and must not print a traceback into a CLI session).
    exceptions: list[structlog.typing.Processor] = [_exception_fields]
    if json_lines:
        exceptions.append(structlog.processors.format_exc_info)
    elif numeric > logging.DEBUG:
        exceptions.append(_drop_exc_info)
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        *exceptions,
    ]
    # Libraries log through the standard library: their records are rendered by the same processors,
    # so with THINKLOOP_LOG_JSON every line on stderr is one JSON object, theirs included.
    handler = logging.StreamHandler(cast(TextIO, _Stderr()))
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric)
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )


def _exc(event: structlog.typing.EventDict) -> BaseException | None:
    info = event.get("exc_info")
    if isinstance(info, BaseException):
        return info
    if info is True:
        return sys.exc_info()[1]
    if isinstance(info, tuple) and len(info) == 3 and isinstance(info[1], BaseException):
        return info[1]
    return None


def _exception_fields(_: object, __: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
    """``exc_type`` and ``exc_message`` beside the event, whatever the renderer."""
    exc = _exc(event)
    if exc is not None:
        event.setdefault("exc_type", type(exc).__name__)
        event.setdefault("exc_message", str(exc)[:1000])
    return event


def _drop_exc_info(_: object, __: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
    event.pop("exc_info", None)
    return event


_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestIds:
    """Give every HTTP request an id: the client's ``X-Request-ID`` when it is a sane token (letters,
    digits and ``._:-``, up to 128), else a new one. It is echoed in the response's ``X-Request-ID``,
    bound to every log line written while the request is served, and logged once with the status and
    duration (``http.request``), so a client's report can be matched to the server's log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        status = 500
        started = time.perf_counter()

        async def tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *[(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"],
                    (b"x-request-id", request_id.encode()),
                ]
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                await self.app(scope, receive, tagged)
            finally:
                _log.info(
                    "http.request",
                    method=scope["method"],
                    path=scope["path"],
                    status=status,
                    duration_ms=round((time.perf_counter() - started) * 1000, 1),
                )


_log = structlog.get_logger("thinkloop.http")
