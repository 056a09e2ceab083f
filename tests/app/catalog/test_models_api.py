"""/v1/models and `thinkloop models check`: what each endpoint supports, probed, and the mode in use."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from typer.testing import CliRunner

from agents.simulator import SimulatorServer
from app.cli import cli
from app.db import migrate
from app.main import create_app
from tests.helpers.service import Service, assert_problem, seed_keys, service_settings

runner = CliRunner()


async def test_models_are_listed_with_their_mode(service: Service) -> None:
    body = (await service.client.get("/v1/models", headers=service.keys.auth("read"))).json()
    models = {m["name"]: m for m in body["items"]}
    assert models["rubric"]["offline"] is True and models["rubric"]["mode"] is None
    assert models["sim"]["mode"] == "json_schema" and models["sim"]["capabilities"] is None
    assert models["sim"]["endpoint"].startswith("127.0.0.1:") and models["sim"]["model"] == "sim-1"


async def test_a_check_probes_the_endpoint_and_the_mode_follows(
    service: Service, simulator_server: SimulatorServer
) -> None:
    update = {"profile": "tgi"}
    simulator_server.state.configure(simulator_server.state.config.model_copy(update=update))
    checked = await service.client.post("/v1/models/sim/check", headers=service.keys.auth("operator"))
    assert checked.status_code == 200, checked.text
    found = checked.json()
    caps = found["capabilities"]
    assert caps["json_schema"] == "refused (HTTP 422)" and caps["tools"] == "supported"
    assert caps["reasoning"] == "<think> tag in the content" and caps["mode"] == "tool_calling"
    assert found["mode"] == "tool_calling" and "probed by models check" in found["learned"][0]
    listed = (await service.client.get("/v1/models", headers=service.keys.auth("read"))).json()
    assert next(m for m in listed["items"] if m["name"] == "sim")["capabilities"] == caps


async def test_check_errors(service: Service) -> None:
    admin = service.keys.auth("operator")
    assert_problem(await service.client.post("/v1/models/rubric/check", headers=admin), 422)
    assert_problem(await service.client.post("/v1/models/nope/check", headers=admin), 404)


async def test_a_model_whose_name_holds_a_slash_can_be_checked(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    """Registry names are the operator's; "org/model" is a common one. The Python client sends the
    name as one escaped path segment, which the server receives decoded."""
    await migrate(database_url)
    keys = await seed_keys(database_url)
    entry = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 5, "max_retries": 1}
    settings = service_settings(database_url, simulator_server, models={"team/sim": entry})
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            path = f"/v1/models/{quote('team/sim', safe='')}/check"
            checked = await http.post(path, headers=keys.auth("operator"))
            missing = await http.post("/v1/models/team%2Fnope/check", headers=keys.auth("operator"))
    assert checked.status_code == 200, checked.text
    assert checked.json()["name"] == "team/sim" and checked.json()["capabilities"] is not None
    assert_problem(missing, 404)


@pytest.mark.parametrize("key", ["read", "write", "both", "other", "admin"])
async def test_only_an_operator_key_may_check_a_model_for_every_project(
    service: Service, simulator_server: SimulatorServer, key: str
) -> None:
    before = len(simulator_server.state.requests)
    refused = await service.client.post("/v1/models/sim/check", headers=service.keys.auth(key))
    assert_problem(refused, 403)
    assert "operator" in refused.json()["detail"]
    assert len(simulator_server.state.requests) == before  # nothing was probed
    listed = (await service.client.get("/v1/models", headers=service.keys.auth("read"))).json()
    assert next(m for m in listed["items"] if m["name"] == "sim")["capabilities"] is None


def _registry(tmp_path: Path, simulator_server: SimulatorServer) -> Path:
    config = tmp_path / "models.toml"
    config.write_text(f'[models.local]\nmodel = "m"\nbase_url = "{simulator_server.base_url}"\n')
    return config


def test_models_check_prints_what_works(tmp_path: Path, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"profile": "vllm"}))
    result = runner.invoke(
        cli, ["models", "check", "local", "--models-file", str(_registry(tmp_path, simulator_server))]
    )
    assert result.exit_code == 0, result.output
    assert (
        "json_schema      supported" in result.output
        and "reasoning        field `reasoning`" in result.output
    )
    assert "thinkloop will ask for JSON with a strict JSON schema" in result.output


def test_models_check_json_for_an_endpoint_that_ignores_json_schema(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"profile": "anthropic"})
    )
    args = ["models", "check", "local", "--json", "--models-file", str(_registry(tmp_path, simulator_server))]
    found = json.loads(runner.invoke(cli, args).output)
    assert found["json_schema"] == "ignored (answered in prose)" and found["mode"] == "tool_calling"


def test_models_check_refuses_the_offline_panel_and_unknown_names() -> None:
    assert runner.invoke(cli, ["models", "check", "rubric"]).exit_code == 2
    result = runner.invoke(cli, ["models", "check", "nope"])
    assert result.exit_code == 2 and "unknown model 'nope'" in result.output


def test_models_check_of_an_unreachable_endpoint_exits_1(tmp_path: Path) -> None:
    config = tmp_path / "models.toml"
    config.write_text('[models.down]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\nmax_retries = 0\n')
    result = runner.invoke(cli, ["models", "check", "down", "--models-file", str(config)])
    assert result.exit_code == 1 and "failed (APIConnectionError" in result.output


def test_models_check_prints_the_servers_slots_and_the_bounds(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"slots": 4}))
    result = runner.invoke(
        cli, ["models", "check", "local", "--models-file", str(_registry(tmp_path, simulator_server))]
    )
    assert result.exit_code == 0, result.output
    assert "server slots     4 (GET /props); at most 4 calls at once" in result.output
    assert "max_tokens       judge 1000, solver 500, reviser 2000, probe 64" in result.output
    bounds = [r.body.get("max_completion_tokens") for r in simulator_server.state.requests]
    # Every probe request is bounded; the last reads the longest judge prompt for the prompt rate.
    assert bounds == [64, 64, 64, 1]
