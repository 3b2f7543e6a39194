"""The reading half of a case (:mod:`dolfinx_mbs.cli.case`): the TOML file checked key by key
before anything is built, its parameters evaluated, and the typed accessors (``word``,
``integer``, ``flag``, ``numbers``, ``value``, ``where``, ``call``) through which
:mod:`dolfinx_mbs.cli.build` and :mod:`dolfinx_mbs.cli.analyses` read it.
"""

from __future__ import annotations

import inspect
import re
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
    Tuple,
    cast,
)

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.bodies.attachments import COEFFICIENTS, EXTRA
from dolfinx_mbs.cli.casefile import WORD_ARGUMENTS, CaseError, CaseText, dotted
from dolfinx_mbs.cli.expressions import RESERVED, Expression, ExpressionError
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    import os

    from dolfinx_mbs.cli.casefile import Path_

__all__ = ["CaseReader", "CaseError", "MATERIALS", "FRAMES", "ANALYSES"]

#: the material laws a case may name (classes of :mod:`dolfinx_mbs.materials`)
MATERIALS = ("LinearElastic", "PlaneStress", "PlaneStrain", "Orthotropic", "Anisotropic")
#: the frames a case may name (classes of :mod:`dolfinx_mbs.frames`)
FRAMES = ("ConstantSpin", "SpinUp", "Planar", "Prescribed", "Stationary")
#: the analyses, in the order they run
ANALYSES = ("static", "frequencies", "campbell", "unbalance", "transient")

_TOP = {"title", "description", "parameters", "mesh", "material", "frame", "body", "gravity",
        "clamp", "prescribe", "load", "bearing", "disk", "analysis"}
_MESH = {"box": {"size", "lower", "upper", "cells", "cell"},
         "rectangle": {"size", "lower", "upper", "cells", "cell"},
         "file": {"path", "gdim"}, "gmsh": {"script", "gdim", "numbers"}}
_BODY = {"degree", "stiffening", "name"}
_CLAMP = {"where", "facets", "components", "name"}
_PRESCRIBE = _CLAMP | {"value", "time_scale"}
_LOAD = {"body_force", "traction", "where", "facets", "point", "force", "local"}
_BEARING = {"where", "facets", "name", "speeds", "extrapolate"} | set(COEFFICIENTS + EXTRA)
_DISK = {"where", "facets", "name", "mass", "polar", "diametral"}
_ANALYSIS = {"static": {"t", "probes"},
             "frequencies": {"t", "n", "gyroscopic", "shift"},
             "campbell": {"speeds", "n", "t", "engine_orders", "shift", "damping"},
             "unbalance": {"speeds", "unbalance", "probes", "t"},
             "transient": {"t_end", "dt", "t0", "formulation", "probes", "start",
                           "spectral_radius", "options", "energy", "output", "output_every"}}


def _signature(cls: type) -> Tuple[str, ...]:
    return tuple(p for p in inspect.signature(cls.__init__).parameters  # type: ignore[misc]
                 if p != "self")


class CaseReader:
    """A case file, checked, with its parameters evaluated: what building a case and running
    its analyses read (:class:`~dolfinx_mbs.cli.case.Case` adds both).

    Args:
        path: the TOML file.
        overrides: ``(dotted key, value)`` pairs set over the file (``--set``).

    Attributes:
        path: the file.
        data: the case as a dict (overrides applied).
        parameters: the evaluated ``[parameters]``: name -> number.

    Raises:
        CaseError: an unknown key, a value of the wrong kind, an expression that does not
            parse or names an unknown parameter; the message names file, line and key.
    """

    def __init__(self, path: str | os.PathLike,
                 overrides: Iterable[Tuple[str, object]] = ()) -> None:
        self.text = CaseText(path, overrides)
        self.path = self.text.path
        self.data = self.text.data
        self.parameters = self._parameters()
        self._check()
        self._check_set_parameters()

    # -- errors and values ------------------------------------------------------------------
    def error(self, path: Path_, message: str) -> CaseError:
        """A :class:`CaseError` for the key at ``path``.

        Args:
            path: the key's path (a tuple of keys and indices).
            message: what is wrong.

        Returns:
            The error.
        """
        return self.text.error(tuple(path), message)

    def get(self, path: Path_, default: Any = None) -> Any:
        """The raw value at ``path`` (a tuple of keys and indices), or ``default``.

        Args:
            path: the key's path (a tuple of keys and indices).
            default: the value when the key is absent.

        Returns:
            The raw value, or ``default``.
        """
        node = self.data
        for p in path:
            try:
                node = node[p]
            except (KeyError, IndexError, TypeError):
                return default
        return node

    def keys(self, path: Path_, allowed: Iterable[str], what: str = "key") -> Mapping[str, Any]:
        """The table at ``path``, checked to hold only ``allowed`` keys.

        Args:
            path: the key's path (a tuple of keys and indices).
            allowed: the keys the table may hold.
            what: what the keys are, in the message.

        Returns:
            The table (read-only).
        """
        table = self.get(path, {})
        if not isinstance(table, dict):
            raise self.error(path, f"must be a table, got {table!r}")
        for k in table:
            if k not in allowed:
                raise self.text.unknown(tuple(path) + (k,), allowed, what)
        return FrozenMapping(table)

    def _parameters(self) -> Dict[str, float]:
        raw = self.get(("parameters",), {})
        if not isinstance(raw, dict):
            raise self.error(("parameters",), "must be a table of name = value")
        exprs = {}
        for name, v in raw.items():
            path = ("parameters", name)
            if not name.isidentifier() or name in RESERVED:
                raise self.error(path, f"{name!r} cannot name a parameter (an identifier other "
                                       f"than {', '.join(sorted(RESERVED))})")
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise self.error(path, f"must be a number or an expression, got {v!r}")
            exprs[name] = self._expression(path, v) if isinstance(v, str) else float(v)
        values: Dict[str, float] = {}
        while len(values) < len(exprs):  # in dependency order
            ready = [n for n, e in exprs.items() if n not in values and
                     (not isinstance(e, Expression) or e.names <= set(values))]
            if not ready:
                n = next(n for n in exprs if n not in values)
                expr = cast(Expression, exprs[n])  # a number is always ready
                bad = sorted(expr.names - set(exprs))
                raise self.error(("parameters", n), f"unknown name {bad[0]!r} in {expr.text!r}"
                                 if bad else f"{expr.text!r} depends on itself (a cycle)")
            for n in ready:
                e = exprs[n]
                values[n] = (self._scalar(("parameters", n), e.evaluate(values))
                             if isinstance(e, Expression) else e)
        return values

    def _expression(self, path: Path_, text: str) -> Expression:
        try:
            return Expression(text)
        except ExpressionError as e:
            raise self.error(path, str(e)) from None

    def _scalar(self, path: Path_, v: Any) -> float:
        try:
            return checks.real(np.asarray(v, dtype=float).reshape(()), dotted(path))
        except (TypeError, ValueError):
            raise self.error(path, f"must be a finite number, got {checks.shown(v)}") from None

    def _strings(self, raw: Any) -> Iterator[str]:
        if isinstance(raw, str):
            yield raw
        elif isinstance(raw, (list, tuple)):
            for r in raw:
                yield from self._strings(r)

    def numbers(self, path: Path_, raw: Any, env: Mapping[str, object]) -> Any:
        """``raw`` (a number, an expression or nested lists of them) evaluated with the names of
        ``env``; errors name ``path``.

        Args:
            path: the key's path (a tuple of keys and indices).
            raw: the value as read.
            env: the names an expression may use, with their values.

        Returns:
            The numbers.
        """
        if isinstance(raw, (list, tuple)):
            return [self.numbers(path, r, env) for r in raw]
        if isinstance(raw, (bool, int, float)) or raw is None:
            return raw
        if isinstance(raw, np.ndarray):
            return raw.tolist()
        if isinstance(raw, str):
            try:
                return self._scalar(path, self._expression(path, raw).evaluate(env))
            except ExpressionError as e:
                raise self.error(path, str(e)) from None
        raise self.error(path, f"must be a number, an expression or a list of them, got {raw!r}")

    def value(self, path: Path_, default: Any = None, time: bool = False) -> Any:
        """The value at ``path`` with its expressions evaluated: numbers, or (nested) lists of
        numbers. With ``time=True`` a value whose expressions use ``t`` becomes a function of
        time (returning a float or a numpy array); otherwise ``t`` is an unknown name.

        Args:
            path: the key's path (a tuple of keys and indices).
            default: the value when the key is absent.
            time: a value whose expressions use ``t`` becomes a function of time.

        Returns:
            The value, or ``default``.
        """
        raw = self.get(path, default)
        if raw is None:
            return None
        uses_t = time and any("t" in self._expression(path, s).names for s in self._strings(raw))
        if not uses_t:
            v = self.numbers(path, raw, self.parameters)
            return np.asarray(v, dtype=float) if isinstance(v, list) else v

        def f(t: float) -> Any:
            v = self.numbers(path, raw, dict(self.parameters, t=float(t)))
            return np.asarray(v, dtype=float) if isinstance(v, list) else v
        return f

    def word(self, path: Path_, choices: Sequence[str], default: str | None = None) -> str | None:
        """A string value that must be one of ``choices``.

        Args:
            path: the key's path (a tuple of keys and indices).
            choices: the allowed values.
            default: the value when the key is absent.

        Returns:
            The string, or ``default``.
        """
        v = self.get(path, default)
        if v is not None and v not in choices:
            raise self.text.unknown(tuple(path), choices, str(path[-1]), name=v)
        return cast("str | None", v)

    def integer(self, path: Path_, default: int | None = None, minimum: int = 0) -> int | None:
        """An integer value >= ``minimum``.

        Args:
            path: the key's path (a tuple of keys and indices).
            default: the value when the key is absent.
            minimum: the smallest allowed value.

        Returns:
            The integer, or ``default``.
        """
        v = self.get(path, default)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < minimum):
            raise self.error(path, f"must be an integer >= {minimum}, got {v!r}")
        return v

    def flag(self, path: Path_, default: bool) -> bool:
        """A true/false value.

        Args:
            path: the key's path (a tuple of keys and indices).
            default: the value when the key is absent.

        Returns:
            The value, or ``default``.
        """
        v = self.get(path, default)
        if not isinstance(v, bool):
            raise self.error(path, f"must be true or false, got {v!r}")
        return v

    def where(self, path: Path_) -> Callable[[np.ndarray], np.ndarray] | None:
        """A selection predicate ``x -> bool array`` from the expression (of x, y, z and the
        parameters) at ``path``.

        Args:
            path: the key's path (a tuple of keys and indices).

        Returns:
            The predicate, or None when the key is absent.
        """
        raw = self.get(path)
        if isinstance(raw, bool):
            raw = "true" if raw else "false"
        if not isinstance(raw, str):
            raise self.error(path, f"must be an expression of x, y, z, got {raw!r}")
        expr = self._expression(path, raw)
        bad = sorted(expr.names - set(self.parameters) - {"x", "y", "z"})
        if bad:
            raise self.error(path, f"unknown name {bad[0]!r} in {raw!r}")

        def predicate(x: np.ndarray) -> np.ndarray:
            env = dict(self.parameters, x=x[0], y=x[1], z=x[2])
            try:
                v = expr.evaluate(env)
            except ExpressionError as e:
                raise self.error(path, str(e)) from None
            return np.broadcast_to(np.asarray(v, dtype=bool), x.shape[1:]).copy()
        return predicate

    # -- checks of the whole file -------------------------------------------------------------
    def _check(self) -> None:
        self.keys((), _TOP, "table")
        kind = self.word(("mesh", "type"), tuple(_MESH))
        if kind is None:
            raise self.error(("mesh",), f"needs type = one of {', '.join(_MESH)}")
        self.keys(("mesh",), _MESH[kind] | {"type"})
        law = self.word(("material", "law"), MATERIALS)
        if law is None:
            raise self.error(("material",), f"needs law = one of {', '.join(MATERIALS)}")
        from dolfinx_mbs import materials

        self.keys(("material",), set(_signature(getattr(materials, law))) | {"law"},
                   f"argument of {law}")
        frame = self.word(("frame", "type"), FRAMES, "ConstantSpin")
        assert frame is not None  # (a default is given)
        from dolfinx_mbs import frames

        self.keys(("frame",), set(_signature(getattr(frames, frame))) | {"type"},
                   f"argument of {frame}")
        self.keys(("body",), _BODY)
        for name, allowed in (("clamp", _CLAMP), ("prescribe", _PRESCRIBE), ("load", _LOAD),
                              ("bearing", _BEARING), ("disk", _DISK)):
            entries = self.get((name,), [])
            if not isinstance(entries, list):
                raise self.error((name,), f"write it as [[{name}]] tables")
            for i in range(len(entries)):
                self.keys((name, i), allowed)
        analyses = self.keys(("analysis",), set(ANALYSES), "analysis")
        if not analyses:
            raise self.error(("analysis",), f"the case has no analysis: add a table "
                                            f"[analysis.<kind>], kind one of {', '.join(ANALYSES)}")
        for a in analyses:
            self.keys(("analysis", a), _ANALYSIS[a])
        # every expression parses and names only parameters (t, x, y, z where they apply)
        self._check_names(self.data, ())

    def _check_names(self, node: Any, path: Path_) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if path + (k,) not in {("parameters",), ("analysis", "transient", "options")}:
                    self._check_names(v, path + (k,))
            return
        if isinstance(node, list):
            for i, v in enumerate(node):
                # inside a value (not an array of tables): keep the key's path
                self._check_names(v, path + (i,) if isinstance(v, dict) else path)
            return
        if not isinstance(node, str) or self._is_word(path):
            return
        names = set(self.parameters) | {"t"}
        if path[-1] == "where":
            names |= {"x", "y", "z"}
        bad = sorted(self._expression(path, node).names - names)
        if bad:
            raise self.error(path, f"unknown name {bad[0]!r} in {node!r} (parameters: "
                                   f"{', '.join(sorted(self.parameters)) or 'none'})")

    def _expressions(self, node: Any, path: Path_) -> Iterator[Tuple[Path_, Expression]]:
        """``(path, Expression)`` of every expression of the case (parameters included)."""
        if isinstance(node, dict):
            for k, v in node.items():
                if path + (k,) != ("analysis", "transient", "options"):
                    yield from self._expressions(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from self._expressions(v, path + (i,) if isinstance(v, dict) else path)
        elif isinstance(node, str) and path and not self._is_word(path):
            yield path, self._expression(path, node)

    def _check_set_parameters(self) -> None:
        """Refuse a parameter made by ``--set`` that no expression of the case uses.

        Such a parameter is a misspelling, and a sweep over it would repeat one case.
        """
        for path in self.text.created:
            if len(path) != 2 or path[0] != "parameters":
                continue
            used = any(path[1] in e.names for p, e in self._expressions(self.data, ())
                       if p != path)
            if not used:
                known = [n for n in self.parameters if ("parameters", n) not in
                         self.text.created]
                raise self.text.unknown(path, known, "parameter of the case (none of its "
                                        "expressions uses it)")

    @staticmethod
    def _is_word(path: Path_) -> bool:
        key = path[-1]
        return (path[:1] in {("title",), ("description",)} or key in WORD_ARGUMENTS
                or path in {("mesh", "type"), ("mesh", "cell"), ("mesh", "path"),
                            ("mesh", "script"), ("material", "law"), ("frame", "type"),
                            ("body", "stiffening"), ("body", "name"),
                            ("analysis", "transient", "formulation"),
                            ("analysis", "transient", "start"),
                            ("analysis", "transient", "output")}
                or key in ("name", "facets", "at")
                or path in {("analysis", "campbell", "speeds"), ("analysis", "unbalance", "speeds"),
                            ("analysis", "unbalance", "probes")})

    def call(self, path: Path_, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, its TypeError or ValueError raised as a :class:`CaseError`.

        The package's own message is kept. The error is placed at the key of the table at
        ``path`` that the message starts with (the package names the argument first: ``E must
        be positive``), so that a value given with ``--set`` is blamed on the command line and
        one in the file on its own line; else at ``path``, naming the values set under it with
        ``--set``.

        Args:
            path: the key's path (a tuple of keys and indices).
            fn: the function.
            *args: its positional arguments.
            **kwargs: its keyword arguments.

        Returns:
            What ``fn`` returns.
        """
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            if isinstance(e, CaseError):
                raise
            raise self._placed(tuple(path), str(e)) from None

    def _placed(self, path: Path_, message: str) -> CaseError:
        table = self.get(path)
        if isinstance(table, dict):
            for k in table:
                if re.match(rf"{re.escape(str(k))}\b", message):
                    return self.error(path + (k,), message)
        under = [label for p, label in self.text.overridden.items() if p[:len(path)] == path
                 and len(p) > len(path)]
        if under and not self.text.where(path).startswith("--set"):
            message += f" (values set with --set: {', '.join(under)})"
        return self.error(path, message)
