"""Constraint kinds.

Each one states rows of

    B(t) Delta = c(t)        (at velocity level: B Delta_dot + b = 0 with b = -c', for constant B)

over the model's full coordinates Delta (all dofs of all bodies, numbered by
:class:`dolfinx_mbs.assembly.space.FullSpace`), and
:class:`dolfinx_mbs.constraints.maggi.MaggiReducer` eliminates them.

Every coefficient and right-hand side is a *jet* ``[value, d/dt, d2/dt2]`` so the reducer can form
the A-dot and A-ddot terms of rheonomic constraints (joints between bodies whose frames move
differently) without differentiating numerically. A row may name a preferred dependent dof
(the reducer keeps it when it can).

This module owns the row format (:class:`Rows`), the base class (:class:`Constraint`), the
helpers the kinds share (node selection, time jets, errors raised on every rank), the kinds on
one body's own dofs (:class:`Prescribed`, :class:`Clamp`, :class:`BCConstraint`) and the general
rows given as numbers (:class:`dolfinx_mbs.constraints.rows.LinearRows`,
:class:`dolfinx_mbs.constraints.rows.VelocityRows`) are in :mod:`dolfinx_mbs.constraints.rows`.
Joints between bodies or to the ground, and rigid regions, are in
:mod:`dolfinx_mbs.constraints.joints`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Sequence, Tuple, cast

import numpy as np
from dolfinx import fem
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.frames.prescribed import differentiate

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body

__all__ = ["Rows", "Constraint", "Clamp", "Prescribed", "BCConstraint", "nodes_where",
           "select_nodes", "time_jets"]


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
        """The number of rows."""
        return len(self.indptr) - 1

    @staticmethod
    def empty(name: str) -> "Rows":
        """No rows.

        Args:
            name: the constraint's name, for messages.

        Returns:
            Rows with none in them (what a rank without rows gives).
        """
        return Rows(name, np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                    np.zeros((0, 3)), np.zeros(0, np.int64))

    @staticmethod
    def fixed(name: str, dofs: np.ndarray, values: np.ndarray) -> "Rows":
        """Rows Delta[d] = value (jets (m, 3) or values (m,)).

        Args:
            name: the constraint's name, in messages.
            dofs: the full indices.
            values: jets (m, 3) or values (m,).

        Returns:
            The rows.
        """
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

    def rows(self, space: FullSpace, t: float) -> Rows:  # pragma: no cover - abstract
        """The constraint's rows B(t) Delta = c(t) at time ``t``.

        Coefficients and right-hand sides are jets ``[value, d/dt, d2/dt2]``.

        Args:
            space: the model's full space (global indices of the bodies' dofs).
            t: time (s).

        Returns:
            The rows this rank contributes.
        """
        raise NotImplementedError


def time_jets(fn: Callable[[float], ArrayLike], t: float, time_scale: float,
              what: str) -> np.ndarray:
    """Value and two derivatives of a vector function of time, shape (3, k).

    Args:
        fn: ``t -> vector``.
        t: time (s).
        time_scale: the motion's time scale (s): the differences' first step is a tenth of it.
        what: the function's name, in messages.

    Returns:
        The value and the two derivatives, shape (3, k).
    """
    v = np.asarray(fn(t), dtype=float).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what}(t={t:g}) must be finite, got {checks.shown(v)}")
    d1, d2 = differentiate(lambda s: np.asarray(fn(s), dtype=float).reshape(-1), t,
                            0.1 * time_scale, what, 1e-7)
    return np.stack([v, d1, d2])


def nodes_where(body: Body, where: Callable[[np.ndarray], np.ndarray] | None,
                name: str) -> np.ndarray:
    """Owned dof nodes of ``body`` where ``where(x)`` holds (x: (3, n) local coordinates);
    a wrong-shaped answer raises on every rank.

    Args:
        body: the body.
        where: a predicate ``x -> bool array`` on local coordinates (3, n), or None.
        name: the constraint's name, in messages.

    Returns:
        The local node indices.
    """
    if where is None:  # (on every rank alike)
        raise TypeError(f"{name}: give a predicate `where` (x -> bool array)")
    n_owned = body.V.dofmap.index_map.size_local
    x = body.V.tabulate_dof_coordinates()[:n_owned].T
    with checks.collective(body.comm, f"{name}: `where`"):
        sel = np.asarray(where(x), dtype=bool).reshape(-1)
    msg = None
    if sel.shape != (n_owned,):
        msg = (f"{name}: `where` must return one bool per point ({n_owned}), got shape "
               f"{sel.shape}")
        sel = np.zeros(n_owned, dtype=bool)
    checks.raise_everywhere(body.comm, msg)
    return np.flatnonzero(sel)


def select_nodes(body: Body, where: Callable[[np.ndarray], np.ndarray] | None,
                 facets: Tuple[MeshTags, int] | None, name: str) -> np.ndarray:
    """Owned dof nodes of ``body`` where a predicate holds or on tagged facets (non-empty
    overall, else ValueError on every rank).

    Args:
        body: the body.
        where: a predicate ``x -> bool array`` on local coordinates (3, n), or None.
        facets: ``(meshtags, tag)`` of the facets, or None.
        name: the constraint's name, in messages.

    Returns:
        The local node indices.
    """
    if (where is None) == (facets is None):
        raise ValueError(f"{name}: give exactly one of a predicate `where` or "
                         "facets=(meshtags, tag)")
    if where is not None and not callable(where):
        raise TypeError(f"{name}: `where` must be a callable x -> bool array, got {where!r}")
    V = body.V
    n_owned = V.dofmap.index_map.size_local
    if where is not None:
        nodes = nodes_where(body, where, name)
    else:
        assert facets is not None  # (exactly one of where and facets, checked above)
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


def _components(components: Sequence[int] | None, gdim: int, name: str) -> np.ndarray:
    if components is None:
        return np.arange(gdim)
    comps = np.unique(np.asarray(list(components), dtype=np.int64))
    if comps.size == 0 or comps.min() < 0 or comps.max() >= gdim:
        raise ValueError(f"{name}: components must be a non-empty subset of 0..{gdim - 1}, "
                         f"got {checks.shown(components)}")
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

    def __init__(self, body: Body, where: Callable[[np.ndarray], np.ndarray] | None = None,
                 facets: Tuple[MeshTags, int] | None = None,
                 components: Sequence[int] | None = None,
                 value: ArrayLike | Callable[[float], ArrayLike] | None = None,
                 time_scale: float = 1.0, name: str | None = None) -> None:
        self.name = name or f"prescribed({body.name})"
        gdim = body.gdim
        self.body = body
        self.components = _components(components, gdim, self.name)
        self.nodes = select_nodes(body, where, facets, self.name)
        self.n_nodes = body.comm.allreduce(len(self.nodes), op=MPI.SUM)
        self.time_scale = float(time_scale)
        self._fixed: np.ndarray | None
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
        return cast(np.ndarray, (self.nodes[:, None] * bs + self.components[None, :]).reshape(-1))

    def rows(self, space: FullSpace, t: float) -> Rows:
        """Rows Delta[d] = g(t) for the prescribed nodes' components, with g's time jets.

        Args:
            space: the model's full space.
            t: time (s).

        Returns:
            The rows of this rank's owned nodes.

        Raises:
            ValueError: the prescribed value is not finite at ``t``.
        """
        ib = space.bodies.index(self.body)
        start, _ = space.owned_range(ib)
        dofs = start + self.local_dofs()
        if self._fn is None:
            jets = np.zeros((3, self.body.gdim))
            jets[0] = self._fixed
        else:
            jets = time_jets(self._fn, t, self.time_scale, f"{self.name} value")
        rhs = np.tile(jets[:, self.components].T, (len(self.nodes), 1))  # (m, 3)
        return Rows.fixed(self.name, dofs, rhs)


class Clamp(Prescribed):
    """Fix all or some displacement components of a body where a predicate holds or on facets
    (a :class:`Prescribed` displacement of zero).

    Args:
        body: the body.
        where: a predicate ``x -> bool array`` on local coordinates (3, n), or None.
        facets: ``(meshtags, tag)`` of the facets, or None.
        components: the fixed components (None: all).
        name: the constraint's name (None: a default).
    """

    def __init__(self, body: Body, where: Callable[[np.ndarray], np.ndarray] | None = None,
                 facets: Tuple[MeshTags, int] | None = None,
                 components: Sequence[int] | None = None, name: str | None = None) -> None:
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

    def __init__(self, body: Body, bc: fem.DirichletBC, name: str | None = None) -> None:
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

    def rows(self, space: FullSpace, t: float) -> Rows:
        """Rows Delta[d] = value for the DirichletBC's owned dofs (time-invariant).

        Args:
            space: the model's full space.
            t: time (s), unused.

        Returns:
            The rows of this rank's owned dofs.
        """
        ib = space.bodies.index(self.body)
        start, _ = space.owned_range(ib)
        return Rows.fixed(self.name, start + self.dofs, self.values)
