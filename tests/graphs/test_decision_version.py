"""The decision code's version: a panel's identity holds ``graphs.scoring.DECISION_VERSION``, so a
record measured under one decision logic warrants nothing under another. This test keeps the
constant honest: it pins a hash of the code's syntax tree (comments and docstrings left out) per
version, and fails when the code changes while the version does not."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from types import ModuleType
from typing import Any

from agents import judges
from graphs import refinement, scoring
from graphs.scoring import DECISION_VERSION

# When this fails: the code that turns verdicts into a decision changed. Bump DECISION_VERSION in
# graphs/scoring.py (records of the old logic then warrant nothing, as they should) and pin the new
# version with the hash the failure prints. A change that cannot alter any decision (a rename, a
# log line) may keep the version: then replace the hash under the current version.
PINNED = {
    "decide@1": "5b790691a18d",  # RoundScore renamed PanelScore (one name per concept): no decision changed
    "decide@2": "f67ab8acb7fe",  # a model panel's acceptance resting on an unverified step is held (#49)
}
_CODE: list[tuple[ModuleType, tuple[str, ...]]] = [
    (scoring, ()),  # the whole module: Q, decide, gate, certify
    (
        refinement,
        (
            "score",
            "answer_unverified",
            "round_reported",
            "degenerate_panel",
            "same_version",
            "votes_of",
            "_spaced",
            "_normal",
        ),
    ),
    (judges, ("degenerate", "_copied", "_junk", "_words", "_text_fields")),
]


def _tree(source: str) -> str:
    """The syntax tree without docstrings or the version constant itself."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        body: Any = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    tree.body = [
        n
        for n in tree.body
        if not (
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "DECISION_VERSION" for t in n.targets)
        )
    ]
    return ast.dump(tree)


def decision_code_hash() -> str:
    """12 hex digits of the SHA-256 of the decision code's syntax trees."""
    digest = hashlib.sha256()
    for module, names in _CODE:
        sources = (
            [inspect.getsource(module)]
            if not names
            else [inspect.getsource(getattr(module, n)) for n in names]
        )
        for source in sources:
            digest.update(_tree(source).encode("utf-8"))
    return digest.hexdigest()[:12]


def test_the_decision_version_moves_with_the_decision_code() -> None:
    current = decision_code_hash()
    assert PINNED.get(DECISION_VERSION) == current, (
        f"the decision code hashes to {current}, pinned for {DECISION_VERSION}: "
        f"{PINNED.get(DECISION_VERSION)}. Bump graphs.scoring.DECISION_VERSION and pin the new hash "
        "(see the comment above PINNED)."
    )


def test_comments_and_docstrings_do_not_count() -> None:
    plain = "def f(x):\n    return x + 1\n"
    annotated = 'def f(x):\n    """Add one."""\n    # why\n    return x + 1  # one\n'
    assert _tree(plain) == _tree(annotated) != _tree("def f(x):\n    return x + 2\n")
