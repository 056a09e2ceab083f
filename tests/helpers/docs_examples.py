"""The shell sessions and Python snippets of the docs, read from the Markdown as a reader sees them.

A fenced block marked ``bash`` (or ``console``: ``$ `` prompts, the other lines output) or ``python``
is an example, and every example runs, unless the line before its fence is
``<!-- not-run: REASON -->``. A page's examples run in order as one session, as a reader following
the page would type them: a shell variable or a background server of one block is there for the
next, and a Python block runs as a file (``uv run python FILE``) at its place in the session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!-- not-run: (?P<reason>\S.*?) -->$")
LANGUAGES = {"bash": "bash", "sh": "bash", "console": "bash", "python": "python"}


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    language: str  # "bash" or "python"
    text: str
    not_run: str | None  # the reason, when the block is marked not-run


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples(page: Path) -> list[Example]:
    """Every example block of PAGE, in order."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Example] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not (match or lines[i].startswith("```")):
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        language = LANGUAGES.get(match.group(1)) if match else None
        if language:
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            marked = NOT_RUN.match(before)
            body = lines[i + 1 : end]
            if match and match.group(1) == "console":
                body = _console_commands(body)
            found.append(
                Example(
                    page=str(page.relative_to(ROOT)),
                    line=i + 1,
                    language=language,
                    text="\n".join(body) + "\n",
                    not_run=marked.group("reason") if marked else None,
                )
            )
        i = end + 1
    return found


def _console_commands(body: list[str]) -> list[str]:
    """The commands of a console session: lines after ``$ `` and their ``\\`` continuations."""
    commands: list[str] = []
    continuing = False
    for line in body:
        if line.startswith("$ "):
            commands.append(line[2:])
            continuing = line.endswith("\\")
        elif continuing:
            commands.append(line)
            continuing = line.endswith("\\")
    return commands
