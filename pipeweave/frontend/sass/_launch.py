"""Launch numbers written as expressions of the kernel's arguments (``cdiv(n, BLOCK)``, ``M // 64 * 4``)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from ..._errors import DataError

__all__ = ["eval_launch_expr"]

_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
}
_FUNCS: dict[str, Callable[..., Any]] = {"cdiv": lambda a, b: -(-int(a) // int(b)), "min": min, "max": max}
_NUMBER = (int, float)


def _is_number(v: Any) -> bool:
    try:
        import numpy as np

        if isinstance(v, np.integer):
            return True
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return isinstance(v, _NUMBER) and not isinstance(v, bool)


def eval_launch_expr(expr: str | int, names: dict[str, Any], what: str = "grid") -> int:
    """An integer, or an arithmetic expression of launch arguments (``cdiv(n, BLOCK)``, ``M // 64 * 4``).

    ``names``: the integer launch arguments by name; ``what`` names the value in error messages.
    Raises :class:`DataError` (naming the expression) for anything else, a division by zero included.
    """
    if isinstance(expr, bool):
        raise DataError(f"{what} {expr!r} is not an integer expression", hint="e.g. 1024 or 'cdiv(n, BLOCK)'")
    if _is_number(expr):
        import math

        if not math.isfinite(float(expr)) or float(expr) != int(expr):
            raise DataError(f"{what} {expr!r} is not a whole number", hint="e.g. 1024 or 'cdiv(n, BLOCK)'")
        return int(expr)
    text = str(expr).strip()
    try:
        return int(text)
    except ValueError:
        pass

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and _is_number(node.value):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Name):
            if node.id not in names or not _is_number(names[node.id]):
                raise DataError(
                    f"{what} {text!r}: {node.id!r} is not an integer launch argument",
                    hint=f"use names given as NAME=VALUE in the signature: {sorted(names)}",
                )
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            if node.keywords or not node.args:
                raise DataError(
                    f"{what} {text!r}: {node.func.id}() takes positional arguments only",
                    hint=f"pass its arguments by position, e.g. {node.func.id}(n, BLOCK)",
                )
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise DataError(
            f"{what} {text!r} is not an integer expression",
            hint="e.g. 1024 or 'cdiv(n, BLOCK)' (+ - * // / %, cdiv, min, max)",
        )

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise DataError(f"{what} {text!r} is not an integer expression", hint="e.g. 1024 or 'cdiv(n, BLOCK)'") from None
    try:
        v = ev(tree)
    except ZeroDivisionError:
        raise DataError(
            f"{what} {text!r} divides by zero",
            hint="check the divisor and the launch arguments it uses (e.g. 'cdiv(n, BLOCK)' with BLOCK >= 1)",
        ) from None
    except TypeError as exc:  # e.g. cdiv with one argument
        raise DataError(f"{what} {text!r} cannot be evaluated: {exc}", hint="e.g. 'cdiv(n, BLOCK)'") from None
    if v != int(v):
        raise DataError(f"{what} {text!r} = {v} is not an integer", hint="use // or cdiv()")
    return int(v)
