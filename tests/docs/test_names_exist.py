"""The docs name only what exists: every file or module path, every THINKLOOP_ setting and every
/v1 route that a page or the README puts in backticks is checked against the tree, the settings
model and the API's routes. A page that names a renamed module, a dropped setting or a route that
was never built fails here, not in a reader's shell."""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

import pytest

from agents.simulator.server import create_simulator
from app.main import create_app
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
CODE = re.compile(r"`([^`\n]+)`")
# A path inside the tree: a top-level room, then anything up to a file name with a known suffix.
TREE_PATH = re.compile(
    r"^(?:app|agents|graphs|prompts|bench|scripts|tests|thinkloop_client|clients|migrations|docs|\.ci)/"
    r"[\w./-]*$"
)
MODULE = re.compile(r"^(?:app|agents|graphs|thinkloop_client)(?:\.\w+)+$")
SETTING = re.compile(r"\bTHINKLOOP_[A-Z0-9_]+\b")
ROUTE = re.compile(r"(?:^|\s)(?:GET |POST |PUT |PATCH |DELETE )?(/v1/[\w{}./-]*)")
# Settings read by scripts, tests and the CI script rather than by the service (Settings).
OUTSIDE_SETTINGS = ("scripts", "tests", "bench", ".ci", "Dockerfile", "agents", "app")


def _spans() -> list[tuple[Path, str]]:
    return [(page, span) for page in PAGES for span in CODE.findall(page.read_text())]


@cache
def _mentioned_elsewhere() -> str:
    """The text of every file outside the service's settings that may read a THINKLOOP_ variable."""
    texts = []
    for name in OUTSIDE_SETTINGS:
        target = ROOT / name
        files = [target] if target.is_file() else [p for p in target.rglob("*") if p.is_file()]
        files = [p for p in files if p.suffix in {"", ".py", ".sh", ".toml"} and p != Path(__file__)]
        texts += [p.read_text(errors="ignore") for p in files]
    return "\n".join(texts)


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or a name (class, function, attribute) inside one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def _setting_exists(name: str) -> bool:
    parts = name.removeprefix("THINKLOOP_").lower().split("__")
    if parts[0] in Settings.model_fields:
        return True
    return re.search(rf"\b{re.escape(name)}\b", _mentioned_elsewhere()) is not None


@cache
def _route_patterns() -> list[re.Pattern[str]]:
    """The API's routes, and the simulator's (an OpenAI-compatible server the docs also describe)."""
    app = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:"))
    paths = [*app.openapi()["paths"], *(getattr(route, "path", "") for route in create_simulator().routes)]
    return [re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "/?$") for path in paths]


def _route_exists(path: str) -> bool:
    path = re.sub(r"\{[^/}]+\}", "x", path.split("?")[0].rstrip(".,;:)"))
    return any(pattern.match(path) for pattern in _route_patterns())


def test_every_path_and_module_the_docs_name_exists() -> None:
    missing = []
    for page, span in _spans():
        text = span.split(":")[0].split("#")[0].split(" ")[0]
        if TREE_PATH.match(text) and "*" not in text and "{" not in text and "<" not in text:
            if not (ROOT / text.rstrip("/")).exists():
                missing.append(f"{page.relative_to(ROOT)}: {span}")
        elif MODULE.match(text) and not _resolves(text):
            missing.append(f"{page.relative_to(ROOT)}: {span}")
    assert not missing, "the docs name files or modules that do not exist:\n" + "\n".join(missing)


def test_every_setting_the_docs_name_exists() -> None:
    missing = set()
    for page in PAGES:
        text = page.read_text()
        assigned = set(
            re.findall(r"(?:export )?(THINKLOOP_[A-Z0-9_]+)=", text)
        )  # the page's own shell variables
        names = set(SETTING.findall(text)) - assigned
        missing |= {f"{page.relative_to(ROOT)}: {name}" for name in names if not _setting_exists(name)}
    assert not missing, "the docs name settings that nothing reads:\n" + "\n".join(sorted(missing))


def test_every_route_the_docs_name_exists() -> None:
    missing = []
    for page, span in _spans():
        for path in ROUTE.findall(span):
            if not _route_exists(path):
                missing.append(f"{page.relative_to(ROOT)}: {span}")
    assert not missing, "the docs name routes the API does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("name", "exists"),
    [
        ("THINKLOOP_DATABASE_URL", True),
        ("THINKLOOP_MODELS__SIM__BASE_URL", True),
        ("THINKLOOP_NO_SUCH", False),
    ],
)
def test_the_setting_check_tells_a_setting_from_a_typo(name: str, exists: bool) -> None:
    assert _setting_exists(name) is exists


@pytest.mark.parametrize(
    ("path", "exists"),
    [
        ("/v1/runs/{id}", True),
        ("/v1/runs/abc/events", True),
        ("/v1/runs?status=queued", True),
        ("/v1/nope", False),
    ],
)
def test_the_route_check_tells_a_route_from_a_typo(path: str, exists: bool) -> None:
    assert _route_exists(path) is exists
