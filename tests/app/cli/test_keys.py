"""`thinkloop projects`, `thinkloop keys create|list|revoke` and `thinkloop migrate` against a real
database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli

runner = CliRunner()


@pytest.fixture
def db_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'keys.db'}"
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", url)
    return url


async def _lookup(url: str, secret: str) -> list[str] | None:
    from app.access.signin import find_key
    from app.db import create_engine, session_factory

    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            key = await find_key(session, secret)
            assert key is None or key.key_hash != secret  # only the hash is stored
            return None if key is None else key.scopes
    finally:
        await engine.dispose()


def test_created_key_authenticates_until_revoked(db_env: str) -> None:
    created = runner.invoke(cli, ["keys", "create", "--name", "tutor-app", "--scope", "read"])
    assert created.exit_code == 0, created.output
    header, secret = created.output.strip().splitlines()
    key_id = header.split()[1]
    assert secret.startswith("tlk_") and "scopes read" in header
    assert asyncio.run(_lookup(db_env, secret)) == ["read"]
    assert runner.invoke(cli, ["keys", "revoke", key_id]).exit_code == 0
    assert asyncio.run(_lookup(db_env, secret)) is None


def test_an_operator_key_is_made_with_the_operator_flag(db_env: str) -> None:
    alone = runner.invoke(cli, ["keys", "create", "--name", "ops", "--operator"])
    assert alone.exit_code == 0, alone.output
    header, secret = alone.output.strip().splitlines()
    assert "scopes operator" in header and asyncio.run(_lookup(db_env, secret)) == ["operator"]
    both = runner.invoke(cli, ["keys", "create", "--name", "ops-app", "--operator", "--scope", "read"])
    assert asyncio.run(_lookup(db_env, both.output.strip().splitlines()[1])) == ["operator", "read"]


def test_bad_scope_and_unknown_key_are_refused(db_env: str) -> None:
    bad = runner.invoke(cli, ["keys", "create", "--name", "x", "--scope", "delete"])
    assert bad.exit_code == 2 and "scopes must be among read, write, validate, review, admin" in bad.output
    unknown = runner.invoke(cli, ["keys", "revoke", "tlk_nope"])
    assert unknown.exit_code == 2 and "no API key" in unknown.output


def test_migrate_command(db_env: str) -> None:
    result = runner.invoke(cli, ["migrate"])
    assert result.exit_code == 0 and "database at head" in result.output


def test_keys_of_a_project_with_an_expiry_are_listed_without_secrets(db_env: str) -> None:
    made = runner.invoke(cli, ["projects", "create", "school-west"])
    assert made.exit_code == 0, made.output
    project_id, name = made.output.strip().split("\t")
    assert name == "school-west"
    again = runner.invoke(cli, ["projects", "create", "school-west"])
    assert again.exit_code == 2 and "already a project named 'school-west'" in again.output
    listed = runner.invoke(cli, ["projects", "list"]).output
    assert "default" in listed and f"{project_id}\tschool-west" in listed

    created = runner.invoke(
        cli, ["keys", "create", "--name", "tutor", "--project", "school-west", "--expires-in-days", "7"]
    )
    assert created.exit_code == 0, created.output
    header, secret = created.output.strip().splitlines()
    assert f"project {project_id}" in header and "expires" in header
    assert asyncio.run(_lookup(db_env, secret)) == ["read", "write"]

    table = runner.invoke(cli, ["keys", "list", "--project", "school-west"])
    assert table.exit_code == 0, table.output
    rows = table.output.strip().splitlines()[1:]
    assert len(rows) == 1 and rows[0].split("\t")[2:4] == [project_id, "tutor"] and secret not in table.output
    assert rows[0].split("\t")[6] != "-"  # last used: the lookup above
    nowhere = runner.invoke(cli, ["keys", "create", "--name", "x", "--project", "nope"])
    assert nowhere.exit_code == 2 and "there is no project 'nope'" in nowhere.output


async def _caps(url: str, name: str) -> tuple[int | None, float | None]:
    from app.db import create_engine, session_factory
    from app.projects.keys import find_project

    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            project = await find_project(session, name)
            return project.daily_tokens, project.daily_cost_usd
    finally:
        await engine.dispose()


def test_a_project_created_with_its_own_daily_caps(db_env: str) -> None:
    options = ["--daily-tokens", "5000", "--daily-cost-usd", "2.5"]
    made = runner.invoke(cli, ["projects", "create", "school-east", *options])
    assert made.exit_code == 0, made.output
    assert asyncio.run(_caps(db_env, "school-east")) == (5000, 2.5)
    assert runner.invoke(cli, ["projects", "create", "plain"]).exit_code == 0
    assert asyncio.run(_caps(db_env, "plain")) == (None, None)  # the global settings
    negative = runner.invoke(cli, ["projects", "create", "wrong", "--daily-tokens", "-1"])
    assert negative.exit_code == 2
    for value in ("nan", "inf"):  # NaN would compare false with every spend: the cap silently off
        refused = runner.invoke(cli, ["projects", "create", f"cap-{value}", "--daily-cost-usd", value])
        assert refused.exit_code != 0 and "error" in refused.output.lower(), refused.output


def test_purge_needs_an_age_and_deletes_nothing_young(db_env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("THINKLOOP_RETENTION_DAYS", raising=False)
    missing = runner.invoke(cli, ["purge"])
    assert missing.exit_code == 2 and "--older-than-days" in missing.output
    done = runner.invoke(cli, ["purge", "--older-than-days", "30"])
    assert done.exit_code == 0 and "deleted 0 run(s)" in done.output
