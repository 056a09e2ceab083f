"""A safe evaluator for the arithmetic claims in a stated solution (an AST whitelist, no eval)."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

_OPS: dict[type[ast.AST], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_MAX_MAGNITUDE = 1e12
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
# "40 × 120 / 60 = 80", "3*4=12", "(2 + 3) x 4 = 20"
CLAIM = re.compile(
    rf"(?P<expr>[(\s]*{_NUM}(?:\s*[-+*/×÷x]\s*[(\s]*{_NUM}[)\s]*)+)\s*=\s*(?P<result>-?{_NUM})"
)


class UnsafeExpression(ValueError):
    """The text is not plain arithmetic on numbers."""


def evaluate(expression: str) -> float:
    """Evaluate + − × ÷ and parentheses over decimal numbers; anything else is refused."""
    text = expression.replace("×", "*").replace("÷", "/").replace(",", "")
    text = re.sub(r"(?<=[\d)\s])x(?=[\s\d(])", "*", text)
    if len(text) > 200:
        raise UnsafeExpression("expression too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpression(str(exc)) from exc
    return _eval(tree.body)


def _eval(node: ast.AST) -> float:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise UnsafeExpression("division by zero")
        value = _OPS[type(node.op)](left, right)
        if abs(value) > _MAX_MAGNITUDE:
            raise UnsafeExpression("value out of range")
        return value
    raise UnsafeExpression(f"not arithmetic: {type(node).__name__}")


@dataclass(frozen=True)
class Claim:
    """``expression = stated`` found in a solution, with the value it really has."""

    text: str
    expression: str
    stated: float
    actual: float

    @property
    def correct(self) -> bool:
        """Equal up to rounding to two decimals."""
        return abs(self.actual - self.stated) <= max(0.005, 1e-6 * abs(self.actual))


def find_claims(solution: str) -> list[Claim]:
    """Every checkable arithmetic claim in ``solution``."""
    claims = []
    for match in CLAIM.finditer(solution):
        try:
            actual = evaluate(match["expr"])
        except UnsafeExpression:
            continue
        stated = float(match["result"].replace(",", ""))
        claims.append(Claim(match.group(0).strip(), match["expr"].strip(), stated, actual))
    return claims


def format_number(value: float) -> str:
    """12.0 -> '12', 2.5 -> '2.5', 1/3 -> '0.33'."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
