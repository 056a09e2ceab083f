"""The HTML batch report in a real Chromium (Debian's package, as tests/app/viewer/test_viewer.py drives
it), at a laptop's width (1,280 px) and a phone's (390 px): every figure stays inside its container
and the window, and at the laptop's width every figure is drawn at one scale (none twice its
neighbours' size); the page never scrolls sideways (a wide table scrolls in its own box)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, async_playwright

from app.reporting.html import to_html
from tests.helpers.browser import chromium_path

pytestmark = pytest.mark.slow

WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def report(flawed_sample_report: dict[str, Any]) -> dict[str, Any]:
    return flawed_sample_report


# Each figure's box, its container's, the window's, and its drawn and natural widths.
MEASURE = """() => {
  const page = document.documentElement;
  return { window: page.clientWidth, scroll: page.scrollWidth,
    figures: [...document.querySelectorAll('.figures img')].map((img) => {
      const box = img.getBoundingClientRect();
      const container = img.closest('figure').getBoundingClientRect();
      return { alt: img.alt, left: box.left, right: box.right, container: [container.left, container.right],
               drawn: box.width, natural: Number(img.getAttribute('width')), complete: img.complete };
    }) };
}"""


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.mark.parametrize("width", WIDTHS)
async def test_every_figure_stays_in_its_container_at_one_scale(
    report: dict[str, Any], browser: Browser, tmp_path: Path, width: int
) -> None:
    page_file = tmp_path / "report.html"
    page_file.write_text(to_html(report), encoding="utf-8")
    context = await browser.new_context(viewport={"width": width, "height": 900})
    page = await context.new_page()
    await page.goto(page_file.as_uri())
    await page.wait_for_function("[...document.images].every((i) => i.complete)")
    seen: dict[str, Any] = await page.evaluate(MEASURE)
    await context.close()
    assert len(seen["figures"]) == 6
    for figure in seen["figures"]:
        left, right = figure["container"]
        assert left - 0.5 <= figure["left"] and figure["right"] <= right + 0.5, (width, figure)
        assert figure["right"] <= seen["window"], (width, figure)
    scales = [f["drawn"] / f["natural"] for f in seen["figures"]]
    if width == 1280:
        assert max(scales) / min(scales) < 1.05, scales  # one scale: none looms over its neighbours


# The page's own width and scroll width, and each table's box and its scroll box's.
TABLES = """() => {
  const page = document.documentElement;
  return { window: page.clientWidth, scroll: page.scrollWidth,
    tables: [...document.querySelectorAll('table')].map((table) => {
      const box = table.parentElement.getBoundingClientRect();
      return { head: table.querySelector('th')?.textContent, right: box.right,
               scrolls: getComputedStyle(table.parentElement).overflowX === 'auto',
               wider: table.scrollWidth > table.parentElement.clientWidth };
    }) };
}"""


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_page_never_scrolls_sideways_each_wide_table_scrolls_in_its_box(
    report: dict[str, Any], browser: Browser, tmp_path: Path, width: int
) -> None:
    """A table wider than a phone scrolls inside its own box: the page itself keeps the window's
    width, so the text and the figures around the table stay readable."""
    page_file = tmp_path / "report.html"
    page_file.write_text(to_html(report), encoding="utf-8")
    context = await browser.new_context(viewport={"width": width, "height": 900})
    page = await context.new_page()
    await page.goto(page_file.as_uri())
    seen: dict[str, Any] = await page.evaluate(TABLES)
    await context.close()
    assert seen["tables"] and seen["scroll"] <= seen["window"], (width, seen["scroll"], seen["window"])
    for table in seen["tables"]:
        assert table["scrolls"] and table["right"] <= seen["window"] + 0.5, (width, table)
    if width == 390:  # the report has tables wider than a phone: the test would see an overflow
        assert any(table["wider"] for table in seen["tables"])
