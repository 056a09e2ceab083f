"""What a failed call raises: the server's RFC 9457 problem, typed by its status."""

from __future__ import annotations

from typing import Any

import httpx


class ThinkloopError(Exception):
    """A call the server answered with an error (4xx or 5xx), with its problem details.

    ``type``, ``title``, ``detail`` and ``errors`` are the problem+json fields; ``request_id`` is the
    ``X-Request-ID`` the server logged the request under (quote it when reporting a problem).
    """

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.request_id = response.headers.get("x-request-id")
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        self.problem: dict[str, Any] = body if isinstance(body, dict) else {}
        self.type: str = str(self.problem.get("type", "about:blank"))
        self.title: str = str(self.problem.get("title", response.reason_phrase))
        self.detail: str | None = self.problem.get("detail")
        self.errors: list[Any] = list(self.problem.get("errors") or [])
        text = f"{self.status} {self.title}" + (f": {self.detail}" if self.detail else "")
        super().__init__(text)


class Unauthorized(ThinkloopError):
    """401: no key, or a key that is unknown, revoked or expired."""


class Forbidden(ThinkloopError):
    """403: the key lacks the scope the call needs."""


class NotFound(ThinkloopError):
    """404: no such thing in the key's project (another project's ids answer 404 too)."""


class Conflict(ThinkloopError):
    """409: the thing is not in a state that allows the call (e.g. cancelling a finished run)."""


class InvalidRequest(ThinkloopError):
    """400, 413, 415 or 422: the request itself was wrong; ``errors`` lists the fields at fault."""


class RateLimited(ThinkloopError):
    """429: a quota was exceeded; ``retry_after`` is the server's Retry-After in seconds (or None)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response)
        value = response.headers.get("retry-after")
        self.retry_after: float | None = (
            float(value) if value and value.replace(".", "", 1).isdigit() else None
        )


class ServerError(ThinkloopError):
    """5xx: the server failed; the request may be retried (with an Idempotency-Key for a POST)."""


_BY_STATUS: dict[int, type[ThinkloopError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    429: RateLimited,
}


def raise_for_problem(response: httpx.Response) -> None:
    """Raise the typed error of an error response; return for a success."""
    if response.status_code < 400:
        return
    kind = _BY_STATUS.get(
        response.status_code, ServerError if response.status_code >= 500 else ThinkloopError
    )
    raise kind(response)
