"""mkdocs hooks: reference tables generated from the code at build time, so they cannot go stale.

A page asks for one with a marker line:

- ``<!-- generated: cli -->``: every CLI command with its arguments and options (from typer/click);
- ``<!-- generated: settings -->``: every ``THINKLOOP_*`` setting (from ``app.settings.Settings``);
- ``<!-- generated: routes -->``: every HTTP route of the OpenAPI document (from ``app.main``).

- ``<!-- generated: changelog -->``: ``CHANGELOG.md``, its links pointed into the site.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer.main


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    """Leaf commands under a typer (vendored click) group, by their full name."""
    found: list[tuple[str, Any]] = []
    if hasattr(group, "commands"):
        for name in sorted(group.commands):
            command = group.commands[name]
            if command.hidden:
                continue
            found += _commands(command, f"{prefix} {name}")
    else:
        found.append((prefix, group))
    return found


def cli_reference() -> str:
    from app.cli import cli

    root = typer.main.get_command(cli)
    parts: list[str] = []
    for name, command in _commands(root, "thinkloop"):
        parts.append(f"### `{name}`\n")
        help_text = (command.help or "").strip()
        if help_text:
            parts.append(help_text.split("\n\n")[0].replace("\n", " ") + "\n")
        args = [p for p in command.params if p.param_type_name == "argument"]
        usage = " ".join([f"uv run {name}", *[(p.name or "").upper() for p in args], "[OPTIONS]"])
        parts.append(f"`{usage}`\n")
        rows = []
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                flags = ", ".join(f"`{flag}`" for flag in [*param.opts, *param.secondary_opts])
                default = (
                    "" if param.default in (None, False, ()) or callable(param.default) else param.default
                )
                rows.append(f"| {flags} | {_cell(param.help or '')} | {_cell(default)} |")
        if rows:
            parts.append("| option | meaning | default |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


def settings_reference() -> str:
    from app.settings import Settings

    rows = []
    for name, field in Settings.model_fields.items():
        default: Any = field.get_default(call_default_factory=True)
        shown = "" if default in (None, [], {}) else json.dumps(default, default=str)
        kind = _cell(getattr(field.annotation, "__name__", None) or field.annotation).replace("typing.", "")
        rows.append(
            f"| `THINKLOOP_{name.upper()}` | {kind} | {_cell(shown)} | {_cell(field.description or '')} |"
        )
    return "| variable | type | default | description |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"


def routes_reference() -> str:
    from app.main import create_app

    schema = create_app().openapi()
    rows = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            summary = (operation.get("description") or operation.get("summary") or "").split("\n\n")[0]
            rows.append(
                f"| `{method.upper()} {path}` | `{operation.get('operationId', '')}` | {_cell(summary)} |"
            )
    return "| route | operationId | summary |\n|---|---|---|\n" + "\n".join(rows) + "\n"


def changelog() -> str:
    """CHANGELOG.md, its links (written from the repository's root) pointed into the site."""
    text = (Path(__file__).resolve().parent.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    return text.replace("](docs/", "](")


GENERATORS = {
    "<!-- generated: changelog -->": changelog,
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: settings -->": settings_reference,
    "<!-- generated: routes -->": routes_reference,
}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
