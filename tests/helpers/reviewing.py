"""Helpers of the review-queue tests: keys of any scope, problems the simulator's panel ends
needs_review or accepts, and the calls a teacher makes."""

from __future__ import annotations

from typing import Any

from sqlmodel import select

from app.db import create_engine, session_factory, short_session
from app.models import DEFAULT_PROJECT, Project
from app.projects.keys import create_key, create_project
from tests.helpers.service import Service

SIM = {"model": "sim", "judge_model": "sim", "max_rounds": 1}


def sound(n: int) -> dict[str, str]:
    """A sound problem (every step checked): the simulator's passing panel accepts it."""
    bags, apples = 3 + n % 7, 4 + n % 5
    return {
        "question": f"Tom has {bags} bags with {apples} apples in each bag. How many apples does Tom have?",
        "solution": f"{bags} × {apples} = {bags * apples}, so Tom has {bags * apples} apples.",
    }


def unread(n: int) -> dict[str, str]:
    """A problem whose answer rests on a relation to a count never given: a passing model panel's
    acceptance is held (needs_review), the step named as the cause."""
    shells = 20 + 2 * n
    return {
        "question": f"Lena and Omar collect shells on beach {n}. How many shells does Omar have?",
        "solution": f"Omar has twice as many as Lena, which is {shells} shells.",
    }


def corrected(n: int) -> dict[str, str]:
    """A teacher's correction of ``unread(n)``: Lena's count given, the step written out."""
    shells = 20 + 2 * n
    return {
        "question": f"Lena has {shells // 2} shells and Omar has 2 times as many. "
        "How many shells does Omar have?",
        "solution": f"2 × {shells // 2} = {shells}, so Omar has {shells} shells.",
    }


async def make_key(
    database_url: str, name: str, scopes: list[str], project: str | None = None, **settings: Any
) -> tuple[str, str]:
    """A new key's secret and project id: of ``project`` (made with ``settings`` when it does not
    exist; None: the default project)."""
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            owner = await _project(session, project)
            for field, value in settings.items():
                setattr(owner, field, value)
            made = await create_key(session, name, scopes, owner.id)
            return made.secret, owner.id
    finally:
        await engine.dispose()


async def _project(session: Any, name: str | None) -> Project:
    if name is None:
        found = await session.get(Project, DEFAULT_PROJECT)
        assert found is not None
        return found
    existing = (await session.execute(select(Project).where(Project.name == name))).scalars().first()
    if existing is not None:
        return existing
    made = await create_project(session, name)
    await session.flush()
    return made


def auth(secret: str) -> dict[str, str]:
    """Headers for a key's secret."""
    return {"Authorization": f"Bearer {secret}"}


async def submit(service: Service, secret: str, problem: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A run of ``problem`` on the simulator's panel, waited for: its trace."""
    body = {"problem": problem, "options": SIM} | extra
    response = await service.client.post("/v1/runs", json=body, params={"wait": "true"}, headers=auth(secret))
    assert response.status_code == 200, response.text
    trace: dict[str, Any] = response.json()
    return trace


async def queue(service: Service, secret: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of the key's project's queue (all pages), newest first."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = params | ({"cursor": cursor} if cursor else {}) | {"limit": 100}
        response = await service.client.get("/v1/reviews", params=query, headers=auth(secret))
        assert response.status_code == 200, response.text
        page = response.json()
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


async def decide(
    service: Service, secret: str, review_id: str, body: dict[str, Any], **headers: str
) -> dict[str, Any]:
    """Decide a review item: the recorded decision."""
    response = await service.client.post(
        f"/v1/reviews/{review_id}/decision", json=body, headers=auth(secret) | headers
    )
    assert response.status_code in (200, 201), response.text
    decided: dict[str, Any] = response.json()
    return decided
