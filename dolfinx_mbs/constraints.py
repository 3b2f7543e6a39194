"""Constraint kinds. Each one states rows of

    B(t) Delta = c(t)        (at velocity level: B Delta_dot + b = 0 with b = -c', for constant B)

over the model's full coordinates Delta (all dofs of all bodies, numbered by
:class:`dolfinx_mbs.space.FullSpace`), and :class:`dolfinx_mbs.maggi.MaggiReducer` eliminates them.

Every coefficient and right-hand side is a *jet* ``[value, d/dt, d2/dt2]`` so the reducer can form
the A-dot and A-ddot terms of rheonomic constraints (joints between bodies whose frames move
differently) without differentiating numerically. A row may name a preferred dependent dof
(the reducer keeps it when it can).

This module owns the row format (:class:`Rows`), the base class (:class:`Constraint`), the
helpers the kinds share (node selection, time jets, errors raised on every rank), the kinds on
one body's own dofs (:class:`Prescribed`, :class:`Clamp`, :class:`BCConstraint`) and the general
rows (:class:`LinearRows`, :class:`VelocityRows`). Joints between bodies or to the ground, and
rigid regions, are in :mod:`dolfinx_mbs.joints`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import numpy as np
from dolfinx import fem
from mpi4py import MPI

from . import compat
from .frames import differentiate

__all__ = ["Rows", "Constraint", "Clamp", "Prescribed", "BCConstraint", "LinearRows",
           "VelocityRows"]


@dataclasses.dataclass
class Rows:
    """Constraint rows produced on this rank, in CSR form: row i reads
    ``sum_j coef[j, 0] Delta[cols[j]] = rhs[i, 0]`` for j in ``indptr[i]:indptr[i+1]``.

    Attributes:
        name: the constraint's name, used in messages.
        indptr: (m + 1,) row pointers.
        cols: (nnz,) full global dof indices.
        coef: (nnz, 3) coefficient jets (value, first and second time derivative).
        rhs: (m, 3) right-hand-side jets.
        pivot: (m,) preferred dependent dof of each row, -1 for none.
        rheonomic: True when the coefficients change with time (their pattern does not).
    """

    name: str
    indptr: np.ndarray
    cols: np.ndarray
    coef: np.ndarray
    rhs: np.ndarray
    pivot: np.ndarray
    rheonomic: bool = False

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @staticmethod
    def empty(name: str) -> "Rows":
        return Rows(name, np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                    np.zeros((0, 3)), np.zeros(0, np.int64))

    @staticmethod
    def fixed(name: str, dofs: np.ndarray, values: np.ndarray) -> "Rows":
        """Rows Delta[d] = value (jets (m, 3) or values (m,))."""
        dofs = np.asarray(dofs, dtype=np.int64)
        m = len(dofs)
        vals = np.asarray(values, dtype=float)
        rhs = np.zeros((m, 3))
        if vals.ndim == 1:
            rhs[:, 0] = vals
        else:
            rhs[:] = vals
        coef = np.zeros((m, 3))
        coef[:, 0] = 1.0
        return Rows(name, np.arange(m + 1, dtype=np.int64), dofs.copy(), coef, rhs, dofs.copy())


class Constraint:
    """Base class. Subclasses set ``name`` and ``time_dependent`` and implement :meth:`rows`."""

    name: str = "constraint"
    #: True when the rows' coefficients or right-hand sides change with time.
    time_dependent: bool = False

    def rows(self, space, t: float) -> Rows:  # pragma: no cover - abstract
        raise NotImplementedError


def _raise_everywhere(comm, msg: Optional[str], exc=ValueError) -> None:
    """Raise ``exc`` on every rank if any rank has a message."""
    msgs = [m for m in comm.allgather(msg) if m]
    if msgs:
        raise exc(msgs[0])


def _time_jets(fn: Callable[[float], np.ndarray], t: float, time_scale: float, what: str):
    """Value and two derivatives of a vector function of time, shape (3, k)."""
    v = np.asarray(fn(t), dtype=float).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what}(t={t:g}) must be finite, got {v!r}")
    d1, d2 = differentiate(lambda s: np.asarray(fn(s), dtype=float).reshape(-1), t,
                            0.1 * time_scale, what, 1e-7)
    return np.stack([v, d1, d2])


def _nodes_where(body, where, name) -> np.ndarray:
    """Owned dof nodes of ``body`` where ``where(x)`` holds (x: (3, n) local coordinates);
    a wrong-shaped answer raises on every rank."""
    n_owned = body.V.dofmap.index_map.size_local
    x = body.V.tabulate_dof_coordinates()[:n_owned].T
    sel = np.asarray(where(x), dtype=bool).reshape(-1)
    msg = None
    if sel.shape != (n_owned,):
        msg = (f"{name}: `where` must return one bool per point ({n_owned}), got shape "
               f"{sel.shape}")
        sel = np.zeros(n_owned, dtype=bool)
    _raise_everywhere(body.comm, msg)
    return np.flatnonzero(sel)


def _select_nodes(body, where, facets, name) -> np.ndarray:
    """Owned dof nodes of ``body`` where a predicate holds or on tagged facets (non-empty
    overall, else ValueError on every rank)."""
    if (where is None) == (facets is None):
        raise ValueError(f"{name}: give exactly one of a predicate `where` or "
                         "facets=(meshtags, tag)")
    if where is not None and not callable(where):
        raise TypeError(f"{name}: `where` must be a callable x -> bool array, got {where!r}")
    V = body.V
    n_owned = V.dofmap.index_map.size_local
    if where is not None:
        nodes = _nodes_where(body, where, name)
    else:
        tags, tag = facets
        fdim = body.mesh.topology.dim - 1
        if tags.dim != fdim:
            raise ValueError(f"{name}: meshtags must be of facets (dim {fdim}), got "
                             f"dim {tags.dim}")
        body.mesh.topology.create_connectivity(fdim, fdim + 1)
        ents = tags.indices[tags.values == tag].astype(np.int32)
        nodes = fem.locate_dofs_topological(V, fdim, ents)
        nodes = nodes[nodes < n_owned]
    total = body.comm.allreduce(len(nodes), op=MPI.SUM)
    if total == 0:
        raise ValueError(f"{name}: the selection holds no node of body {body.name!r}")
    return np.asarray(nodes, dtype=np.int64)


def _components(components, gdim: int, name: str) -> np.ndarray:
    if components is None:
        return np.arange(gdim)
    comps = np.unique(np.asarray(list(components), dtype=np.int64))
    if comps.size == 0 or comps.min() < 0 or comps.max() >= gdim:
        raise ValueError(f"{name}: components must be a non-empty subset of 0..{gdim - 1}, "
                         f"got {components!r}")
    return comps


class Prescribed(Constraint):
    """Prescribed displacement u = g(t) (body-frame components) of some components at the nodes
    where a predicate holds or on tagged facets.

    Args:
        body: the body.
        where: ``x -> bool array`` on dof coordinates ``x`` of shape (3, n) (local frame).
        facets: ``(meshtags, tag)`` instead of ``where``.
        components: which components (default all).
        value: None (zero), a gdim-vector, or ``t -> gdim-vector`` (m); only the selected
            components are used. A callable is differentiated numerically (error-checked).
        time_scale: the shortest time over which ``value`` changes (s), for differentiation.
        name: label for messages.

    Raises:
        ValueError: on every rank, for an empty selection, components out of range, or a value
            of the wrong length.
    """

    def __init__(self, body, where=None, facets=None, components=None, value=None,
                 time_scale: float = 1.0, name: Optional[str] = None):
        self.name = name or f"prescribed({body.name})"
        gdim = body.gdim
        self.body = body
        self.components = _components(components, gdim, self.name)
        self.nodes = _select_nodes(body, where, facets, self.name)
        self.n_nodes = body.comm.allreduce(len(self.nodes), op=MPI.SUM)
        self.time_scale = float(time_scale)
        if value is None:
            self._fixed = np.zeros(gdim)
            self._fn = None
        elif callable(value):
            self._fixed = None
            self._fn = value
            v = np.asarray(value(0.0), dtype=float).reshape(-1)
            if v.shape != (gdim,):
                raise ValueError(f"{self.name}: value(t) must return {gdim} components, got "
                                 f"shape {v.shape}")
        else:
            v = np.asarray(value, dtype=float).reshape(-1)
            if v.shape != (gdim,) or not np.all(np.isfinite(v)):
                raise ValueError(f"{self.name}: value must be a finite {gdim}-vector, got "
                                 f"{value!r}")
            self._fixed, self._fn = v, None
        self.time_dependent = self._fn is not None

    def local_dofs(self) -> np.ndarray:
        """Unblocked local dof indices (owned) that this constraint fixes."""
        bs = self.body.V.dofmap.index_map_bs
        return (self.nodes[:, None] * bs + self.components[None, :]).reshape(-1)

    def rows(self, space, t: float) -> Rows:
        ib = space.bodies.index(self.body)
        start, _ = space.owned_range(ib)
        dofs = start + self.local_dofs()
        if self._fn is None:
            jets = np.zeros((3, self.body.gdim))
            jets[0] = self._fixed
        else:
            jets = _time_jets(self._fn, t, self.time_scale, f"{self.name} value")
        rhs = np.tile(jets[:, self.components].T, (len(self.nodes), 1))  # (m, 3)
        return Rows.fixed(self.name, dofs, rhs)


class Clamp(Prescribed):
    """Fix all or some displacement components of a body where a predicate holds or on facets
    (a :class:`Prescribed` displacement of zero)."""

    def __init__(self, body, where=None, facets=None, components=None,
                 name: Optional[str] = None):
        super().__init__(body, where=where, facets=facets, components=components,
                         name=name or f"clamp({body.name})")


class BCConstraint(Constraint):
    """A DOLFINx ``DirichletBC`` on a body's space (or a sub-space of it), taken as it is: its
    dofs and the values it sets when the reducer is built.

    Args:
        body: the body whose space (or sub-space) the condition lives on.
        bc: the ``dolfinx.fem.DirichletBC``.
        name: label for messages.
    """

    def __init__(self, body, bc, name: Optional[str] = None):
        self.name = name or f"dirichletbc({body.name})"
        self.body = body
        try:
            dofs, n_owned = bc.dof_indices()
        except AttributeError:
            raise TypeError(f"{self.name}: expected a dolfinx.fem.DirichletBC, got {bc!r}")
        dofs = np.asarray(dofs[:n_owned], dtype=np.int64)
        V = body.V
        n_local = V.dofmap.index_map.size_local * V.dofmap.index_map_bs
        msg = None
        if len(dofs) and dofs.max() >= n_local:
            msg = (f"{self.name}: the DirichletBC's dofs do not fit body {body.name!r} "
                   "(is it defined on another body's space?)")
        msgs = [m for m in body.comm.allgather(msg) if m]
        if msgs:
            raise ValueError(msgs[0])
        if body.comm.allreduce(len(dofs), op=MPI.SUM) == 0:
            raise ValueError(f"{self.name}: the DirichletBC constrains no dof")
        # the values it sets, read through DOLFINx itself
        u = fem.Function(V)
        vec = compat.petsc_vec(u)
        fem.petsc.set_bc(vec, [bc])
        self.dofs = dofs
        self.values = vec.getArray(readonly=True)[dofs].copy()

    def rows(self, space, t: float) -> Rows:
        ib = space.bodies.index(self.body)
        start, _ = space.owned_range(ib)
        return Rows.fixed(self.name, start + self.dofs, self.values)

def _parse_rows(name: str, rows, N: int, callables: bool):
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
                         f"got {rows!r}") from None
    if not rows:
        raise ValueError(f"{name}: no rows given")
    what = "a number or a callable t -> number" if callables else "a number"
    indptr, cols, vals = [0], [], []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not r:
            raise ValueError(f"{name}: row {i} must be a non-empty dict "
                             f"{{full_index: coefficient}}, got {r!r}")
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
                                     f"got {v!r}")
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


def _parse_rhs(name: str, rhs, m: int, arg: str = "rhs"):
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
        raise ValueError(f"{name}: {arg} must be finite, got {rhs!r}")
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

    def __init__(self, space, rows, rhs=None, time_scale: float = 1.0,
                 name: Optional[str] = None):
        self.name = name or "rows"
        self.indptr, self.cols, vals = _parse_rows(self.name, rows, space.n_global, False)
        self.vals = np.array(vals)
        m = len(self.indptr) - 1
        self.time_scale = float(time_scale)
        self._fixed, self._fn = _parse_rhs(self.name, rhs, m)
        self.time_dependent = self._fn is not None
        self.rank = space.comm.rank

    def rows(self, space, t: float) -> Rows:
        if self.rank != 0:
            return Rows.empty(self.name)
        m = len(self.indptr) - 1
        rhs = np.zeros((m, 3))
        if self._fn is None:
            rhs[:, 0] = self._fixed
        else:
            rhs[:] = _time_jets(self._fn, t, self.time_scale, f"{self.name} rhs").T
        coef = np.zeros((len(self.vals), 3))
        coef[:, 0] = self.vals
        return Rows(self.name, self.indptr, self.cols, coef, rhs, np.full(m, -1, np.int64))


class VelocityRows(Constraint):
    """Velocity constraints ``B(t) Delta' = c(t)`` (``theory.md`` section 5: B Delta' + b = 0
    with b = -c), nonholonomic ones included: they restrict the velocities, not the
    coordinates. :class:`dolfinx_mbs.maggi.MaggiReducer` does not eliminate them;
    :mod:`dolfinx_mbs.nonholonomic` builds the velocity basis from them.

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

    def __init__(self, space, rows, rhs=None, time_scale: float = 1.0,
                 name: Optional[str] = None):
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

    def rows(self, space, t: float) -> Rows:
        # evaluated on every rank (small), kept on rank 0: a failing callable raises everywhere
        m = len(self.indptr) - 1
        rhs = np.zeros((m, 3))
        coef = np.zeros((len(self.vals), 3))
        coef[:, 0] = self.vals
        msg = None
        try:
            if self._fn is None:
                rhs[:, 0] = self._fixed
            else:
                rhs[:] = _time_jets(self._fn, t, self.time_scale, f"{self.name} rhs").T
            if self._fns:
                coef[self._timed] = _time_jets(self._coefficients, t, self.time_scale,
                                               f"{self.name} coefficients").T
        except (TypeError, ValueError) as e:
            msg = f"{self.name}: {e}"
        _raise_everywhere(self.comm, msg)
        if self.comm.rank != 0:
            return Rows.empty(self.name)
        return Rows(self.name, self.indptr, self.cols, coef, rhs, np.full(m, -1, np.int64),
                    rheonomic=self.rheonomic)

