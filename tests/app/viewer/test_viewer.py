"""The browser viewer at ``/``, in a real Chromium (Debian's package) driven by Playwright: pages load,
a live run fills in as it goes, a comparison renders, the key travels only as a Bearer header, and
every control is labelled, reachable by keyboard and readable.

Screenshots go to THINKLOOP_SCREENSHOTS (``docs/screenshots`` refreshes the README's), or else to
the session's temporary directory. Every wait is for a condition, with a generous bound."""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse
from playwright.async_api import Browser, ConsoleMessage, Locator, Page, expect

from agents.simulator import Rule, SimulatorServer
from app.db import create_engine, migrate, session_factory
from app.main import create_app
from tests.helpers.browser import WAIT_MS
from tests.helpers.calibrated import calibrated_record, store
from tests.helpers.paths import SAMPLES
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Keys, LiveServer, seed_keys, service_settings

pytestmark = pytest.mark.slow

DATASET = SAMPLES / "datasets" / "flawed-problems.jsonl"
SCORE_AND_REVISE = [Rule(role="^Judge", score=40, times=7)]  # round 1 fails, the model revises, round 2
FIGURES = ("comparison", "levels", "rounds", "agreement", "flaws", "paired")  # app.reporting.figures


@pytest.fixture
async def server(tmp_path: Path, simulator_server: SimulatorServer) -> AsyncIterator[tuple[LiveServer, Keys]]:
    """The API and the viewer on a real uvicorn server (SQLite), the simulator as model 'sim'."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'viewer.db'}"
    await migrate(url)
    keys = await seed_keys(url)
    # A long timeout: the live-run test holds every model call while a busy machine opens the page.
    sim = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 120, "max_retries": 1}
    settings = service_settings(url, simulator_server, models={"sim": sim})
    with LiveServer(create_app(settings)) as live:
        yield live, keys


async def new_page(browser: Browser, key: str | None = None) -> Page:
    """A page (whose tab already holds ``key``, as after signing in); a script error fails the test."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    if key:
        await context.add_init_script(f"sessionStorage.setItem('thinkloop.key', {json.dumps(key)})")
    page = await context.new_page()
    page.on("pageerror", lambda error: SCRIPT_ERRORS.append(str(error)))
    page.on("console", lambda m: SCRIPT_ERRORS.append(m.text) if _unexpected(m) else None)
    return page


SCRIPT_ERRORS: list[str] = []


def _unexpected(message: ConsoleMessage) -> bool:
    """An error in the console, but for the 401 that a refused key is meant to get, and the 404 of a
    figure the batch has no data for (the page says so in its place)."""
    if message.type != "error" or "401" in message.text:
        return False
    return not ("404" in message.text and "/figures/" in message.location.get("url", ""))


@pytest.fixture(autouse=True)
def _no_script_errors() -> Iterator[None]:
    """No test passes with an uncaught error or an error in the console of its pages."""
    SCRIPT_ERRORS.clear()
    yield
    assert SCRIPT_ERRORS == []


async def screenshot(page: Page, top: Locator, path: Path) -> None:
    """The view from ``top`` down, as it is shown (nothing hidden first: a view's focused heading
    has no ring, see test_every_view_fits_the_window_and_shows_focus_only_for_the_keyboard)."""
    await top.evaluate("e => e.scrollIntoView({block: 'start'})")
    await page.screenshot(path=path)


def api(server: LiveServer, keys: Keys) -> httpx.AsyncClient:
    """A client of the API with a read-write key."""
    return httpx.AsyncClient(base_url=server.url, headers=keys.auth(), timeout=60)


async def finished_batch(client: httpx.AsyncClient, dataset_id: str, models: list[str]) -> str:
    """Start a batch and follow its progress stream to ``batch.finished`` (a condition, not a time)."""
    started = await client.post(
        "/v1/batches", json={"dataset_id": dataset_id, "models": models, "max_rounds": 2}
    )
    assert started.status_code == 202, started.text
    batch_id: str = started.json()["id"]
    async with aconnect_sse(client, "GET", f"/v1/batches/{batch_id}/events") as source:
        kinds = [sse.event async for sse in source.aiter_sse() if sse.data]
    assert kinds[-1] == "batch.finished", kinds
    return batch_id


async def disagreements(
    live: LiveServer, keys: Keys, a: tuple[str, str], b: tuple[str, str]
) -> dict[str, Any]:
    """From the items API, what the comparison of two (batch, model) sides must show: the problems
    both scored, each side's pass rate, who passed alone, the mean paired difference of final Q (its
    interval and test from the compare endpoint), and the problems where one passed alone (one repeat
    each: a problem passes when its item did)."""
    sides: list[dict[str, dict[str, Any]]] = []
    async with api(live, keys) as client:
        for batch_id, model in (a, b):
            items = (await client.get(f"/v1/batches/{batch_id}/items", params={"limit": 500})).json()["items"]
            ended = ("accepted", "screened", "exhausted")
            scored = [i for i in items if i["model"] == model and i["outcome"] in ended]
            sides.append({i["problem_id"]: i for i in scored})
        # the paired mean's BCa interval and Wilcoxon p come from the server, as the report's do
        params = {"model": a[1], "with_batch": b[0], "with_model": b[1]}
        stats = (await client.get(f"/v1/batches/{a[0]}/compare", params=params)).json()
    shared = [p for p in sides[0] if p in sides[1]]  # in side A's order, as the page pairs them
    passed = [{p: side[p]["outcome"] in ("accepted", "screened") for p in shared} for side in sides]
    deltas = [
        sides[0][p]["final_quality"] - sides[1][p]["final_quality"]
        for p in shared
        if sides[0][p]["final_quality"] is not None and sides[1][p]["final_quality"] is not None
    ]
    a_only = sum(passed[0][p] and not passed[1][p] for p in shared)
    b_only = sum(passed[1][p] and not passed[0][p] for p in shared)
    discordant = a_only + b_only  # the exact two-sided McNemar test: binomial on the discordant pairs
    tail = sum(math.comb(discordant, i) for i in range(min(a_only, b_only) + 1)) / 2**discordant
    return {
        "problems": len(shared),
        "mcnemar": f"{min(1.0, 2 * tail):.3f}" if shared else "—",
        "pass_a": f"{100 * sum(passed[0].values()) / len(shared):.1f}%" if shared else "—",
        "pass_b": f"{100 * sum(passed[1].values()) / len(shared):.1f}%" if shared else "—",
        "only": f"{a_only} / {b_only}",
        "delta": f"{sum(deltas) / len(deltas):.3f}" if deltas else "—",
        "ci": f"{stats['delta_ci95'][0]:.3f}–{stats['delta_ci95'][1]:.3f}" if stats["delta_ci95"] else "—",
        "wilcoxon": f"{stats['delta_p']:.3f}" if stats["delta_p"] is not None else "—",
        "problem_ids": [p for p in shared if passed[0][p] != passed[1][p]],
    }


async def expect_comparison(page: Page, expected: dict[str, Any]) -> None:
    """The comparison's summary row holds the paired numbers, and its list of disagreements names
    exactly the problems where one side passed alone."""
    cells = page.get_by_role("table", name="(A) against").locator("tbody td")
    numbers = ["problems", "pass_a", "pass_b", "only", "mcnemar", "delta", "ci", "wilcoxon"]
    await expect(cells).to_have_text([str(expected[n]) for n in numbers], timeout=WAIT_MS)
    if not expected["problem_ids"]:
        await expect(page.get_by_text("They agree on every shared problem.")).to_be_visible()
        return
    disagreeing = page.get_by_role("table", name="where one side passed")
    await expect(disagreeing.locator("tbody tr")).to_have_count(len(expected["problem_ids"]))
    shown = await disagreeing.locator("[data-question]").evaluate_all("es => es.map(e => e.dataset.question)")
    assert sorted(shown) == sorted(expected["problem_ids"])


async def upload(client: httpx.AsyncClient, rows: int = 5) -> str:
    """The first rows of the bundled flawed problems as a dataset."""
    body = "\n".join(DATASET.read_text(encoding="utf-8").splitlines()[:rows]) + "\n"
    answer = await client.post(
        "/v1/datasets?name=viewer.jsonl", content=body, headers={"Content-Type": "application/x-ndjson"}
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


async def test_the_page_asks_for_a_key_and_sends_it_only_as_a_bearer_header(
    server: tuple[LiveServer, Keys], browser: Browser
) -> None:
    live, keys = server
    async with api(live, keys) as client:
        await client.post("/v1/runs?wait=true", json={"problem": PROBLEM})
    page = await new_page(browser)
    requests: list[tuple[str, str | None]] = []
    page.on("request", lambda r: requests.append((r.url, r.headers.get("authorization"))))
    await page.goto(live.url + "/")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    key_box = page.get_by_label("API key")
    await key_box.fill("tlk_not-a-key")
    await key_box.press("Enter")
    await expect(page.get_by_role("alert")).to_contain_text("refused", timeout=WAIT_MS)
    await key_box.fill(keys.read)
    await key_box.press("Enter")
    await expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("table tbody tr")).to_have_count(1)
    await page.get_by_label("Status").select_option("error")  # filters go to the API, via the address
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("No run matches.")).to_be_visible(timeout=WAIT_MS)
    assert "status=error" in page.url
    await page.get_by_label("Status").select_option("screened")  # the offline panel's run
    await page.get_by_role("button", name="Filter").click()
    await expect(page.locator("table tbody tr")).to_have_count(1, timeout=WAIT_MS)
    badge = page.locator("table tbody .badge.status-screened")
    await expect(badge).to_have_attribute("title", re.compile("not a judgement of soundness"))
    await page.locator("table tbody a").first.click()
    await expect(page.locator(".card.done")).to_have_count(14, timeout=WAIT_MS)
    api_calls = [(url, header) for url, header in requests if "/v1/" in url]
    assert api_calls and all(keys.read not in url for url, _ in requests)
    assert (api_calls[-1][1] or "") == f"Bearer {keys.read}"
    await page.context.close()


async def test_a_live_run_fills_in_as_it_goes(
    server: tuple[LiveServer, Keys], browser: Browser, simulator_server: SimulatorServer, shots: Path
) -> None:
    live, keys = server
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": SCORE_AND_REVISE, "latency_s": 0.05}))
    state.held = True  # every model call waits: the page opens on a run that has no verdict yet
    try:
        async with api(live, keys) as client:
            body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2}}
            run_id = (await client.post("/v1/runs", json=body)).json()["id"]
        page = await new_page(browser, keys.read)
        await page.goto(f"{live.url}/#/runs/{run_id}")
        await expect(page.get_by_text("following it live")).to_be_visible(timeout=WAIT_MS)
        assert await page.locator(".card.done").count() == 0
        await page.evaluate("window.stillTheSamePage = true")
    finally:
        state.held = False
    first = page.locator('[data-round="1"] .card.done')
    await expect(first).to_have_count(7, timeout=WAIT_MS)
    await expect(page.locator('[data-round="1"] .thinking')).not_to_be_empty(timeout=WAIT_MS)
    await expect(page.locator('[data-round="2"] .card.done')).to_have_count(7, timeout=WAIT_MS)
    await expect(page.locator("[data-status]")).to_have_attribute("data-status", "accepted", timeout=WAIT_MS)
    await expect(page.get_by_role("heading", name="Final problem")).to_be_visible()
    await expect(page.locator('[data-round="2"] .diff ins').first).to_be_attached()
    assert await page.evaluate("window.stillTheSamePage") is True  # filled in live, never reloaded
    await screenshot(page, page.locator('[data-round="1"] .figures'), shots / "viewer-run.png")
    await page.context.close()


async def test_an_escalated_round_shows_each_step_of_its_cascade(
    server: tuple[LiveServer, Keys], browser: Browser, tmp_path: Path
) -> None:
    """sim's judges pass at Q below the threshold calibrated for it: the round escalates, and with no
    stronger panel configured a person decides (needs_review)."""
    live, keys = server
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'viewer.db'}")  # the server's database
    async with session_factory(engine)() as session:  # a record of sim's very panel, as calibrate saves
        await store(session, calibrated_record(live.app.state.registry, "sim", 0.99))
    await engine.dispose()
    options = {
        "model": "sim",
        "judge_model": "sim",
        "max_rounds": 1,
        "guarantee": {"alpha": 0.05, "delta": 0.1},
    }
    async with api(live, keys) as client:
        ran = (await client.post("/v1/runs?wait=true", json={"problem": PROBLEM, "options": options})).json()
    assert ran["status"] == "needs_review", ran
    page = await new_page(browser, keys.read)
    await page.goto(f"{live.url}/#/runs/{ran['id']}")
    steps = page.get_by_role("list", name="Escalation of round 1").locator("li")
    await expect(steps).to_have_count(2, timeout=WAIT_MS)
    await expect(steps.nth(0)).to_contain_text(
        re.compile(r"Stage 0 · the run's panel · Q 0\.\d{3} vs threshold 0\.990")
    )
    await expect(steps.nth(0).locator(".badge")).to_have_text("escalated")
    await expect(steps.nth(1)).to_contain_text("Stage 1 · a person")
    await expect(steps.nth(1).locator(".badge")).to_have_text("needs review")
    await page.context.close()


async def test_a_batch_page_shows_progress_results_figures_and_its_items(
    server: tuple[LiveServer, Keys], browser: Browser, shots: Path
) -> None:
    live, keys = server
    async with api(live, keys) as client:
        batch_id = await finished_batch(client, await upload(client), ["rubric", "sim"])
    page = await new_page(browser, keys.read)
    await page.goto(f"{live.url}/#/batches")
    await page.get_by_role("link", name=batch_id[:8]).click()
    await expect(page.get_by_role("heading", name=f"Batch {batch_id[:8]}")).to_be_visible(timeout=WAIT_MS)
    await expect(page.get_by_text("10 of 10 items finished")).to_be_visible(timeout=WAIT_MS)
    results = page.get_by_role("table", name="Per model and arm")
    await expect(results.locator("tbody tr")).to_have_count(2, timeout=WAIT_MS)
    await expect(page.get_by_role("img", name="Pass rate with its Wilson 95% interval")).to_be_visible()
    await expect(page.get_by_role("img", name="Rounds to pass (Kaplan-Meier)")).to_be_visible()
    # No acceptance cites a validity record: the pass rates are shown uncorrected, and why (#55)
    correction = page.locator('section[data-correction="uncorrected"]')
    await expect(correction).to_contain_text("The pass rates are uncorrected:", timeout=WAIT_MS)
    corrected = page.get_by_role("table", name="Pass rate raw, corrected")
    await expect(corrected.locator("tbody tr")).to_have_count(2)
    # The report's six figures: each one the batch has data for as an image, the others say why not.
    async with api(live, keys) as client:
        found = {
            name: (await client.get(f"/v1/batches/{batch_id}/figures/{name}")).status_code for name in FIGURES
        }
    assert set(found.values()) <= {200, 404} and list(found.values()).count(200) >= 4, found
    for name, status in found.items():
        figure = page.locator(f'figure[data-figure="{name}"]')
        if status == 200:
            image = figure.get_by_role("img")
            await expect(image).to_be_visible(timeout=WAIT_MS)
            await expect(image).to_have_attribute("alt", re.compile(r"\w{3,}"))
            await expect(image).to_have_js_property("complete", True)
            assert await image.evaluate("e => e.naturalWidth") > 0, name  # drawn, not a broken image
        else:
            await expect(figure.locator("[data-no-figure]")).to_contain_text(
                f"no data for the figure '{name}'", timeout=WAIT_MS
            )
            assert await figure.locator("img").count() == 0, name
    await screenshot(page, page.get_by_role("heading", name="Results"), shots / "viewer-batch.png")
    items = page.get_by_role("table", name="Items in order")
    await expect(items.locator("tbody tr")).to_have_count(10)
    await items.get_by_role("link").first.click()  # an item is a run: its trace, one click away
    await expect(page.get_by_role("heading", name="Final problem")).to_be_visible(timeout=WAIT_MS)
    await expect(page.get_by_role("link", name=f"batch {batch_id[:8]}")).to_be_visible()
    await page.context.close()


LIVE_VALUES = """() => { window.finishedSeen = [];
  const record = () => { const p = document.querySelector('#progress [data-finished]');
    if (p) window.finishedSeen.push(Number(p.dataset.finished)); };
  new MutationObserver(record).observe(document.querySelector('#progress'),
    { childList: true, subtree: true });
  record(); }"""


async def test_a_running_batch_s_progress_moves_on_the_page(
    server: tuple[LiveServer, Keys], browser: Browser, simulator_server: SimulatorServer
) -> None:
    """Every model call is held while the page opens on the batch (nothing finished); once the calls
    are answered, the page's progress moves to the end from the batch's event stream, unreloaded."""
    live, keys = server
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.05}))
    state.held = True
    try:
        async with api(live, keys) as client:
            body = {"dataset_id": await upload(client, rows=3), "models": ["sim"], "judge_model": "sim"}
            started = await client.post("/v1/batches", json={**body, "max_rounds": 1})
            assert started.status_code == 202, started.text
            batch_id = started.json()["id"]
        page = await new_page(browser, keys.read)
        await page.goto(f"{live.url}/#/batches/{batch_id}")
        await expect(page.get_by_text("0 of 3 items finished")).to_be_visible(timeout=WAIT_MS)
        await page.evaluate(LIVE_VALUES)
        await page.evaluate("window.stillTheSamePage = true")
    finally:
        state.held = False
    await expect(page.get_by_text("3 of 3 items finished")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("#progress .badge").first).to_have_text("completed", timeout=WAIT_MS)
    assert await page.evaluate("window.stillTheSamePage") is True  # followed live, never reloaded
    seen: list[int] = await page.evaluate("window.finishedSeen")
    assert seen[0] == 0 and seen[-1] == 3 and seen == sorted(seen), seen
    await page.context.close()


async def test_two_batches_compare_side_by_side_on_the_same_problems(
    server: tuple[LiveServer, Keys], browser: Browser, shots: Path
) -> None:
    live, keys = server
    async with api(live, keys) as client:
        dataset = await upload(client)
        both = await finished_batch(client, dataset, ["rubric", "sim"])
        alone = await finished_batch(client, dataset, ["rubric"])
    page = await new_page(browser, keys.read)
    await page.goto(f"{live.url}/#/batches/{both}")
    await page.get_by_role("link", name="Compare rubric with sim").click()
    await expect(page.get_by_role("table", name="(A) against")).to_be_visible(timeout=WAIT_MS)
    await expect_comparison(page, await disagreements(live, keys, (both, "rubric"), (both, "sim")))
    await expect(
        page.get_by_text("The batch report's comparison of rubric/loop with sim/loop")
    ).to_be_visible()
    # Now across batches, through the form by keyboard: this batch's sim against the other's rubric.
    await page.get_by_role("group", name="Side A").get_by_label("Model").select_option("sim")
    await page.get_by_role("group", name="Side B").get_by_label("Batch").select_option(alone)
    await page.get_by_role("group", name="Side B").get_by_label("Model").select_option("rubric")
    await page.get_by_role("button", name="Compare").focus()
    await page.keyboard.press("Enter")
    summary = page.get_by_role("table", name="(A) against")
    await expect(summary).to_contain_text(f"{alone[:8]} · rubric (loop) (B)", timeout=WAIT_MS)
    expected = await disagreements(live, keys, (both, "sim"), (alone, "rubric"))
    await expect_comparison(page, expected)
    disagreeing = page.get_by_role("table", name="where one side passed")
    await screenshot(
        page, page.get_by_role("heading", name="Paired differences"), shots / "viewer-compare.png"
    )
    if expected["problem_ids"]:  # the question is read from a run of the problem; its runs are links
        await expect(disagreeing.locator("tbody td").first).to_contain_text("?", timeout=WAIT_MS)
        await disagreeing.get_by_role("link", name="B run 1").first.click()
        await expect(page.get_by_role("heading", name="Final problem")).to_be_visible(timeout=WAIT_MS)
    await page.context.close()


# What "labelled, reachable and readable" means here, computed in the page itself.
ACCESSIBILITY_PROBE = """() => {
  const interactive = [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex="0"]')]
    .filter((e) => e.offsetParent !== null);
  interactive.forEach((e, i) => { e.dataset.probe = String(i); });
  const name = (e) => (e.labels && e.labels.length ? e.labels[0].textContent : '') ||
    e.getAttribute('aria-label') || e.textContent;
  const unlabelled = interactive.filter((e) => !name(e).trim()).map((e) => e.outerHTML.slice(0, 80));
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const linear = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const lum = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  const background = (e) => {
    for (; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || c[3] > 0) return c;
    }
    return [255, 255, 255];
  };
  const lowContrast = [];
  for (const e of document.querySelectorAll('body *')) {
    const text = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!text || e.closest('svg') || e.closest('.sr-only')) continue;
    const [a, b] = [lum(rgb(getComputedStyle(e).color)), lum(background(e))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) lowContrast.push(`${e.tagName} ${ratio.toFixed(2)} ${e.textContent.slice(0, 30)}`);
  }
  const landmarks = ['header', 'nav', 'main', 'footer'].filter((t) => document.querySelector(t));
  return { count: interactive.length, unlabelled, lowContrast, landmarks };
}"""

FOCUSED = """() => { const e = document.activeElement; const style = getComputedStyle(e);
  return { probe: e.dataset.probe ?? '', html: e.outerHTML.slice(0, 80),
           outline: style.outlineStyle + ' ' + style.outlineWidth }; }"""


async def test_every_control_is_labelled_reachable_by_keyboard_and_readable(
    server: tuple[LiveServer, Keys], browser: Browser
) -> None:
    live, keys = server
    async with api(live, keys) as client:
        batch_id = await finished_batch(client, await upload(client, rows=2), ["rubric", "sim"])
        run_id = (await client.get("/v1/runs", params={"limit": 1})).json()["items"][0]["id"]
    page = await new_page(browser, keys.read)
    views = {
        "#/runs": "Runs",
        "#/batches": "Batches",
        f"#/batches/{batch_id}": f"Batch {batch_id[:8]}",
        f"#/runs/{run_id}": f"Run {run_id[:8]}",
        "#/compare": "Compare on the same problems",
    }
    for view, heading in views.items():
        await page.goto(f"{live.url}/{view}")
        await expect(page.locator("main h1")).to_have_text(heading, timeout=WAIT_MS)
        await expect(page.locator("main:not([aria-busy])")).to_be_attached(timeout=WAIT_MS)
        await expect(page.locator("main [aria-busy]")).to_have_count(0, timeout=WAIT_MS)  # figures in
        probe: dict[str, Any] = await page.evaluate(ACCESSIBILITY_PROBE)
        assert probe["landmarks"] == ["header", "nav", "main", "footer"], view
        assert probe["unlabelled"] == [] and probe["lowContrast"] == [], (view, probe)
        seen = set()
        for _ in range(2 * probe["count"] + 2):  # Tab round the page (from the heading, as it opens)
            await page.keyboard.press("Tab")
            focused: dict[str, str] = await page.evaluate(FOCUSED)
            if focused["html"].startswith("<body"):
                continue  # past the last control, focus leaves the page before it wraps around
            assert not focused["outline"].startswith("none"), (view, focused)  # a visible focus ring
            seen.add(focused["probe"] or focused["html"])
        assert seen == {str(i) for i in range(probe["count"])}, (view, seen, probe["count"])
    await page.context.close()


# What overflows the window sideways, and which drawn chart texts overlap, computed in the page.
LAYOUT_PROBE = """() => {
  const page = document.documentElement;
  const wider = [...document.querySelectorAll('main *')].filter((e) => {
    const box = e.getBoundingClientRect();
    if (!box.width || e.closest('.wide')) return false;  // a table scrolls inside its own box
    return box.right > page.clientWidth + 1 || box.left < -1;
  }).map((e) => `${e.tagName}.${e.className} ${e.textContent.slice(0, 40)}`);
  const overlapping = [];
  for (const svg of document.querySelectorAll('main figure > svg')) {
    const boxes = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim())
      .map((t) => [t.textContent, t.getBoundingClientRect()]);
    boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) overlapping.push(`${a} / ${b}`);
    }));
  }
  return { scroll: page.scrollWidth, window: page.clientWidth, wider, overlapping };
}"""

OUTLINE = "() => getComputedStyle(document.activeElement).outlineStyle"


@pytest.mark.parametrize("width", [1280, 390])
async def test_every_view_fits_the_window_and_shows_focus_only_for_the_keyboard(
    server: tuple[LiveServer, Keys], browser: Browser, width: int
) -> None:
    """At a laptop's width and a phone's, no view is wider than the window (a wide table scrolls in
    its own box) and no chart's texts overlap; a view opens with its heading focused but no focus
    ring (it reads as an error), a pointer's focus shows none, and the keyboard's always shows."""
    live, keys = server
    async with api(live, keys) as client:
        batch_id = await finished_batch(client, await upload(client, rows=2), ["rubric", "sim"])
        body = {"problem": {**PROBLEM, "metadata": {"pupil": "P-17"}}}
        run_id = (await client.post("/v1/runs?wait=true", json=body)).json()["id"]
    context = await browser.new_context(viewport={"width": width, "height": 860}, reduced_motion="reduce")
    await context.add_init_script(f"sessionStorage.setItem('thinkloop.key', {json.dumps(keys.read)})")
    page = await context.new_page()
    page.on("pageerror", lambda error: SCRIPT_ERRORS.append(str(error)))
    views = {
        "#/runs": "Runs",
        "#/runs?source=api": "Runs",
        "#/batches": "Batches",
        f"#/batches/{batch_id}": f"Batch {batch_id[:8]}",
        f"#/runs/{run_id}": f"Run {run_id[:8]}",
        "#/compare": "Compare on the same problems",
    }
    for view, heading in views.items():
        await page.goto(f"{live.url}/{view}")
        await expect(page.locator("main h1")).to_have_text(heading, timeout=WAIT_MS)
        await expect(page.locator("main [aria-busy], main[aria-busy]")).to_have_count(0, timeout=WAIT_MS)
        seen: dict[str, Any] = await page.evaluate(LAYOUT_PROBE)
        assert seen["scroll"] <= seen["window"] and seen["wider"] == [], (width, view, seen)
        assert seen["overlapping"] == [], (width, view, seen)
        assert await page.evaluate("document.activeElement.tagName") == "H1", view
        assert await page.evaluate(OUTLINE) == "none", (width, view)  # no ring on a view's heading
        await page.keyboard.press("Tab")
        assert await page.evaluate(OUTLINE) != "none", (width, view)  # the keyboard's focus shows
    # What a teacher reads: the submitted metadata, the dataset's ids, verdicts in words, agreement told.
    await page.goto(f"{live.url}/#/runs/{run_id}")
    await expect(page.locator("[data-metadata]")).to_have_text("pupil: P-17", timeout=WAIT_MS)
    await expect(page.locator(".card.done").first).to_be_visible(timeout=WAIT_MS)
    assert await page.locator(".card", has_text=re.compile(r"Found: \[|Passed: ")).count() == 0
    await expect(page.locator('[data-explains="agreement"]').first).to_contain_text("Agreement: ")
    await page.goto(f"{live.url}/#/batches/{batch_id}")
    items = page.get_by_role("table", name="Items in order")
    await expect(items.locator("[data-dataset-id]").first).to_have_text(
        re.compile(r"^fp-\d+$"), timeout=WAIT_MS
    )
    await page.goto(f"{live.url}/#/runs")
    await expect(page.locator("main h1")).to_have_text("Runs", timeout=WAIT_MS)
    await page.get_by_label("Shown").select_option("api")  # runs of their own, not batch items
    await page.get_by_role("button", name="Filter").click()
    await expect(page.locator("table tbody tr")).to_have_count(1, timeout=WAIT_MS)
    assert "source=api" in page.url
    await expect(page.locator("main h1")).to_have_text("Runs", timeout=WAIT_MS)
    button = page.get_by_role("button", name="Filter")
    await button.hover()
    await page.mouse.down()  # a pointer's focus on a button: no ring
    assert await page.evaluate("document.activeElement.textContent") == "Filter"
    assert await page.evaluate(OUTLINE) == "none"
    await page.mouse.up()
    await context.close()


DRAW_KM = """async () => {
  const { survivalChart } = await import('/viewer/static/js/charts.js');
  const same = [{ round: 1, not_passed: 0.5 }, { round: 2, not_passed: 0 }];
  const series = ['rubric (loop)', 'sim (loop)', 'rubric (control)']
    .map((label) => ({ label, points: same }));
  const figure = survivalChart('Rounds to pass (Kaplan-Meier)', series, 2);
  document.querySelector('main').append(figure);
  const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const ends = [...figure.querySelectorAll('g > path + text')].map(box);
  return { ends, frame: box(figure.querySelector('svg')) };
}"""


async def test_kaplan_meier_line_labels_stay_apart_where_curves_end_together(
    server: tuple[LiveServer, Keys], browser: Browser
) -> None:
    """Three curves that end at the same height: their numbers stand one above the other, inside
    the chart, instead of on top of each other."""
    live, keys = server
    page = await new_page(browser, keys.read)
    await page.goto(f"{live.url}/#/runs")
    await expect(page.locator("main h1")).to_have_text("Runs", timeout=WAIT_MS)
    drawn: dict[str, Any] = await page.evaluate(DRAW_KM)
    ends = drawn["ends"]
    assert len(ends) == 3
    for i, a in enumerate(ends):
        assert drawn["frame"][0] <= a[0] and a[2] <= drawn["frame"][2] + 0.5, a  # inside the chart
        assert drawn["frame"][1] <= a[1] and a[3] <= drawn["frame"][3] + 0.5, a
        for b in ends[i + 1 :]:
            apart = a[3] <= b[1] + 0.5 or b[3] <= a[1] + 0.5 or a[2] <= b[0] + 0.5 or b[2] <= a[0] + 0.5
            assert apart, (a, b)
    await page.context.close()
