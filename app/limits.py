"""A request-body size limit enforced while the body streams in (not only by Content-Length)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import PayloadTooLarge
from app.errors_http import app_problem


def _detail(max_bytes: int) -> str:
    return f"The body is larger than {max_bytes} bytes."


class BodyTooLarge(HTTPException):
    """Raised inside receive() when the body passes the limit. An HTTPException, not an AppError:
    FastAPI passes those on while it reads a body (anything else becomes a 400), and the error
    handlers render a 413 as PayloadTooLarge, the type ``_reject`` answers too."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, _detail(max_bytes))


class BodySizeLimit:
    """Answer 413 problem+json to any request whose body exceeds ``max_bytes`` (or the larger limit
    of a path in ``per_path``, e.g. file uploads)."""

    def __init__(self, app: ASGIApp, max_bytes: int, per_path: dict[str, int] | None = None) -> None:
        self.app, self.max_bytes, self.per_path = app, max_bytes, per_path or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.per_path.get(scope["path"].rstrip("/"), self.max_bytes)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(scope, receive, send, limit)
            return
        seen, started = 0, False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except BodyTooLarge:
            if not started:
                await self._reject(scope, receive, send, limit)

    async def _reject(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        response = app_problem(PayloadTooLarge(_detail(limit)), scope["path"])
        await response(scope, receive, send)
