"""The AppError hierarchy rendered once, as RFC 9457 application/problem+json: the handlers, the
response class and the OpenAPI schema of every error."""

from __future__ import annotations

import email.message
import json
from http import HTTPStatus
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import (
    PROBLEM_JSON,
    PROBLEM_SCHEMA,
    AppError,
    BadRequest,
    Conflict,
    Forbidden,
    MalformedJson,
    NotFound,
    PayloadTooLarge,
    Problem,
    Unauthorized,
    Unprocessable,
    UnsupportedMediaType,
)
from app.openapi_examples import fill_property_examples

log = structlog.get_logger(__name__)
# The framework's own errors (an unknown route, a body over the limit raised inside receive()) are
# rendered as our type for their status, so one status never has two problem types.
_FRAMEWORK_STATUSES = (BadRequest, Unauthorized, Forbidden, NotFound, Conflict, PayloadTooLarge)
_OURS: dict[int, type[AppError]] = {cls.status: cls for cls in (*_FRAMEWORK_STATUSES, UnsupportedMediaType)}


def _rename_schema(schemas: dict[str, Any], old: str, new: str) -> None:
    """Name the component schema ``old`` ``new``, with the references among the schemas (in place).

    Only the schemas refer to it: the operations' ``Problem`` references are the error responses'."""
    text = json.dumps(schemas).replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    renamed: dict[str, Any] = json.loads(text)
    renamed[new] = renamed.pop(old)
    schemas.clear()
    schemas.update(renamed)


def with_problem_schema(app: FastAPI) -> None:
    """Add the Problem schema to the app's OpenAPI components (the error responses refer to it), and
    an example to every property (``fill_property_examples``)."""
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = original()
            schemas = spec.setdefault("components", {}).setdefault("schemas", {})
            if "Problem" in schemas:  # a word problem (a labelled item's `corrected`) took the name
                _rename_schema(schemas, "Problem", "WordProblem")
            schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            # FastAPI documents its own 422 as JSON of HTTPValidationError; ours is a Problem.
            for operations in spec.get("paths", {}).values():
                for operation in operations.values():
                    if not isinstance(operation, dict):
                        continue
                    answer = operation.get("responses", {}).get("422")
                    if answer is not None and PROBLEM_JSON not in answer.get("content", {}):
                        answer["content"] = {PROBLEM_JSON: {"schema": PROBLEM_SCHEMA}}
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
            fill_property_examples(schemas)
        return app.openapi_schema or original()

    app.openapi = openapi  # type: ignore[method-assign]


class ProblemResponse(JSONResponse):
    """problem+json written as ASCII JSON: a detail or error that quotes the client's text (an
    unknown model name, a metadata key) can always be written, even a lone surrogate (as \\ud800)."""

    media_type = PROBLEM_JSON

    def render(self, content: Any) -> bytes:
        """The body, every non-ASCII character escaped."""
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def problem(
    status: int,
    slug: str,
    title: str,
    detail: str,
    instance: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """A problem+json response."""
    body = {
        "type": f"https://thinkloop.dev/problems/{slug}",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        **extra,
    }
    if status == 401:
        headers = (headers or {}) | {"WWW-Authenticate": "Bearer"}
    return ProblemResponse(body, status_code=status, headers=headers)


def app_problem(exc: AppError, instance: str) -> JSONResponse:
    """The problem+json response of one of our errors."""
    return problem(exc.status, exc.slug, exc.title, exc.detail, instance, exc.headers, **exc.extra)


def _is_json(content_type: str) -> bool:
    """Whether FastAPI reads a body of this type as JSON (application/json or application/*+json)."""
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def _not_sent_as_json(request: Request, errors: list[dict[str, Any]]) -> bool:
    """Whether the body failed validation because it was not sent as JSON: FastAPI then hands the
    raw bytes to the schema, which can only refuse them."""
    declared = request.headers.get("content-type")
    if declared is None:  # a body with no type at all: refused whole (an empty body is only "missing")
        return any(e["loc"] == ["body"] and e["type"] != "missing" for e in errors)
    return not _is_json(declared) and any(e["loc"][:1] == ["body"] for e in errors)


def _unreadable_json(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not parse a body that is JSON in form: Python's parser gave up on it (nested
    past the recursion limit, an integer past the int-to-text digit limit). None for other errors."""
    cause = exc.__cause__
    if exc.status_code != 400 or not isinstance(cause, ValueError | RecursionError):
        return None
    if isinstance(cause, RecursionError):
        return "The body cannot be read as JSON: it is nested too deeply."
    return f"The body cannot be read as JSON: {str(cause).split(';')[0]}."


def _schema_mismatch(errors: list[dict[str, Any]]) -> str:
    """A detail naming the first field at fault and why, so the text alone says what was wrong."""
    if not errors:
        return "The request does not match the schema."
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1} more, in errors)" if len(errors) > 1 else ""
    return (
        f"The request does not match the schema: {where}: {first['msg'].removeprefix('Value error, ')}{more}."
    )


def _wrong_media_type(request: Request) -> UnsupportedMediaType:
    declared = request.headers.get("content-type") or "none"
    return UnsupportedMediaType(
        f"This endpoint reads a JSON body: send it with Content-Type: application/json (it was {declared})."
    )


def install_error_handlers(app: FastAPI) -> None:
    """Render every error, ours and the framework's, as problem+json."""

    @app.exception_handler(AppError)
    async def app_error(request: Request, exc: AppError) -> JSONResponse:
        return app_problem(exc, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        if _not_sent_as_json(request, errors):
            return app_problem(_wrong_media_type(request), request.url.path)
        # One title per problem type, whichever path raised it (ours or the framework's).
        if any(e["type"] == "json_invalid" for e in errors):
            return app_problem(MalformedJson("The body is not valid JSON.", errors=errors), request.url.path)
        return app_problem(Unprocessable(_schema_mismatch(errors), errors=errors), request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if (unreadable := _unreadable_json(exc)) is not None:
            return app_problem(MalformedJson(unreadable), request.url.path)
        if exc.status_code in _OURS:
            return app_problem(_OURS[exc.status_code](str(exc.detail)), request.url.path)
        phrase = HTTPStatus(exc.status_code).phrase
        slug = phrase.lower().replace(" ", "-")
        return problem(exc.status_code, slug, phrase, str(exc.detail), request.url.path)

    @app.exception_handler(DataError)
    async def unstorable(request: Request, exc: DataError) -> JSONResponse:
        # A value the database cannot hold (e.g. U+0000 in a name): the request's fault, nothing stored.
        log.info("http.unstorable_value", path=request.url.path, error=type(exc.orig).__name__)
        detail = "A value in the request cannot be stored (for example a NUL character); nothing was stored."
        return problem(422, "unstorable-value", "The request is invalid", detail, request.url.path)

    @app.exception_handler(OperationalError)
    @app.exception_handler(InterfaceError)
    async def database_away(request: Request, exc: Exception) -> JSONResponse:
        log.warning("http.database_unavailable", path=request.url.path, error=type(exc).__name__)
        response = problem(
            503,
            "database-unavailable",
            "Service unavailable",
            "The database cannot be reached; the request was not completed. Try again shortly.",
            request.url.path,
        )
        response.headers["Retry-After"] = "5"
        return response


class UnhandledErrors:
    """A 500 problem for an exception no handler took, answered inside ``RequestIds``.

    Starlette runs an ``Exception`` handler in its outermost middleware, outside ours: that 500 had
    no X-Request-ID and its log line no request_id. Here both do. Once the answer has begun (a
    stream), nothing can be sent instead: the error is logged and raised for the server to close."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            log.exception("http.unhandled_error", path=scope["path"], answered=started)
            if started:
                raise
            detail = "An unexpected error occurred."
            await problem(500, "internal-error", "Internal error", detail, scope["path"])(
                scope, receive, send
            )
