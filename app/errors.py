"""The AppError hierarchy and the RFC 9457 Problem schema. They are rendered once, as
application/problem+json, by app.errors_http (apart, so that the CLI's paths import no web
framework)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

PROBLEM_JSON = "application/problem+json"


class AppError(Exception):
    """An error with an HTTP status, a stable type slug and a human-readable detail."""

    status = 500
    slug = "internal-error"
    title = "Internal error"

    def __init__(self, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


class BadRequest(AppError):
    """The request is malformed."""

    status, slug, title = 400, "bad-request", "Bad request"


class MalformedJson(AppError):
    """The body is not JSON we can read (invalid, nested too deeply, a number past the digit limit)."""

    status, slug, title = 400, "malformed-json", "The body is not readable JSON"


class Unauthorized(AppError):
    """No valid API key."""

    status, slug, title = 401, "unauthorized", "Missing or invalid API key"


class Forbidden(AppError):
    """The key lacks the scope."""

    status, slug, title = 403, "forbidden", "The API key lacks the required scope"


class NotFound(AppError):
    """No such resource."""

    status, slug, title = 404, "not-found", "Not found"


class Conflict(AppError):
    """The resource's state forbids the action."""

    status, slug, title = 409, "conflict", "Conflict"


class PayloadTooLarge(AppError):
    """The body passes the size limit (one type, whether Content-Length said so or the stream did)."""

    status, slug, title = 413, "payload-too-large", "Request body too large"


class UnsupportedMediaType(AppError):
    """A JSON endpoint was sent a body of another media type."""

    status, slug, title = 415, "unsupported-media-type", "Unsupported media type"


class Unprocessable(AppError):
    """Well-formed but invalid."""

    status, slug, title = 422, "validation-error", "The request is invalid"


class TooManyRequests(AppError):
    """A rate limit or quota is spent; Retry-After says when to try again."""

    status, slug, title = 429, "too-many-requests", "Too many requests"


class QuotaExceeded(TooManyRequests):
    """A project's or a key's daily token or cost cap for runs is spent."""

    slug, title = "quota-exceeded", "Daily quota spent"


_AUTH = {
    400: "Malformed request (invalid JSON or cursor)",
    401: "Missing or invalid API key",
    403: "Missing scope",
    429: "A rate limit or quota is spent (Retry-After)",
}


class Problem(BaseModel):
    """An error, as RFC 9457 problem details (``application/problem+json``)."""

    type: str = Field(
        description="A URI naming the kind of problem; stable, so clients may branch on it",
        examples=["https://thinkloop.dev/problems/not-found"],
    )
    title: str = Field(description="A short summary of the kind of problem", examples=["Not found"])
    status: int = Field(description="The HTTP status code", examples=[404])
    detail: str = Field(
        description="What was wrong with this request, in words", examples=["There is no run 5dd6f164."]
    )
    instance: str = Field(description="The request path", examples=["/v1/runs/5dd6f164"])
    errors: list[dict[str, Any]] | None = Field(
        default=None,
        description="Validation errors: each field at fault (`loc`), why (`msg`), and a `type`",
        examples=[
            [
                {
                    "loc": ["body", "options", "max_rounds"],
                    "msg": "Input should be less than or equal to 10",
                    "type": "less_than_equal",
                }
            ]
        ],
    )
    known_models: list[str] | None = Field(
        default=None, description="With an unknown model: the known ones", examples=[["rubric", "gpt4o"]]
    )


PROBLEM_SCHEMA = {"$ref": "#/components/schemas/Problem"}


def problem_responses(codes: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the auth errors plus ``codes``, each as problem+json."""
    return {
        code: {"description": text, "content": {PROBLEM_JSON: {"schema": PROBLEM_SCHEMA}}}
        for code, text in sorted((_AUTH | codes).items())
    }
