"""Elimination of constraint rows.

The row algebra behind :class:`dolfinx_mbs.constraints.maggi.MaggiReducer`.

The constraint rows ``B(t) Delta = c(t)`` of every :mod:`dolfinx_mbs.constraints` kind are
eliminated one by one (sparse Gauss-Jordan): each independent row gets a dependent dof (its
preferred one when possible, else its largest coefficient), dependent dofs met on the right of
later rows are substituted (chains), a dof that becomes dependent is substituted into the rows
already resolved. A row that reduces to 0 = 0 is *redundant* (reported with the constraints that
imply it), one that reduces to 0 = c != 0 is *inconsistent* (an error on every rank). The result
is an expression of each dependent dof p over the independent ones k,

    Delta_p = sum_k C_pk Delta_k + g_p(t),

with coefficients and right-hand sides as jets ``[value, d/dt, d2/dt2]`` (products and
reciprocals by the rules of differentiation), so that the time derivatives of what the reducer
builds from it (A and a0) are exact. The dependent dof of each row is chosen at the first
evaluation and kept at later times.

The rows are gathered on every rank and eliminated there identically (deterministic, so every
rank reaches the same verdict); the cost grows with the number of constrained dofs, not with the
mesh. Nothing here is a PETSc object: :class:`dolfinx_mbs.constraints.maggi.MaggiReducer` makes
A and a0 of the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence, Set, Tuple, cast

import numpy as np

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.base import Constraint, Rows
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.assembly.space import FullSpace

__all__ = ["Elimination", "rate_rows_on_independent"]

#: coefficients below this fraction of their row's largest one count as cancelled
ZERO_TOL = 1e-12


def _jmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of two jets [f, f', f'']."""
    return np.array([a[0] * b[0], a[1] * b[0] + a[0] * b[1],
                     a[2] * b[0] + 2.0 * a[1] * b[1] + a[0] * b[2]])


def _jinv(a: np.ndarray) -> np.ndarray:
    """Reciprocal of a jet."""
    i = 1.0 / a[0]
    return np.array([i, -a[1] * i * i, 2.0 * a[1] * a[1] * i ** 3 - a[2] * i * i])


class _Expr:
    """Delta_p = sum_k terms[k] Delta_k + g (jets), over independent dofs k."""

    __slots__ = ("terms", "g", "rheo", "names")

    def __init__(self, terms: Dict[int, np.ndarray], g: np.ndarray, rheo: bool,
                 names: Set[str]) -> None:
        self.terms, self.g, self.rheo, self.names = terms, g, rheo, names


def _substitute(cols: Sequence[int], coefs: np.ndarray,
                exprs: Dict[int, _Expr]) -> Tuple[Dict[int, np.ndarray], list]:
    """The terms {dof: jet} of a row sum_k coef_k Delta_k with the eliminated dofs replaced by
    their expressions, and the (coef, expression) pairs so replaced."""
    terms: Dict[int, np.ndarray] = {}
    hits = []
    for k, b in zip(cols, coefs):
        e = exprs.get(k)
        if e is None:
            terms[k] = terms[k] + b if k in terms else b.copy()
            continue
        for j, cj in e.terms.items():
            v = _jmul(b, cj)
            terms[j] = terms[j] + v if j in terms else v
        hits.append((b, e))
    return terms, hits


def _gather_rows(comm: MPI.Comm, rows: Rows) -> Rows:
    """The rows of every rank, concatenated in rank order, on every rank (rheonomic when
    any rank's are: a rank without rows must not decide)."""
    if comm.size == 1:
        return rows
    parts = comm.allgather((rows.indptr, rows.cols, rows.coef, rows.rhs, rows.pivot,
                            rows.rheonomic))
    indptr = [np.zeros(1, np.int64)]
    off = 0
    for p in parts:
        indptr.append(p[0][1:] + off)
        off += p[0][-1]
    return Rows(rows.name, np.concatenate(indptr), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]).reshape(-1, 3),
                np.concatenate([p[3] for p in parts]).reshape(-1, 3),
                np.concatenate([p[4] for p in parts]), any(p[5] for p in parts))


class Elimination:
    """The elimination of the rows of ``constraints`` over ``space``, repeatable at any time
    with the dependent dofs chosen at the first evaluation.

    Args:
        space: the space whose dofs the rows number (the model's full space, or one with a
            ``where(dof)`` method that names a dof in messages).
        constraints: the constraints, in order (the list is used as it is, not copied).

    Attributes:
        redundant: one dict per redundant row, found at the first evaluation: ``constraint``
            (its name), ``implied_by`` (names of the constraints that imply it), ``dof`` (full
            index), ``where`` (body name and local dof), ``row`` (its number over all rows).
    """

    def __init__(self, space: FullSpace, constraints: Sequence[Constraint]) -> None:
        self.space = space
        self.comm = comm = space.comm
        self.constraints = constraints
        self._plan: Dict[int, int] = {}
        self.redundant: List[dict] = []
        self._starts = np.array(comm.allgather(space.rstart), dtype=np.int64)
        self._all_offsets = comm.allgather(space.offsets)

    def resolve(self, t: float, first: bool = False) -> Tuple[Dict[int, _Expr], np.ndarray]:
        """Eliminate the rows at time ``t``; returns {dependent: _Expr} and the sorted
        dependents (identical on every rank). ``first``: the first evaluation (records the
        redundant rows). Raises ValueError on every rank for inconsistent rows.

        Args:
            t: time (s).
            first: the first evaluation (records the redundant rows).

        Returns:
            ``({dependent: expression}, sorted dependents)``.
        """
        comm = self.comm
        exprs: Dict[int, _Expr] = {}
        users: Dict[int, set] = {}
        incons = None
        row_id = 0
        for c in self.constraints:
            rows = _gather_rows(comm, c.rows(self.space, t))
            for i in range(rows.n_rows):
                sl = slice(rows.indptr[i], rows.indptr[i + 1])
                rid = row_id
                row_id += 1
                g = rows.rhs[i].copy()
                rheo = rows.rheonomic
                names = {rows.name}
                scale = 0.0
                if rows.indptr[i + 1] > rows.indptr[i]:
                    scale = float(np.abs(rows.coef[sl][:, 0]).max())
                terms, hits = _substitute(rows.cols[sl].tolist(), rows.coef[sl], exprs)
                for b, e in hits:
                    g = g - _jmul(b, e.g)
                    rheo = rheo or e.rheo
                    names |= e.names
                if not rheo:
                    tol = ZERO_TOL * scale
                    terms = {k: v for k, v in terms.items() if abs(v[0]) > tol}
                if not terms:
                    # the mismatch in dof units (the row divided by its largest coefficient)
                    gap = abs(g[0]) / max(scale, 1e-300)
                    gscale = max(1.0, float(np.abs(rows.rhs[i, 0])) / max(scale, 1e-300))
                    dof = int(rows.cols[sl][0])
                    if gap <= ZERO_TOL * gscale:
                        if first:
                            self.redundant.append({"constraint": rows.name,
                                                   "implied_by": sorted(names - {rows.name})
                                                   or [rows.name],
                                                   "dof": dof, "where": self.where(dof),
                                                   "row": rid})
                    elif incons is None:
                        others = sorted(names - {rows.name}) or [rows.name]
                        b, d = self.where(dof)
                        incons = (f"inconsistent constraints: {rows.name!r} contradicts "
                                  f"{', '.join(repr(o) for o in others)} at dof {dof} (body "
                                  f"{b!r}, local dof {d}): they prescribe values that differ "
                                  f"by {gap:.3e}")
                    continue
                p = self._pivot(rid, rows.pivot[i], terms, rows.name, t)
                bp = terms.pop(p)
                inv = _jinv(bp)
                new = {k: -_jmul(v, inv) for k, v in terms.items()}
                gp = _jmul(g, inv)
                # substitute the new dependent into the rows already resolved
                for q in users.pop(p, ()):
                    e = exprs[q]
                    cq = e.terms.pop(p)
                    for k, v in new.items():
                        w = _jmul(cq, v)
                        e.terms[k] = e.terms[k] + w if k in e.terms else w
                        users.setdefault(k, set()).add(q)
                    e.g = e.g + _jmul(cq, gp)
                    e.rheo = e.rheo or rheo
                    e.names |= names
                    if not e.rheo:
                        sc = max((abs(v[0]) for v in e.terms.values()), default=0.0)
                        for k in [k for k, v in e.terms.items() if abs(v[0]) <= ZERO_TOL * sc]:
                            del e.terms[k]
                            users[k].discard(q)
                exprs[p] = _Expr(new, gp, rheo, names)
                for k in new:
                    users.setdefault(k, set()).add(p)
        checks.raise_everywhere(comm, incons)  # identical on every rank; keeps collectives matched
        deps = np.array(sorted(exprs), dtype=np.int64)
        return exprs, deps

    def _pivot(self, rid: int, preferred: int, terms: Dict[int, np.ndarray], name: str,
               t: float) -> int:
        """The dependent dof of row ``rid``: planned at the first evaluation, kept after."""
        p = self._plan.get(rid)
        big = max(abs(v[0]) for v in terms.values())
        if p is None:
            if preferred >= 0 and preferred in terms and abs(terms[preferred][0]) >= 1e-3 * big:
                p = int(preferred)
            else:  # largest coefficient, lowest index among equals: same on every rank
                p = min(terms, key=lambda k: (-abs(terms[k][0]), k))
            self._plan[rid] = p
            return p
        if p not in terms or abs(terms[p][0]) < 1e-8 * big:
            raise ValueError(f"constraint {name!r}: at t={t:g} its row no longer determines "
                             f"dof {p} (the joint geometry became singular)")
        return p

    def where(self, dof: int) -> Tuple[str, int]:
        """(body name, local unblocked dof on its owner) of a full index (of the space's own
        numbering when it defines ``where``).

        Args:
            dof: a full index.

        Returns:
            ``(body name, local dof)``, for messages.
        """
        if hasattr(self.space, "where"):
            return cast(Tuple[str, int], self.space.where(dof))
        starts = self._starts
        r = int(np.searchsorted(starts, dof, side="right") - 1)
        offs = self._all_offsets[r]
        ib = int(np.searchsorted(offs, dof - starts[r], side="right") - 1)
        return self.space.bodies[ib].name, int(dof - starts[r] - offs[ib])

    def redundancy(self) -> Mapping[Tuple[str, Tuple[str, ...]], int]:
        """{(constraint, (implying constraints...)): number of redundant rows}, read-only (the
        same on every rank)."""
        out: Dict[Tuple[str, Tuple[str, ...]], int] = {}
        for r in self.redundant:
            key = (r["constraint"], tuple(r["implied_by"]))
            out[key] = out.get(key, 0) + 1
        return FrozenMapping(out)


def rate_rows_on_independent(rows: Rows, exprs: Dict[int, _Expr], timed: set) -> Rows:
    """Velocity rows ``B Delta' = c`` over full indices rewritten over the independent dofs:
    with Delta' = A q' + a0' (a time-invariant A), ``(B A) q' = c - B a0'``, the columns still
    full indices. ``exprs``: the dependents' expressions (:meth:`Elimination.resolve`);
    ``timed``: names of the time-dependent constraints (where a0 moves the second-derivative
    jets are NaN: they would need the third derivative of a0, never formed).

    Args:
        rows: velocity rows over full indices.
        exprs: the dependents' expressions.
        timed: the dependents whose a0 moves.

    Returns:
        The rows over the independent dofs.
    """
    indptr, cols, coef, rhs = [0], [], [], rows.rhs.copy()
    for i in range(rows.n_rows):
        sl = slice(rows.indptr[i], rows.indptr[i + 1])
        terms, hits = _substitute(rows.cols[sl].tolist(), rows.coef[sl], exprs)
        for b, e in hits:
            if e.names & timed:   # the jet of a0' of this dof: a0', a0'', (unknown)
                rhs[i] -= _jmul(b, np.array([e.g[1], e.g[2], np.nan]))
        ks = sorted(terms)
        cols.extend(ks)
        coef.extend(terms[k] for k in ks)
        indptr.append(len(cols))
    return Rows(rows.name, np.array(indptr, np.int64), np.array(cols, np.int64),
                np.array(coef, dtype=float).reshape(-1, 3), rhs,  # type: ignore[type-var]
                np.full(rows.n_rows, -1, np.int64), rows.rheonomic)
