"""FastAPI dependencies: one seam each for sessions, services and API-key scopes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from agents.llm.models import ModelRegistry, UnknownModelError
from agents.panel import PanelFactory
from app.access.quotas import Quotas
from app.access.signin import find_key
from app.errors import Forbidden, Unauthorized, Unprocessable
from app.models import ApiKey
from app.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="Or the key in X-API-Key")


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A request's session; endpoints that write commit before they answer."""
    async with request.app.state.sessions() as session:
        try:
            yield session
            await session.commit()
        except BaseException:
            await session.rollback()
            raise


def get_settings_dep(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings


def get_registry(request: Request) -> ModelRegistry:
    """The app's model registry."""
    registry: ModelRegistry = request.app.state.registry
    return registry


def get_quotas(request: Request) -> Quotas:
    """The app's quotas (rate windows, daily caps, the sign-in brake)."""
    quotas: Quotas = request.app.state.quotas
    return quotas


def get_factory(request: Request) -> PanelFactory:
    """The app's panel factory (one client per model, shared by every run)."""
    factory: PanelFactory = request.app.state.factory
    return factory


def check_models(registry: ModelRegistry, *names: str) -> None:
    """422 (listing the known models) unless every name is usable."""
    for name in names:
        try:
            registry.get(name)
        except UnknownModelError as exc:
            raise Unprocessable(str(exc), known_models=exc.known) from exc


OPERATOR = "operator"  # app.projects.keys.OPERATOR: the instance's scope, above every project's admin
VALIDATE = "validate"  # app.projects.keys.VALIDATE: save and pin the project's validity records


def holds(key: ApiKey, scope: str) -> bool:
    """Whether ``key`` holds ``scope``: an operator key holds admin too (of every project), and an
    admin key (so an operator's) holds validate."""
    if scope == VALIDATE and holds(key, "admin"):
        return True
    return scope in key.scopes or (scope == "admin" and OPERATOR in key.scopes)


def require_scope(scope: str, *others: str) -> Callable[..., Awaitable[ApiKey]]:
    """A dependency that admits a live API key holding ``scope`` (or one of ``others``)."""

    async def check(
        request: Request,
        response: Response,
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        header: Annotated[str | None, Depends(_header)],
    ) -> ApiKey:
        secret = bearer.credentials if bearer else header
        if not secret:
            raise Unauthorized("Send an API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'.")
        quotas: Quotas = request.app.state.quotas
        client = request.client.host if request.client else "unknown"
        await quotas.check_signin(client)  # a client guessing keys is slowed to a few tries a minute
        async with request.app.state.sessions() as session:
            key = await find_key(session, secret)
        if key is None:
            await quotas.signin_failed(client)
            raise Unauthorized("The API key is unknown, revoked or expired.")
        if not any(holds(key, wanted) for wanted in (scope, *others)):
            named = " or ".join(f"'{wanted}'" for wanted in (scope, *others))
            raise Forbidden(f"This key lacks the {named} scope.")
        window = await quotas.admit(key)
        if window is not None:
            response.headers.update(window.headers())
        return key

    return check


Session = Annotated[AsyncSession, Depends(get_session)]
Registry = Annotated[ModelRegistry, Depends(get_registry)]
Factory = Annotated[PanelFactory, Depends(get_factory)]
AppSettings = Annotated[Settings, Depends(get_settings_dep)]
QuotasDep = Annotated[Quotas, Depends(get_quotas)]
ReadKey = Annotated[ApiKey, Depends(require_scope("read"))]
WriteKey = Annotated[ApiKey, Depends(require_scope("write"))]
AdminKey = Annotated[ApiKey, Depends(require_scope("admin"))]  # its own project's (any, for an operator)
OperatorKey = Annotated[ApiKey, Depends(require_scope(OPERATOR))]  # the instance's
ValidateKey = Annotated[ApiKey, Depends(require_scope(VALIDATE))]  # its project's validity records
REVIEW = "review"  # app.projects.keys.REVIEW: read and decide the project's review queue
ReviewKey = Annotated[ApiKey, Depends(require_scope(REVIEW))]
# Asking for a review: the backend that submitted the run (write) or a teacher (review)
RequestReviewKey = Annotated[ApiKey, Depends(require_scope("write", REVIEW))]
# What the teachers' decisions add up to (the review set, the judges' agreement with them)
ReviewReadKey = Annotated[ApiKey, Depends(require_scope("read", REVIEW))]
