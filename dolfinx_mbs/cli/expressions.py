"""Arithmetic expressions of a case file (:mod:`dolfinx_mbs.cli.case`), parsed with :mod:`ast` and
evaluated without ``eval``.

An expression is a string such as ``"mass / (A * L)"``, ``"0.1 * sin(2 * pi * t)"`` or
``"near(x, L) and y > 0"``: numbers, names (the case's parameters; ``t`` the time; ``x, y, z``
the coordinates of a selection), ``+ - * / // % **``, comparisons (chained ones too), ``and``,
``or``, ``not``, ``a if c else b`` and calls of the functions of :data:`FUNCTIONS`. Nothing else
(no attributes, subscripts, lambdas or other calls) is accepted, so a case file cannot run code.
Evaluation is elementwise with numpy: ``x`` may be an array of coordinates, and ``and``/``or``/
``not``/``if`` then act per point.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Set, cast

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Expression", "ExpressionError", "FUNCTIONS", "CONSTANTS", "RESERVED"]


def _near(a: ArrayLike, b: ArrayLike, tol: float = 1e-8) -> np.ndarray:
    """A == b within tol (absolute, scaled by max(1, |b|))."""
    return np.abs(np.asarray(a) - b) <= tol * max(1.0, float(np.max(np.abs(b))))


#: the functions an expression may call
FUNCTIONS: Dict[str, Callable[..., Any]] = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log10": np.log10,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "abs": np.abs, "min": np.minimum, "max": np.maximum, "sign": np.sign, "floor": np.floor,
    "ceil": np.ceil, "isclose": np.isclose, "near": _near,
}
#: the constants an expression may use
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "true": True, "false": False,
             "True": True, "False": False}
#: names a case cannot give a parameter: functions, constants, time and coordinates
RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS) | {"t", "x", "y", "z"}

_BIN: Dict[type, Callable[[Any, Any], Any]] = {
        ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow}
_UNARY: Dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}


class ExpressionError(ValueError):
    """An expression that does not parse, uses what is not allowed, or names an unknown name."""


class Expression:
    """A parsed expression.

    Args:
        text: the expression.

    Attributes:
        text: as given.
        names: the free names it uses (functions and constants excluded).

    Raises:
        ExpressionError: a syntax error or a construct that is not allowed.
    """

    def __init__(self, text: str) -> None:
        self.text = str(text)
        try:
            tree = ast.parse(self.text.strip(), mode="eval")
        except SyntaxError as e:
            raise ExpressionError(f"cannot parse expression {self.text!r}: {e.msg}") from None
        self._tree = tree.body
        names: Set[str] = set()
        self._check(self._tree, names)
        self.names: FrozenSet[str] = frozenset(names)

    def _check(self, node: ast.AST, names: Set[str]) -> None:
        ok = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
              ast.Call, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
        if not isinstance(node, ok) or isinstance(node, (ast.MatMult, ast.BitAnd, ast.BitOr,
                                                          ast.BitXor, ast.LShift, ast.RShift,
                                                          ast.Invert, ast.Is, ast.IsNot,
                                                          ast.In, ast.NotIn)):
            raise ExpressionError(f"{type(node).__name__} is not allowed in expression "
                                  f"{self.text!r}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, bool)):
            raise ExpressionError(f"only numbers may appear in expression {self.text!r}, got "
                                  f"{node.value!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                what = node.func.id if isinstance(node.func, ast.Name) else ast.dump(node.func)
                raise ExpressionError(f"unknown function {what!r} in expression {self.text!r} "
                                      f"(known: {', '.join(sorted(FUNCTIONS))})")
            if node.keywords:
                raise ExpressionError(f"keyword arguments are not allowed in {self.text!r}")
            for a in node.args:
                self._check(a, names)
            return
        if isinstance(node, ast.Name) and node.id not in CONSTANTS:
            names.add(node.id)
        for child in ast.iter_child_nodes(node):
            self._check(child, names)

    def evaluate(self, env: Mapping[str, object]) -> Any:
        """The value with the names bound by ``env`` (numbers or numpy arrays).

        Args:
            env: the names' values.

        Returns:
            The value.

        Raises:
            ExpressionError: a name not in ``env``, or a failing operation (e.g. 1/0).
        """
        missing = sorted(self.names - set(env))
        if missing:
            raise ExpressionError(f"unknown name {missing[0]!r} in expression {self.text!r} "
                                  f"(known: {', '.join(sorted(env)) or 'none'})")
        try:
            with np.errstate(all="raise"):
                return self._eval(self._tree, env)
        except (ArithmeticError, FloatingPointError, TypeError, ValueError) as e:
            raise ExpressionError(f"expression {self.text!r}: {e}") from None

    def _eval(self, node: ast.AST, env: Mapping[str, object]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return CONSTANTS[node.id] if node.id in CONSTANTS else env[node.id]
        if isinstance(node, ast.BinOp):
            return _BIN[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            return np.logical_not(v) if isinstance(node.op, ast.Not) else _UNARY[type(node.op)](v)
        if isinstance(node, ast.Compare):
            left, out = self._eval(node.left, env), True
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, env)
                out = np.logical_and(out, _CMP[type(op)](left, right))
                left = right
            return out
        if isinstance(node, ast.BoolOp):
            vals = [self._eval(v, env) for v in node.values]
            f = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = vals[0]
            for v in vals[1:]:
                out = f(out, v)
            return out
        if isinstance(node, ast.IfExp):
            return np.where(self._eval(node.test, env), self._eval(node.body, env),
                            self._eval(node.orelse, env))
        call = cast(ast.Call, node)  # the one kind left (checked in _check)
        return FUNCTIONS[cast(ast.Name, call.func).id](*(self._eval(a, env) for a in call.args))

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"
