"""The safe evaluator checks solutions' arithmetic and refuses everything else."""

from __future__ import annotations

import pytest

from agents.rubric.arithmetic import UnsafeExpression, evaluate, find_claims


@pytest.mark.parametrize(
    ("text", "value"),
    [("40 × 120 / 60", 80.0), ("(2 + 3) x 4", 20.0), ("1,200 ÷ 4", 300.0), ("-3 + 5", 2.0)],
)
def test_evaluates_plain_arithmetic(text: str, value: float) -> None:
    assert evaluate(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "2 ** 1000",
        "len('x')",
        "a + 1",
        "1 / 0",
        "9" * 300,
        "1e300 * 1e300",
    ],
)
def test_refuses_anything_but_arithmetic(text: str) -> None:
    with pytest.raises(UnsafeExpression):
        evaluate(text)


def test_finds_correct_and_wrong_claims() -> None:
    claims = find_claims("Unsold: 15 - 9 = 6. Muffins: 6 × 24 = 124, so 3+4 = 7.")
    assert [(c.expression, c.stated, c.correct) for c in claims] == [
        ("15 - 9", 6.0, True),
        ("6 × 24", 124.0, False),
        ("3+4", 7.0, True),
    ]
