"""The outcome words are defined once (agents.outcome) and the client's copy is the same.

Every other place reads them from there: a run's status is queued, running or an outcome, a round's
decision is an outcome (never cancelled) or revise, and a batch item ends in an outcome. The check
reads the source tree, so a second enum, Literal, tuple or constant of the words fails it.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from agents.outcome import Outcome
from app.batches.schemas import ItemOutcome
from app.models import RunStatus
from graphs.scoring import Decision

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "app", "graphs", "prompts", "thinkloop_client", "bench")
HOME = Path("agents/outcome.py")
CLIENT = Path("thinkloop_client/models.py")  # stands alone: its own copy, checked below
WORDS = frozenset({"accepted", "screened", "exhausted", "needs_review", "error", "cancelled"})
# The words that can only be an outcome ("error" and "cancelled" also name other things).
OWN = frozenset({"accepted", "screened", "exhausted", "needs_review"})


def _words(nodes: list[ast.expr]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)} & WORDS


def _several(words: set[str]) -> bool:
    """Two outcome words or more, one of them an outcome's alone: a definition of the vocabulary."""
    return len(words) >= 2 and bool(words & OWN)


def _definitions(tree: ast.Module) -> list[int]:
    """The lines of ``tree`` that define outcome words: a Literal of them, a class (an enum) whose
    members are them, a tuple, list or set of them, or a constant naming one of them."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if _several(_words(elements)):
                lines.append(node.lineno)
        elif isinstance(node, ast.ClassDef):
            members = [s.value for s in node.body if isinstance(s, ast.Assign | ast.AnnAssign) and s.value]
            if _several(_words(members)):
                lines.append(node.lineno)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and _several(_words(node.elts)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value.value in OWN and all(isinstance(t, ast.Name) for t in targets):
                lines.append(node.lineno)
    return sorted(set(lines))


def definitions(root: Path) -> dict[str, list[int]]:
    """Every file under ``root``'s packages, but the home and the client, that defines outcome words."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if relative in (HOME, CLIENT):
                continue
            if lines := _definitions(ast.parse(path.read_text(encoding="utf-8"))):
                found[str(relative)] = lines
    return found


def test_the_outcome_words_are_defined_in_one_place() -> None:
    assert definitions(ROOT) == {}


def test_the_check_finds_each_kind_of_definition() -> None:
    code = """
class Status(StrEnum):
    ACCEPTED = "accepted"
    EXHAUSTED = "exhausted"
Kind = Literal["accepted", "screened", "error"]
FINAL = ("accepted", "needs_review")
PASSED = frozenset({"accepted", "screened"})
REFUSED = "exhausted"
"""
    assert _definitions(ast.parse(code)) == [2, 3, 4, 5, 6, 7, 8]
    uses = (
        'if outcome == "accepted":\n    step("accepted", reason)\nreason: Literal["needs_review", "audit"]\n'
    )
    assert _definitions(ast.parse(uses)) == []


def test_the_home_holds_them_and_the_client_has_the_same_words() -> None:
    assert _definitions(ast.parse((ROOT / HOME).read_text(encoding="utf-8")))
    from thinkloop_client import models as client

    assert typing.get_args(client.Outcome) == tuple(Outcome)
    assert frozenset(Outcome) == client.RUN_ENDED
    assert typing.get_args(client.RunStatus) == tuple(RunStatus)


def test_a_status_a_decision_and_an_item_are_spelt_in_the_outcomes_words() -> None:
    assert [*RunStatus] == ["queued", "running", *Outcome]
    assert [*Decision] == [*(o for o in Outcome if o is not Outcome.CANCELLED), "revise"]
    assert typing.get_args(ItemOutcome) == tuple(Outcome)
