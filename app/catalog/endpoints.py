"""/v1/models: the usable models, how each endpoint is spoken to, and a probe of its capabilities."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from agents.llm.client import endpoint_host
from agents.llm.models import OFFLINE_MODEL, ModelConfigError, UnknownModelError
from agents.panel import PanelFactory
from app.access.usage import charge_owner
from app.catalog.schemas import Capabilities, ModelList, ModelPublic
from app.deps import Factory, OperatorKey, QuotasDep, ReadKey, Session
from app.errors import NotFound, Unprocessable, problem_responses

router = APIRouter(prefix="/v1/models", tags=["models"])
ModelName = Annotated[str, Path(description="A model name, as GET /v1/models lists them")]
_ERRORS = problem_responses(
    {
        403: "The key lacks the scope",
        404: "No such model",
        422: "The model has no endpoint to check",
        429: "The key's project is at a daily token or cost cap",
    }
)


def _public(factory: PanelFactory, name: str) -> ModelPublic:
    spec = factory.registry.get(name)
    if spec is None:
        return ModelPublic(
            name=name,
            offline=True,
            model=None,
            endpoint=None,
            mode=None,
            learned=[],
            reasoning=None,
            capabilities=None,
        )
    client = factory.client(name)
    found = factory.capabilities.get(name)
    return ModelPublic(
        name=name,
        offline=False,
        model=spec.model,
        endpoint=endpoint_host(spec.base_url),
        provider=spec.provider,
        mode=client.mode if client else spec.structured_output,
        learned=list(client.learned) if client else [],
        reasoning=spec.reasoning,
        capabilities=Capabilities.model_validate(found.as_dict()) if found else None,
    )


@router.get("", response_model=ModelList, responses=_ERRORS)
async def list_models(factory: Factory, _: ReadKey) -> ModelList:
    """Every usable model name, with how it is spoken to and its last checked capabilities."""
    try:
        return ModelList(items=[_public(factory, name) for name in factory.registry.names()])
    except ModelConfigError as exc:
        raise Unprocessable(str(exc)) from exc


# ":path": a registry name may hold "/" (a provider's "org/model"); its %2F arrives decoded
@router.post("/{name:path}/check", response_model=ModelPublic, responses=_ERRORS)
async def check_model(
    name: ModelName, factory: Factory, key: OperatorKey, session: Session, quotas: QuotasDep
) -> ModelPublic:
    """Probe the endpoint once per capability (a few tiny requests, billed by the provider) and use
    what works from now on, for every project: so an **operator** key's to call. Model calls like a
    run's: 429 before any when the key's project or the key is at a daily cap, and what the probe's
    requests reported spending is charged to the key's project and the key."""
    if name == OFFLINE_MODEL:
        raise Unprocessable("The offline panel has no endpoint to check.")
    await quotas.check_daily(session, key)
    try:
        found = await factory.check(name)
        await charge_owner(session, key.project_id, key.id, [found.usage])
        return _public(factory, name)
    except UnknownModelError as exc:
        raise NotFound(f"There is no model {name!r}.") from exc
    except ModelConfigError as exc:
        raise Unprocessable(str(exc)) from exc
