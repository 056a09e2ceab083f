"""A stored run's context: its panel, policy, budget, guarantee and warrants, looked up once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.identity import Warrants
from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from app.access.budget import Budget
from app.access.metering import Meter, escalation_judges, run_budget
from app.db import short_session
from app.models import Run
from app.panels import build_context
from app.settings import Settings
from app.validity.guarantee import target_of, thresholds
from app.validity.records import run_warrants
from graphs.context import RunContext
from graphs.escalation import Guarantee, Stage
from graphs.scoring import ScoringPolicy, get_policy

if TYPE_CHECKING:  # the model client stack loads with the first model-backed panel, not here
    from agents.llm.client import ResponseCache


async def warrants_of(
    session: AsyncSession,
    settings: Settings,
    registry: ModelRegistry,
    judge_model: str,
    policy: ScoringPolicy,
    project_id: str,
) -> Warrants:
    """What ``judge_model``'s panel may cite in ``project_id``, by the model id its endpoint
    reports, and the bound a required warrant sets (an acceptance above it goes to review)."""
    return await run_warrants(
        session,
        registry,
        judge_model,
        policy,
        project_id,
        settings.warrant_requirement(),
        settings.specificity_floor,
    )


def stronger(settings: Settings, run: Run) -> list[str]:
    """The stronger panels the run's acceptances may escalate to (``THINKLOOP_ESCALATE_TO``)."""
    return [name for name in settings.escalate_to if name != run.judge_model]


async def run_context(
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    factory: PanelFactory,
    run: Run,
    cache: ResponseCache | None = None,
) -> RunContext:
    """What a stored run depends on: the panel its model names build, each round reserved against
    the daily caps before its calls (``app.access.budget``), and so each stronger panel's step when
    an acceptance escalates; its guarantee; the warrants its panel may cite."""
    policy = get_policy(run.policy, max_rounds=run.max_rounds)
    panel = factory.build(run.judge_model, run.model, cache)  # an unknown model fails before any lookup
    registry = factory.registry
    budget = await run_budget(sessions, settings, registry, run, stronger(settings, run))
    meter = Meter(budget=budget, tally=False) if budget is not None else None
    guarantee = await _guarantee(sessions, settings, factory, run, policy, cache, budget)
    async with short_session(sessions) as session:
        warrants = await warrants_of(session, settings, registry, run.judge_model, policy, run.project_id)
    return build_context(
        factory,
        run.judge_model,
        run.model,
        policy,
        cache=cache,
        meter=meter,
        warrants=warrants,
        guarantee=guarantee,
        panel=panel,
    )


async def _guarantee(
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    factory: PanelFactory,
    run: Run,
    policy: ScoringPolicy,
    cache: ResponseCache | None,
    budget: Budget | None,
) -> Guarantee | None:
    """The run's guarantee target with its panel's calibrated thresholds and the stronger panels
    it escalates to, each with its own, found by each panel's exact identity in the run's project
    (``app.validity.guarantee``), each stronger panel's calls reserved in the run's ``budget`` at
    its own model's prices; None without a target."""
    names = stronger(settings, run)
    registry = factory.registry
    async with short_session(sessions) as session:
        target = await target_of(session, run)
        if target is None:
            return None
        found = await thresholds(session, registry, run.project_id, [run.judge_model, *names], policy, target)
    stages = tuple(
        Stage(
            name,
            escalation_judges(budget, registry, name, factory.build(name, run.model, cache).judges),
            policy,
            found[name],
        )
        for name in names
    )
    return Guarantee(target.alpha, target.delta, found[run.judge_model], stages)
