"""POST /v1/judges/validate: the validity bench over HTTP, on the offline panel and an LLM judge."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agents.schemas import JUDGES
from agents.simulator.rules import Rule
from agents.simulator.server import SimulatorServer
from app.cli import cli
from app.db import migrate
from app.main import create_app
from app.validity.service import MAX_VERSIONS, builtin_set, size
from tests.helpers.service import Service, assert_problem, free_port, seed_keys, service_settings
from tests.helpers.validity import ITEMS, SHARES, assert_figures

PATH = "/v1/judges/validate"


async def post(service: Service, body: dict[str, Any], key: str = "both", **params: str) -> Any:
    return await service.client.post(PATH, json=body, params=params, headers=service.keys.auth(key))


@pytest.mark.slow  # a data sweep: every version of the shipped set
async def test_the_shipped_set_on_the_offline_panel(service: Service) -> None:
    response = await post(service, {"builtin": True, "split": "heldout"})
    assert response.status_code == 200, response.text
    report = response.json()
    heldout = [item for item in builtin_set() if item.split == "heldout"]
    assert report["judge_model"] == "rubric" and report["policy"] == "default" and report["twins"] is False
    assert report["items"] == len(heldout) and list(report["splits"]) == ["heldout", "all"]
    assert report["versions"] == sum(2 if item.corrected else 1 for item in heldout)
    assert report["targets"]["split"] == "heldout"
    assert report["complete"] is True and report["excluded"]["total"] == 0
    assert report["calls"] == {"total": 7 * report["versions"], "failed": 0, "abstained": 0}
    flawed = sum(item.kind == "flawed" for item in heldout)
    if flawed < 60:  # the shipped held-out part has more, but the claim follows the count either way
        assert report["targets"]["claimed"] is False
    assert_figures(report)


async def test_the_api_reports_what_the_cli_reports(service: Service, tmp_path: Path) -> None:
    tune = [item for item in builtin_set() if item.split == "tune"]
    subset = [i for i in tune if i.kind == "flawed"][:4] + [i for i in tune if i.kind == "control"][:2]
    lines = [item.model_dump_json(exclude_none=True) for item in subset]
    dataset = tmp_path / "subset.jsonl"
    dataset.write_text("\n".join(lines) + "\n")
    args = ["judges", "validate", "--dataset", str(dataset), "--split", "tune", "--twins", "--format", "json"]
    result = await asyncio.to_thread(CliRunner().invoke, cli, args)  # the CLI runs its own event loop
    assert result.exit_code == 0, result.output
    body = {"items": [json.loads(line) for line in lines], "split": "tune", "twins": True}
    response = await post(service, body)
    assert response.status_code == 200, response.text
    assert response.json() == json.loads(result.stdout)
    # a flawed item: itself, its corrected version, three stuffed and two or three hand-written twins
    assert response.json()["versions"] == size(subset, twins=True) >= 4 * 7 + 2 * 2


async def test_a_judge_that_passes_everything_accepts_every_flaw_and_twin(service: Service) -> None:
    # the simulator with no rules gives every score 90 (a pass) at confidence 80
    response = await post(service, {"items": ITEMS, "judge_model": "sim", "twins": True})
    assert response.status_code == 200, response.text
    report = response.json()
    summary = report["splits"]["all"]
    # 2/2 let through: Wilson 95 % 34.2–100 %; each flawed item has 5 twins (no "3/4 of" in them)
    assert summary["false_accept"] == {
        "n": 2,
        "count": 2,
        "rate": 1.0,
        "low": pytest.approx(0.3424, abs=1e-4),
        "high": 1.0,
        "excluded": 0,
    }
    assert summary["adversarial_gap"]["n"] == summary["adversarial_gap"]["count"] == 10
    assert summary["adversarial_gap"]["low"] == pytest.approx(0.7225, abs=1e-4)
    assert set(summary["twin_forms"]) == {
        "bloom-verbs",
        "variables-and-equation",
        "analysis-words",
        "wrong-variable",
        "note-to-reviewer",
    }
    assert summary["detection"]["count"] == 0 and summary["detection"]["n"] == 2
    assert summary["specificity"]["count"] == summary["specificity"]["n"] == 3
    assert summary["paraphrases_accepted"]["rate"] == 1.0
    assert summary["false_accepts"] == ["choir", "trays"] and not summary["refuses_every_sound"]
    assert report["complete"] is True and report["offline"] is False
    # a judge of the flaw's levels should fail 2 flawed versions and 10 twins, and pass 4 sound ones
    evaluate = summary["judges"]["evaluate"]
    assert evaluate["votes"] == 16 and evaluate["agreement"]["rate"] == pytest.approx(4 / 16)
    assert evaluate["reliability"] == [
        pytest.approx({"low": 0.8, "high": 0.9, "n": 16, "confidence": 0.8, "accuracy": 4 / 16})
    ]
    assert evaluate["ece"] == pytest.approx(0.8 - 4 / 16)
    # a judge of other levels is only asked to pass the sound versions, and does
    remember = summary["judges"]["remember"]
    assert remember["votes"] == 4 and remember["agreement"]["rate"] == 1.0
    assert remember["ece"] == pytest.approx(0.2)
    # two flawed problems, none held out: nothing is claimed about the targets
    assert report["targets"] == {
        "split": "all",
        "claimed": False,
        "reason": "targets are claimed on a held-out split only (this is 'all')",
        "met": dict.fromkeys(report["targets"]["met"]),
    }
    page = (await post(service, {"items": ITEMS, "judge_model": "sim", "twins": True}, format="md")).text
    assert "| false accepts (flawed, accepted) | 2/2 = 100.0 % (95 % CI 34.2–100.0 %) | " in page


async def test_the_report_says_what_the_votes_are_worth_and_warns_of_self_preference(
    service: Service,
) -> None:
    body = {"items": ITEMS, "judge_model": "sim", "model_under_test": "sim"}
    report = (await post(service, body)).json()
    worth = report["votes_worth"]
    # every judge passes everything: each errs on the two flawed versions alone, all together
    assert worth["split"] == "all" and worth["m"] == 7 and set(worth["judges"]) == set(JUDGES)
    assert len(worth["pairs"]) == 21 and worth["smallest_subset"]["size"] >= 1
    assert {(share["count"], share["n"]) for share in worth["judges"].values()} == {(2, 5)}
    assert worth["mean_phi"] == pytest.approx(1.0) and worth["n_eff"] == pytest.approx(1.0)
    assert report["self_preference"][0] == (
        "the judge model 'sim' is the model under test: it may prefer its own work"
    )


async def test_a_judge_that_fails_everything_is_named_and_detects_nothing(
    service: Service, simulator_server: SimulatorServer
) -> None:
    rules = [Rule(role="^Judge", score=20)]
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": rules}))
    report = (await post(service, {"items": ITEMS, "judge_model": "sim"})).json()
    summary = report["splits"]["all"]
    # refusing every flaw is not detecting it: the judges' words name none of the labelled evidence
    assert summary["refused_other"]["rate"] == 1.0 and summary["detection"]["count"] == 0
    assert summary["false_accept"]["rate"] == 0.0
    assert summary["specificity"]["count"] == 0 and summary["specificity"]["n"] == 3
    assert summary["refuses_every_sound"] is True
    page = (await post(service, {"items": ITEMS, "judge_model": "sim"}, format="md")).text
    assert "this panel refused every sound version (0/3): its detection says nothing" in page


async def test_a_judge_endpoint_where_nothing_listens_errs_every_version(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    """Every call is refused: no version is judged, no rate claims anything, the counts say why."""
    sim = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 5, "max_retries": 1}
    down = {"model": "m", "base_url": f"http://127.0.0.1:{free_port()}/v1", "max_retries": 0}
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, models={"sim": sim, "down": down}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            service = Service(app, client, keys)
            response = await post(service, {"items": ITEMS, "judge_model": "down"})
            page = (await post(service, {"items": ITEMS, "judge_model": "down"}, format="md")).text
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["complete"] is False and report["judged"] == 0 and report["versions"] == 5
    assert report["excluded"]["total"] == report["excluded"]["errored"] == 5
    assert report["calls"] == {"total": 35, "failed": 35, "abstained": 0}
    summary = report["splits"]["all"]
    for name in SHARES:
        assert summary[name]["n"] == 0 and summary[name]["rate"] is None
    assert summary["detection"]["excluded"] == 2 and summary["specificity"]["excluded"] == 3
    assert not summary["refuses_every_sound"] and summary["false_accepts"] == []
    assert report["targets"]["claimed"] is False and set(report["targets"]["met"].values()) == {None}
    assert "**INCOMPLETE: 5 of 5 versions did not end in the panel's verdict" in page
    assert "| false accepts (flawed, accepted) | 0/0: nothing judged; 2 excluded |" in page


async def test_markdown_and_html_with_a_reliability_diagram_per_split(service: Service) -> None:
    body = {"items": ITEMS, "twins": True}
    report = (await post(service, body)).json()
    markdown = await post(service, body, format="md")
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text.startswith("# Judge validity: `rubric`")
    page = await post(service, body, format="html")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.text.count("<svg") == len(report["splits"]) == 2
    for split, summary in report["splits"].items():
        for judge in JUDGES:
            bins = summary["judges"][judge]["reliability"]
            drawn = re.findall(rf'id="reliability-{split}-{judge}-bin-([0-9.]+)"', page.text)
            assert drawn == [f"{row['low']:.1f}" for row in bins]  # one bar per non-empty bin
            ece = summary["judges"][judge]["ece"]
            assert f"{judge}: {'no votes' if ece is None else f'ECE {ece:.3f}'}" in page.text
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page.text, re.S)
    assert len(captions) == 2 and all("Expected calibration error (ECE" in c for c in captions)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "send one of items, builtin: true or review_set: true"),
        ({"builtin": True, "items": ITEMS}, "send one of items, builtin: true or review_set: true"),
        ({"items": []}, "at least 1 item"),
        ({"items": [{**ITEMS[0], "flaws": []}]}, "a flawed item needs at least one flaw"),
        ({"items": [{**ITEMS[0], "question": "  "}]}, "at least 1 character"),
        (
            {"items": [{**ITEMS[0], "flaws": [{"type": "typo", "levels": ["apply"], "evidence": "x"}]}]},
            "type",
        ),
        ({"builtin": True, "split": "train"}, "'tune', 'heldout' or 'all'"),
        ({"builtin": True, "policy": "lenient"}, "'default' or 'think-paper'"),
    ],
)
async def test_invalid_bodies_are_422_with_the_field(
    service: Service, body: dict[str, Any], fragment: str
) -> None:
    problem = assert_problem(await post(service, body), 422)
    assert fragment in json.dumps(problem["errors"])


async def test_duplicate_ids_an_empty_split_and_an_unknown_judge_are_422(service: Service) -> None:
    twice = assert_problem(await post(service, {"items": [ITEMS[0], ITEMS[0]]}), 422)
    assert twice["detail"] == "items: item ids are not unique (choir)"
    empty = assert_problem(await post(service, {"items": ITEMS, "split": "heldout"}), 422)
    assert empty["detail"] == "items: no items in the heldout split"
    unknown = assert_problem(await post(service, {"items": ITEMS, "judge_model": "gpt-9"}), 422)
    assert "gpt-9" in str(unknown["detail"]) and unknown["known_models"] == ["rubric", "sim"]


async def test_too_many_versions_is_422_before_any_judging(service: Service) -> None:
    many = [{**ITEMS[0], "id": f"i{n}", "corrected": None} for n in range(MAX_VERSIONS // 4 + 1)]
    problem = assert_problem(await post(service, {"items": many, "twins": True}), 422)
    # each: itself, three stuffed and two hand-written twins (no "3/4 of" in the choir)
    assert problem["versions"] == 6 * len(many) > MAX_VERSIONS and problem["max_versions"] == MAX_VERSIONS
    assert f"at most {MAX_VERSIONS}" in str(problem["detail"])
    fits = await post(service, {"items": many[:2], "twins": True})  # the same items, fewer, are judged
    assert fits.status_code == 200 and fits.json()["versions"] == 12


async def test_a_body_over_the_route_limit_is_413(service: Service) -> None:
    huge = b'{"items": [' + b" " * (4 * 1024 * 1024) + b"]}"
    response = await service.client.post(
        PATH, content=huge, headers=service.keys.auth() | {"Content-Type": "application/json"}
    )
    assert_problem(response, 413)


@pytest.mark.parametrize(("key", "status"), [(None, 401), ("read", 403), ("revoked", 401)])
async def test_judging_needs_the_write_scope(service: Service, key: str | None, status: int) -> None:
    headers = service.keys.auth(key) if key else {}
    assert_problem(await service.client.post(PATH, json={"builtin": True}, headers=headers), status)
