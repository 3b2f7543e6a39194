"""General constraint rows given as numbers: ``B(t) Delta = c(t)`` (:class:`LinearRows`) and
velocity rows ``B_n(t) Delta' = c_n(t)`` (:class:`VelocityRows`, eliminated by
:mod:`dolfinx_mbs.systems.velocity`), with the checks of the user's rows (a list of
``{full_index: coefficient}`` dicts, the same on every rank) and of their right-hand sides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence, Tuple

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.base import Constraint, Rows, time_jets

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.assembly.space import FullSpace

__all__ = ["LinearRows", "VelocityRows"]


def _parse_rows(name: str, rows: Sequence[Mapping[int, float | Callable[[float], float]]], N: int,
                callables: bool) -> Tuple[np.ndarray, np.ndarray, list]:
    """CSR of ``{full_index: coefficient}`` dicts, checked (identically on every rank, as the
    rows are given identically): (indptr, cols, coefficients), a coefficient being a float or,
    when ``callables``, possibly a callable ``t -> float``."""
    if isinstance(rows, dict):
        raise ValueError(f"{name}: rows must be a list of {{full_index: coefficient}} dicts, "
                         "got one dict (wrap it in a list)")
    try:
        rows = list(rows)
    except TypeError:
        raise ValueError(f"{name}: rows must be a list of {{full_index: coefficient}} dicts, "
                         f"got {checks.shown(rows)}") from None
    if not rows:
        raise ValueError(f"{name}: no rows given")
    what = "a number or a callable t -> number" if callables else "a number"
    indptr, cols, vals = [0], [], []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not r:
            raise ValueError(f"{name}: row {i} must be a non-empty dict "
                             f"{{full_index: coefficient}}, got {checks.shown(r)}")
        nonzero = False
        for k, v in sorted(r.items()):
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise ValueError(f"{name}: row {i} has a non-integer dof index {k!r}")
            k = int(k)
            if not 0 <= k < N:
                raise ValueError(f"{name}: row {i} names dof {k}, outside 0..{N - 1}")
            if callables and callable(v):
                nonzero = True  # a coefficient that changes with time
            else:
                if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
                    raise ValueError(f"{name}: row {i}, dof {k}: the coefficient must be {what}, "
                                     f"got {checks.shown(v)}")
                if not np.isfinite(v):
                    raise ValueError(f"{name}: row {i} has a non-finite coefficient")
                v = float(v)
                nonzero = nonzero or v != 0.0
            cols.append(k)
            vals.append(v)
        if not nonzero:
            raise ValueError(f"{name}: row {i} has only zero coefficients")
        indptr.append(len(cols))
    return np.array(indptr, np.int64), np.array(cols, np.int64), vals


def _parse_rhs(name: str, rhs: ArrayLike | Callable[[float], ArrayLike] | None, m: int,
               arg: str = "rhs") -> Tuple[np.ndarray, Callable[[float], ArrayLike] | None]:
    """(fixed values (m,), callable or None) of a right-hand side given as None, numbers or
    ``t -> numbers``."""
    if rhs is None:
        return np.zeros(m), None
    if callable(rhs):
        try:
            v = np.asarray(rhs(0.0), dtype=float).reshape(-1)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{name}: {arg}(t) must return {m} numbers: {e}") from None
        if v.shape != (m,):
            raise ValueError(f"{name}: {arg}(t) must return {m} numbers, got shape {v.shape}")
        return np.zeros(m), rhs
    try:
        fixed = np.asarray(rhs, float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {arg} must be None, {m} numbers or t -> numbers, got "
                         f"{rhs!r}") from None
    if fixed.shape != (m,):
        raise ValueError(f"{name}: {arg} must have {m} entries, got {fixed.shape}")
    if not np.all(np.isfinite(fixed)):
        raise ValueError(f"{name}: {arg} must be finite, got {checks.shown(rhs)}")
    return fixed, None


class LinearRows(Constraint):
    """General rows ``sum_k b_k Delta_k = c(t)`` over full dof indices (see
    :meth:`dolfinx_mbs.Model.dof`), given identically on every rank (rank 0's are used).

    Args:
        rows: a sequence of ``{full_index: coefficient}`` dicts.
        rhs: None (zeros), a sequence of numbers, or ``t -> sequence`` (then differentiated
            numerically; ``time_scale`` as for :class:`Prescribed`).
        name: label.
    """

    def __init__(self, space: FullSpace,
                 rows: Sequence[Mapping[int, float | Callable[[float], float]]],
                 rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
                 time_scale: float = 1.0, name: str | None = None) -> None:
        self.name = name or "rows"
        self.indptr, self.cols, vals = _parse_rows(self.name, rows, space.n_global, False)
        self.vals = np.array(vals)
        m = len(self.indptr) - 1
        self.time_scale = float(time_scale)
        self._fixed, self._fn = _parse_rhs(self.name, rhs, m)
        self.time_dependent = self._fn is not None
        self.rank = space.comm.rank

    def rows(self, space: FullSpace, t: float) -> Rows:
        """The given rows B Delta = c(t), with c's time jets.

        Args:
            space: the model's full space.
            t: time (s).

        Returns:
            All rows on rank 0, none elsewhere.

        Raises:
            ValueError: the right-hand side is not finite at ``t``.
        """
        if self.rank != 0:
            return Rows.empty(self.name)
        m = len(self.indptr) - 1
        rhs = np.zeros((m, 3))
        if self._fn is None:
            rhs[:, 0] = self._fixed
        else:
            rhs[:] = time_jets(self._fn, t, self.time_scale, f"{self.name} rhs").T
        coef = np.zeros((len(self.vals), 3))
        coef[:, 0] = self.vals
        return Rows(self.name, self.indptr, self.cols, coef, rhs, np.full(m, -1, np.int64))


class VelocityRows(Constraint):
    """Velocity constraints ``B(t) Delta' = c(t)`` (``docs/theory.md`` section 5: B Delta' + b = 0
    with b = -c), nonholonomic ones included: they restrict the velocities, not the
    coordinates. :class:`dolfinx_mbs.constraints.maggi.MaggiReducer` does not eliminate them;
    :mod:`dolfinx_mbs.systems.velocity` builds the velocity basis from them.

    Args:
        space: the model's full space.
        rows: a sequence of ``{full_index: coefficient}`` dicts, given identically on every
            rank; each coefficient a number or a callable ``t -> number`` (B(t); differentiated
            numerically with error control, ``time_scale`` the shortest time over which it
            changes). A callable coefficient keeps its place in the row's pattern even where it
            is zero.
        rhs: c: None (zeros), numbers, or ``t -> numbers`` (differentiated the same way).
        time_scale: see above (s).
        name: label.

    ``rows()`` gives, as every constraint kind, the rows with their coefficient and right-hand
    side jets ``[value, d/dt, d2/dt2]`` (here of B and c, the velocity-level quantities).
    """

    def __init__(self, space: FullSpace,
                 rows: Sequence[Mapping[int, float | Callable[[float], float]]],
                 rhs: ArrayLike | Callable[[float], ArrayLike] | None = None,
                 time_scale: float = 1.0, name: str | None = None) -> None:
        self.name = name or "velocity rows"
        self.comm = space.comm
        if not (isinstance(time_scale, (int, float)) and np.isfinite(time_scale)
                and time_scale > 0):
            raise ValueError(f"{self.name}: time_scale must be a positive number, got "
                             f"{time_scale!r}")
        self.time_scale = float(time_scale)
        self.indptr, self.cols, vals = _parse_rows(self.name, rows, space.n_global, True)
        self._timed = np.array([i for i, v in enumerate(vals) if callable(v)], np.int64)
        self._fns = [vals[i] for i in self._timed]
        self.vals = np.array([0.0 if callable(v) else v for v in vals])
        m = len(self.indptr) - 1
        self._fixed, self._fn = _parse_rhs(self.name, rhs, m)
        if self._fns:  # check the coefficient callables once, identically on every rank
            try:
                b = np.asarray(self._coefficients(0.0), dtype=float)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{self.name}: a callable coefficient must return one number "
                                 f"(at t=0: {e})") from None
            if b.shape != (len(self._fns),):
                raise ValueError(f"{self.name}: every callable coefficient must return one "
                                 "number")
        self.rheonomic = bool(self._fns)
        self.time_dependent = self.rheonomic or self._fn is not None

    def _coefficients(self, t: float) -> np.ndarray:
        return np.array([float(f(t)) for f in self._fns])

    def rows(self, space: FullSpace, t: float) -> Rows:
        # evaluated on every rank (small), kept on rank 0: a failing callable raises everywhere
        """The velocity rows B(t) Delta' = c(t) at ``t``, with the jets of B and c.

        Args:
            space: the model's full space.
            t: time (s).

        Returns:
            All rows on rank 0, none elsewhere.

        Raises:
            ValueError: a coefficient or the right-hand side is not finite at ``t`` (every rank).
        """
        m = len(self.indptr) - 1
        rhs = np.zeros((m, 3))
        coef = np.zeros((len(self.vals), 3))
        coef[:, 0] = self.vals
        msg = None
        try:
            if self._fn is None:
                rhs[:, 0] = self._fixed
            else:
                rhs[:] = time_jets(self._fn, t, self.time_scale, f"{self.name} rhs").T
            if self._fns:
                coef[self._timed] = time_jets(self._coefficients, t, self.time_scale,
                                               f"{self.name} coefficients").T
        except (TypeError, ValueError) as e:
            msg = f"{self.name}: {e}"
        checks.raise_everywhere(self.comm, msg)
        if self.comm.rank != 0:
            return Rows.empty(self.name)
        return Rows(self.name, self.indptr, self.cols, coef, rhs, np.full(m, -1, np.int64),
                    rheonomic=self.rheonomic)

