"""The teacher's page of the viewer (#/reviews), in Chromium at 1,280 and 390 px: the queue, an item
with the judges' words, the warrant and the think-aloud, the three decisions (checked through the
API afterwards), the whole flow by keyboard alone, and another teacher's earlier decision (409)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from app.db import migrate
from app.main import create_app
from tests.helpers.browser import WAIT_MS
from tests.helpers.reviewing import SIM, auth, make_key, unread
from tests.helpers.service import Keys, LiveServer, seed_keys, service_settings

pytestmark = pytest.mark.slow
WIDTHS = [1280, 390]


@pytest.fixture
async def queue_server(tmp_path: Path, simulator_server: Any) -> AsyncIterator[tuple[LiveServer, Keys, str]]:
    """The API and viewer on uvicorn (SQLite), two needs_review runs queued, and a review key."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'reviews.db'}"
    await migrate(url)
    keys = await seed_keys(url)
    teacher, _ = await make_key(url, "ms-okafor", ["review"])
    with LiveServer(create_app(service_settings(url, simulator_server))) as live:
        async with httpx.AsyncClient(base_url=live.url, headers=keys.auth(), timeout=120) as client:
            for n in (1, 2):
                body = {"problem": unread(n) | {"metadata": {"pupil": f"P-{n}"}}, "options": SIM}
                answer = await client.post("/v1/runs", json=body, params={"wait": "true"})
                assert answer.json()["status"] == "needs_review", answer.text
        yield live, keys, teacher


async def teacher_page(browser: Browser, key: str, width: int) -> Page:
    """A page whose tab holds the teacher's key, at ``width`` px."""
    context = await browser.new_context(viewport={"width": width, "height": 900}, reduced_motion="reduce")
    await context.add_init_script(f"sessionStorage.setItem('thinkloop.key', {json.dumps(key)})")
    return await context.new_page()


async def items(live: LiveServer, teacher: str, status: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=live.url, headers=auth(teacher)) as client:
        answer = await client.get("/v1/reviews", params={"status": status})
        assert answer.status_code == 200, answer.text
        found: list[dict[str, Any]] = answer.json()["items"]
        return found


async def no_horizontal_scroll(page: Page) -> None:
    wide = await page.evaluate("document.documentElement.scrollWidth > window.innerWidth + 1")
    assert not wide


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_queue_lists_items_and_an_item_shows_verdicts_warrant_and_think_aloud(
    browser: Browser,
    queue_server: tuple[LiveServer, Keys, str],
    width: int,
    shots: Path,
) -> None:
    live, _, teacher = queue_server
    page = await teacher_page(browser, teacher, width)
    await page.goto(f"{live.url}/#/reviews")
    rows = page.get_by_role("list", name="Review queue").get_by_role("link")
    await expect(rows).to_have_count(2, timeout=WAIT_MS)
    await expect(rows.first).to_contain_text("needs review")
    await expect(page.get_by_role("list", name="Review queue")).to_contain_text("pupil P-1")
    await no_horizontal_scroll(page)
    await rows.first.click()
    await expect(page.get_by_role("heading", name="What the judges said")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator(".verdicts li").filter(has_text="holistic")).to_have_count(1)
    await expect(page.get_by_role("heading", name="Warrant")).to_be_visible()
    await expect(page.get_by_role("heading", name="Think-aloud")).to_be_visible()
    await expect(page.get_by_role("group", name="Decide").get_by_role("button")).to_have_count(3)
    await no_horizontal_scroll(page)
    await page.screenshot(path=shots / f"viewer-review-{width}.png", full_page=width == 390)


async def open_first(page: Page, live: LiveServer) -> None:
    await page.goto(f"{live.url}/#/reviews")
    await page.get_by_role("list", name="Review queue").get_by_role("link").first.click()
    await expect(page.get_by_role("heading", name="Decision")).to_be_visible(timeout=WAIT_MS)


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_three_decisions_are_recorded(
    browser: Browser,
    queue_server: tuple[LiveServer, Keys, str],
    width: int,
) -> None:
    live, _, teacher = queue_server
    page = await teacher_page(browser, teacher, width)
    await open_first(page, live)
    await page.get_by_role("button", name="Sound (s)").click()
    await page.get_by_role("button", name="Record sound").click()
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    await open_first(page, live)  # the pending one comes first
    await page.get_by_role("button", name="Flawed… (f)").click()
    await page.get_by_label("missing data").check()
    await page.get_by_label("Evidence for missing_data").fill("Lena's count is never given")
    await page.get_by_role("button", name="Record flawed").dblclick()
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    decided = {i["decision"]["decision"]: i["decision"] for i in await items(live, teacher, "decided")}
    assert set(decided) == {"sound", "flawed"} and await items(live, teacher, "pending") == []
    assert decided["flawed"]["flaws"] == [{"type": "missing_data", "evidence": "Lena's count is never given"}]
    assert decided["sound"]["corrected"] is None and decided["sound"]["reviewer"] == "ms-okafor"
    # edit and approve replaces the flawed decision: sound, with the corrected version
    await page.goto(f"{live.url}/#/reviews/{decided['flawed']['review_id']}")
    await page.get_by_role("button", name="Edit and approve… (e)").click()
    await page.get_by_label("Question").fill("Lena has 11 shells; Omar has twice as many. How many has Omar?")
    await page.get_by_label("Solution").fill("2 × 11 = 22 shells.")
    await page.get_by_role("button", name="Approve the edited version").click()
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    async with httpx.AsyncClient(base_url=live.url, headers=auth(teacher)) as client:
        detail = (await client.get(f"/v1/reviews/{decided['flawed']['review_id']}")).json()
    assert [d["decision"] for d in detail["history"]] == ["flawed", "sound"]  # one flawed: the double click
    assert detail["decision"]["corrected"] == {
        "question": "Lena has 11 shells; Omar has twice as many. How many has Omar?",
        "solution": "2 × 11 = 22 shells.",
    }


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_whole_flow_by_keyboard_alone(
    browser: Browser,
    queue_server: tuple[LiveServer, Keys, str],
    width: int,
) -> None:
    live, _, teacher = queue_server
    page = await teacher_page(browser, teacher, width)
    await page.goto(f"{live.url}/#/reviews")
    await expect(page.get_by_role("list", name="Review queue").get_by_role("link")).to_have_count(
        2, timeout=WAIT_MS
    )
    await page.keyboard.press("j")
    await page.keyboard.press("j")
    await page.keyboard.press("k")
    focused = await page.evaluate("document.activeElement.closest('li').dataset.review")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name="Decision")).to_be_visible(timeout=WAIT_MS)
    await page.keyboard.press("f")
    await page.keyboard.press("Escape")  # cancel: the form closes, nothing is sent
    await expect(page.get_by_role("form", name="Decide flawed")).to_have_count(0)
    await page.keyboard.press("f")
    await page.keyboard.press("Tab")  # the first type's checkbox
    await page.keyboard.press("Space")
    await page.keyboard.type("the count is missing")  # the evidence field took focus
    first = await page.evaluate("document.querySelector('input[name=type]:checked').value")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    [decided] = await items(live, teacher, "decided")
    assert decided["id"] == focused and decided["decision"]["decision"] == "flawed"
    assert decided["decision"]["flaws"] == [{"type": first, "evidence": "the count is missing"}]


async def test_another_teachers_earlier_decision_shows_the_409(
    browser: Browser,
    queue_server: tuple[LiveServer, Keys, str],
) -> None:
    live, _, teacher = queue_server
    page = await teacher_page(browser, teacher, 1280)
    await open_first(page, live)
    review_id = page.url.rsplit("/", 1)[1]
    async with httpx.AsyncClient(base_url=live.url, headers=auth(teacher)) as client:
        first = await client.post(f"/v1/reviews/{review_id}/decision", json={"decision": "sound"})
        assert first.status_code == 201, first.text
    await page.keyboard.press("s")
    await page.keyboard.press("Enter")
    await expect(page.locator("#decision-message")).to_contain_text(
        "Another decision was recorded first", timeout=WAIT_MS
    )
    [decided] = await items(live, teacher, "decided")
    assert decided["decision"]["id"] == first.json()["id"]


async def test_a_review_key_signs_in_to_the_queue(
    browser: Browser, queue_server: tuple[LiveServer, Keys, str]
) -> None:
    live, _, teacher = queue_server
    page = await (await browser.new_context(viewport={"width": 390, "height": 900})).new_page()
    await page.goto(f"{live.url}/")
    await page.get_by_label("API key").fill(teacher)
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    await expect(page.get_by_role("list", name="Review queue").get_by_role("link")).to_have_count(2)
