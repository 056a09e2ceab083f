"""GET /v1/batches/{id}/items/export and /manifest: per-item rows with the batch's manifest, scoped
to the caller's project."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from agents.schemas import JUDGES
from agents.simulator import SimulatorServer
from app.reporting import figures
from tests.helpers.batches import settle, start
from tests.helpers.service import Service, assert_problem


async def test_items_export_as_parquet_jsonl_and_csv_carries_the_manifest(service: Service) -> None:
    batch = await start(service, control_arm=True)
    await settle(service, batch["id"])
    url = f"/v1/batches/{batch['id']}/items/export"
    read = service.keys.auth("read")

    parquet = await service.client.get(url, params={"format": "parquet"}, headers=read)
    assert parquet.status_code == 200 and parquet.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(parquet.content))
    frame = table.to_pandas()
    assert len(frame) == 24 and set(frame["arm"]) == {"loop", "control"} and set(frame["model"]) == {"sim"}
    assert {f"score_{judge}" for judge in JUDGES} <= set(frame.columns)
    assert all(frame["trace"] == "/v1/runs/" + frame["run_id"])
    manifest = json.loads(table.schema.metadata[b"thinkloop.manifest"])
    assert manifest["batch_id"] == batch["id"] and manifest["recorded"] is True
    (sim,) = manifest["models"]
    assert sim["provider_model_id"] == "sim-1" and sim["roles"] == ["under_test", "judge"]
    assert sim["endpoint_host"].startswith("127.0.0.1:") and sim["temperature"] == 0.0
    assert len(manifest["dataset"]["content_hash"]) == 64 and manifest["dataset"]["problems"] == 12

    jsonl = await service.client.get(url, params={"format": "jsonl"}, headers=read)
    first, *rows = [json.loads(line) for line in jsonl.text.splitlines()]
    assert first["manifest"]["dataset"] == manifest["dataset"] and len(rows) == 24
    assert [r["item_id"] for r in rows] == sorted(frame["item_id"])

    text = await service.client.get(url, params={"format": "csv"}, headers=read)
    assert len(list(csv.DictReader(io.StringIO(text.text)))) == 24
    described = text.headers["link"].split(";")[0].strip("<>")
    assert described == f"/v1/batches/{batch['id']}/manifest"
    again = (await service.client.get(described, headers=read)).json()
    assert again["dataset"] == manifest["dataset"] and again["prompts"] == manifest["prompts"]


async def test_another_projects_batch_is_not_found_and_a_bad_format_is_a_problem(service: Service) -> None:
    batch = await start(service)
    url = f"/v1/batches/{batch['id']}"
    for path in (f"{url}/items/export", f"{url}/manifest"):
        assert_problem(await service.client.get(path, headers=service.keys.auth("other")), 404)
    bad = await service.client.get(
        f"{url}/items/export", params={"format": "xlsx"}, headers=service.keys.auth("read")
    )
    assert_problem(bad, 422)
    await settle(service, batch["id"])


async def test_the_report_json_carries_the_manifest(service: Service) -> None:
    batch = await start(service)
    await settle(service, batch["id"])
    report = (
        await service.client.get(f"/v1/batches/{batch['id']}/report", headers=service.keys.auth("read"))
    ).json()
    manifest = report["manifest"]
    assert manifest["thinkloop"]["version"] and manifest["policy"]["parameters"]["max_rounds"] == 3
    assert set(manifest["prompts"]) >= {"reviser", "judge_holistic"}
    assert manifest["times"]["first_item_started_at"] <= manifest["times"]["finished_at"]
    exported = await service.client.get(
        f"/v1/batches/{batch['id']}/items/export", headers=service.keys.auth("read")
    )
    hits = [json.loads(line)["cache_hits"] for line in exported.text.splitlines()[1:]]
    listed = await service.client.get(f"/v1/batches/{batch['id']}/items", headers=service.keys.auth("read"))
    assert sorted(i["cache_hits"] for i in listed.json()["items"]) == sorted(hits)  # marked per item
    # the same judged version reached by several items is answered from the cache after the first
    assert manifest["cache"] == {
        "enabled": True,
        "hits": sum(hits),
        "items_with_hits": sum(1 for h in hits if h),
    }
    page = (
        await service.client.get(
            f"/v1/batches/{batch['id']}/report", params={"format": "md"}, headers=service.keys.auth("read")
        )
    ).text
    assert "## Manifest" in page and "sim-1 @ 127.0.0.1:" in page
    csv = await service.client.get(
        f"/v1/batches/{batch['id']}/report", params={"format": "csv"}, headers=service.keys.auth("read")
    )
    link = csv.headers["link"]
    assert link == f'</v1/batches/{batch["id"]}/manifest>; rel="describedby"'
    linked = await service.client.get(link[1 : link.index(">")], headers=service.keys.auth("read"))
    assert linked.json() == manifest


async def test_figures_are_served_as_svg_and_png_naming_their_batch(service: Service) -> None:
    batch = await start(service, control_arm=True)
    await settle(service, batch["id"])
    url, read = f"/v1/batches/{batch['id']}/figures", service.keys.auth("read")
    svg = await service.client.get(f"{url}/comparison", headers=read)
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert svg.headers["content-security-policy"].startswith("default-src 'none'")
    assert svg.text.lstrip().startswith("<?xml") and batch["id"] in svg.text and "<script" not in svg.text
    png = await service.client.get(f"{url}/paired", params={"format": "png"}, headers=read)
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert_problem(await service.client.get(f"{url}/pie", headers=read), 422)
    assert_problem(await service.client.get(f"{url}/levels", headers=service.keys.auth("other")), 404)
    # Without a control arm there is nothing to pair: that figure has no data, and says why.
    alone = await start(service)
    await settle(service, alone["id"])
    missing = await service.client.get(f"/v1/batches/{alone['id']}/figures/paired", headers=read)
    assert_problem(missing, 404)
    assert "no control arm" in missing.json()["detail"]


async def test_two_sides_of_any_batches_compare_as_the_report_does(service: Service) -> None:
    """GET /v1/batches/{id}/compare pairs a model and arm with another, of this batch or another:
    within one batch it gives the report's own numbers (McNemar, BCa interval, Wilcoxon)."""
    first = await start(service, control_arm=True)
    second = await start(service)
    await settle(service, first["id"])
    await settle(service, second["id"])
    read = service.keys.auth("read")
    url = f"/v1/batches/{first['id']}/compare"
    within = await service.client.get(
        url, params={"model": "sim", "with_model": "sim", "with_arm": "control"}, headers=read
    )
    assert within.status_code == 200, within.text
    report = (await service.client.get(f"/v1/batches/{first['id']}/report", headers=read)).json()
    [row] = [c for c in report["comparisons"] if c["kind"] == "loop_vs_control"]
    got = within.json()
    assert got["problems"] == row["problems"] > 0 and got["pairs"] == row["pairs"]
    for field in (
        "pass_rate_a",
        "pass_rate_b",
        "a_only",
        "b_only",
        "mcnemar_p",
        "delta_avg_quality",
        "delta_p",
    ):
        assert got[field] == row[field], field
    assert got["delta_ci95"] == row["delta_ci95"]
    across = await service.client.get(
        url, params={"model": "sim", "with_batch": second["id"], "with_model": "sim"}, headers=read
    )
    assert across.status_code == 200, across.text
    pair = across.json()
    assert pair["a"] == f"{first['id']} · sim/loop" and pair["b"] == f"{second['id']} · sim/loop"
    assert pair["problems"] == row["problems"]  # the same dataset's problems, scored in both batches
    refused = {
        "unknown model": ({"model": "gpt-9", "with_model": "sim"}, 422),
        "no control arm": (
            {"model": "sim", "with_batch": second["id"], "with_model": "sim", "with_arm": "control"},
            422,
        ),
        "no such batch": ({"model": "sim", "with_batch": "nope", "with_model": "sim"}, 404),
        "bad arm": ({"model": "sim", "with_model": "sim", "arm": "both"}, 422),
    }
    for why, (params, code) in refused.items():
        response = await service.client.get(url, params=params, headers=read)
        assert response.status_code == code, why
        assert_problem(response, code)
    other = await service.client.get(
        url, params={"model": "sim", "with_model": "sim"}, headers=service.keys.auth("other")
    )
    assert_problem(other, 404)


async def test_a_figure_is_rendered_once_per_state_of_its_batch(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The viewer's figures, or a page reloaded, draw each figure once: the route keeps what it
    rendered (counted here, not timed), and a figure without data is answered from the cache too."""
    batch = await start(service)
    await settle(service, batch["id"])
    drawn: list[tuple[str, str]] = []
    real = figures.render

    def counting(report: dict[str, Any], name: str, fmt: str) -> bytes | None:
        drawn.append((name, fmt))
        return real(report, name, fmt)

    monkeypatch.setattr(figures, "render", counting)
    url, read = f"/v1/batches/{batch['id']}/figures", service.keys.auth("read")
    first = [await service.client.get(f"{url}/{name}", headers=read) for name in figures.FIGURES]
    again = [await service.client.get(f"{url}/{name}", headers=read) for name in figures.FIGURES]
    assert [r.status_code for r in first] == [r.status_code for r in again]
    assert [r.content for r in first] == [r.content for r in again]
    png = [await service.client.get(f"{url}/levels", params={"format": "png"}, headers=read) for _ in "ab"]
    assert png[0].content == png[1].content
    assert sorted(drawn) == sorted([*((name, "svg") for name in figures.FIGURES), ("levels", "png")])


async def test_the_manifest_names_the_model_the_endpoint_reported_and_its_system_fingerprint(
    service: Service, simulator_server: SimulatorServer
) -> None:
    state = simulator_server.state
    served = {"reported_model": "sim-1-q4", "system_fingerprint": "fp_sim_b7"}
    state.configure(state.config.model_copy(update={"profile_overrides": served}))
    batch = await start(service)
    await settle(service, batch["id"])
    read = service.keys.auth("read")
    manifest = (await service.client.get(f"/v1/batches/{batch['id']}/manifest", headers=read)).json()
    (sim,) = manifest["models"]
    assert sim["provider_model_id"] == "sim-1"  # what was asked for, beside what answered
    assert sim["reported_model_ids"] == ["sim-1-q4"] and sim["system_fingerprints"] == ["fp_sim_b7"]
    report = (await service.client.get(f"/v1/batches/{batch['id']}/report", headers=read)).json()
    assert report["manifest"]["models"] == manifest["models"]
    markdown = await service.client.get(
        f"/v1/batches/{batch['id']}/report", params={"format": "md"}, headers=read
    )
    assert "the endpoint reported model sim-1-q4; system_fingerprint fp_sim_b7" in markdown.text
    exported = await service.client.get(f"/v1/batches/{batch['id']}/items/export", headers=read)
    assert json.loads(exported.text.splitlines()[0])["manifest"]["models"] == manifest["models"]


async def test_a_server_that_sends_no_fingerprint_adds_none_to_the_manifest(service: Service) -> None:
    batch = await start(service)
    await settle(service, batch["id"])
    read = service.keys.auth("read")
    manifest = (await service.client.get(f"/v1/batches/{batch['id']}/manifest", headers=read)).json()
    (sim,) = manifest["models"]
    assert sim["reported_model_ids"] == ["sim-1"] and "system_fingerprints" not in sim
