"""``/``: the viewer's page, and ``/viewer/static``: its scripts and styles, shipped in the package.

The page holds no data: the scripts read everything from the public /v1 API with the key the
person types in, sent as ``Authorization: Bearer``; so the page and its files need no key.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

from agents.labelled.labels import TAXONOMY

STATIC = Path(__file__).parent / "static"
STATIC_PATH = "/viewer/static"
# Scripts and styles from this server only: no inline script, nothing from a CDN, no framing.
# Images may be blob: URLs: the figures, fetched with the key (an <img src> cannot send it).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@cache
def _page() -> str:
    return (STATIC / "index.html").read_text(encoding="utf-8")


@router.get("/")
async def viewer_page() -> HTMLResponse:
    """The viewer: runs, batches, comparisons (it routes inside the page, after the #)."""
    return HTMLResponse(_page(), headers=SECURITY_HEADERS)


@router.get("/viewer/taxonomy.json")
async def flaw_taxonomy() -> dict[str, str]:
    """The flaw types a teacher may choose (the taxonomy the decision endpoint accepts), in words."""
    return {name: words for name, (words, _judges) in TAXONOMY.items()}


def install(app: FastAPI) -> None:
    """Serve the page at ``/`` and its files under ``/viewer/static``."""
    app.include_router(router)
    app.mount(STATIC_PATH, StaticFiles(directory=STATIC), name="viewer-static")
