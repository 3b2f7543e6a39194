"""Constraint kinds. Each one states rows of

    B(t) Delta = c(t)        (at velocity level: B Delta_dot + b = 0 with b = -c', for constant B)

over the model's full coordinates Delta (all dofs of all bodies, numbered by
:class:`dolfinx_mbs.space.FullSpace`), and :class:`dolfinx_mbs.maggi.MaggiReducer` eliminates them.

Every coefficient and right-hand side is a *jet* ``[value, d/dt, d2/dt2]`` so the reducer can form
the A-dot and A-ddot terms of rheonomic constraints (joints between bodies whose frames move
differently) without differentiating numerically. A row may name a preferred dependent dof
(the reducer keeps it when it can).

Joints are written in the global frame: a material point X_a of body a and X_b of body b coincide
when r_a + R_a (X_a + u_a) = r_b + R_b (X_b + u_b), i.e.

    u_b = C u_a + z,   C = R_b^T R_a,   z = R_b^T (r_a + R_a X_a - r_b) - X_b,

with C and z known functions of time through the two frames (:func:`relative_motion`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence

import numpy as np
from dolfinx import fem
from mpi4py import MPI

from . import checks, compat
from .frames import FrameState, differentiate, skew

__all__ = ["Rows", "Constraint", "Clamp", "Prescribed", "BCConstraint", "Joint", "Slider",
           "LinearRows", "VelocityRows", "RigidRegion", "relative_motion", "GROUND"]


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


# -- frames of joints ------------------------------------------------------------------------
#: The fixed global frame (``None`` as a body in a joint means the ground).
GROUND = FrameState(t=0.0, R=np.eye(3), r_O=np.zeros(3), omega=np.zeros(3), alpha=np.zeros(3),
                    v_O=np.zeros(3), a_O=np.zeros(3))


def _state(body, t: float) -> FrameState:
    return GROUND if body is None else body.frame.state(t)


def relative_motion(src: FrameState, dst: FrameState, X_src: np.ndarray, X_dst: np.ndarray):
    """Jets of C = R_dst^T R_src and z = R_dst^T (r_src + R_src X_src - r_dst) - X_dst.

    A point X_src of the source body and X_dst of the destination body coincide when
    ``u_dst = C u_src + z``. Angular velocities and origin accelerations are in local
    components (R' = R [omega]x).

    Args:
        src, dst: the two frame states.
        X_src, X_dst: (n, 3) local positions.

    Returns:
        C: (3, 3, 3) jets (index 0: value, 1: d/dt, 2: d2/dt2); z: (n, 3, 3) jets (n, jet, xyz).
    """
    Ws, Wd = skew(src.omega), skew(dst.omega)
    As, Ad = skew(src.alpha), skew(dst.alpha)
    C0 = dst.R.T @ src.R
    C1 = C0 @ Ws - Wd @ C0
    C2 = C0 @ As + C1 @ Ws - Ad @ C0 - Wd @ C1
    X_src = np.atleast_2d(np.asarray(X_src, dtype=float))
    X_dst = np.atleast_2d(np.asarray(X_dst, dtype=float))
    # y = r_src + R_src X_src - r_dst (global) and its derivatives
    y0 = src.r_O + X_src @ src.R.T - dst.r_O
    wx = np.cross(src.omega, X_src)
    y1 = (src.v_O + wx) @ src.R.T - dst.R @ dst.v_O
    y2 = (src.a_O + np.cross(src.alpha, X_src) + np.cross(src.omega, wx)) @ src.R.T \
        - dst.R @ dst.a_O
    w = y0 @ dst.R          # R_dst^T y
    wd = y1 @ dst.R         # R_dst^T y'
    z0 = w - X_dst
    z1 = -np.cross(dst.omega, w) + wd
    z2 = (-np.cross(dst.alpha, w) - np.cross(dst.omega, z1) - np.cross(dst.omega, wd)
          + y2 @ dst.R)
    return np.stack([C0, C1, C2]), np.stack([z0, z1, z2], axis=1)


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


# -- joints --------------------------------------------------------------------------------
def _node_positions(body, nodes: np.ndarray) -> np.ndarray:
    """Local (reference) positions of owned dof nodes, shape (n, 3)."""
    x = body.V.tabulate_dof_coordinates()
    return np.asarray(x[nodes], dtype=float).reshape(-1, 3)


def _full_indices(space, body, nodes: np.ndarray) -> np.ndarray:
    """Full global indices, shape (n, gdim), of the components of owned nodes."""
    ib = space.bodies.index(body)
    bs = body.V.dofmap.index_map_bs
    start, _ = space.owned_range(ib)
    return start + (np.asarray(nodes, np.int64)[:, None] * bs + np.arange(bs)[None, :])


class Joint(Constraint):
    """Nodes of body ``b`` that coincide, in the global frame, with material points of body
    ``a`` (or fixed points of the ground when ``a`` is None): ``u_b = C u_a + z``, all
    components. A tie between two meshes and a pin (spherical joint in 3D, revolute in 2D) are
    joints; when the two frames move differently the rows are rheonomic.

    Args:
        space: the model's full space.
        body_a: the master body, or None for the ground.
        body_b: the dependent body.
        nodes_b: owned nodes of b.
        full_a: (n, gdim) full global indices of the partner nodes' components in a (unused
            for the ground).
        X_a: (n, 3) partner positions (local to a, or global for the ground).
        name: label.
    """

    def __init__(self, space, body_a, body_b, nodes_b, full_a, X_a, name: str):
        self.name = name
        self.body_a, self.body_b = body_a, body_b
        self.nodes_b = np.asarray(nodes_b, np.int64)
        self.full_a = np.asarray(full_a, np.int64).reshape(len(self.nodes_b), body_b.gdim)
        self.X_a = np.asarray(X_a, dtype=float).reshape(-1, 3)
        self.X_b = _node_positions(body_b, self.nodes_b)
        same = body_a is not None and body_a.frame is body_b.frame
        steady = body_b.frame.time_invariant and (body_a is None or body_a.frame.time_invariant)
        self.identity = same
        self.time_dependent = not (same or steady)
        self.n_pairs = body_b.comm.allreduce(len(self.nodes_b), op=MPI.SUM)

    def rows(self, space, t: float) -> Rows:
        gdim = self.body_b.gdim
        n = len(self.nodes_b)
        sb = _state(self.body_b, t)
        sa = _state(self.body_a, t)
        C, z = relative_motion(sa, sb, self.X_a, self.X_b)
        if self.identity:   # same frame: the nodes were matched as coincident; z = X_a - X_b
            z[:] = 0.0      # is round-off, which would make a0 "prescribed" (and cost per step)
        dep = _full_indices(space, self.body_b, self.nodes_b)  # (n, gdim)
        rhs = z[:, :, :gdim].transpose(0, 2, 1).reshape(-1, 3)  # (n*gdim, 3)
        if self.body_a is None:
            return Rows.fixed(self.name, dep.reshape(-1), rhs)
        # row (b, i): u_b,i - sum_j C_ij u_a,j = z_i; C_ij kept structurally unless the frames
        # are the same (C = I)
        Cg = C[:, :gdim, :gdim]  # (3 jets, i, j)
        if self.identity:
            pairs = [(i, i) for i in range(gdim)]
        else:
            pairs = [(i, j) for i in range(gdim) for j in range(gdim)]
        per_row = [[j for (i2, j) in pairs if i2 == i] for i in range(gdim)]
        cols, coef, indptr = [], [], [0]
        one = np.array([1.0, 0.0, 0.0])
        for k in range(n):
            for i in range(gdim):
                cols.append(dep[k, i])
                coef.append(one)
                for j in per_row[i]:
                    cols.append(self.full_a[k, j])
                    coef.append(-Cg[:, i, j])
                indptr.append(len(cols))
        return Rows(self.name, np.array(indptr, np.int64), np.array(cols, np.int64),
                    np.array(coef, dtype=float).reshape(-1, 3), rhs, dep.reshape(-1).copy(),
                    rheonomic=self.time_dependent)


def _gather_candidates(space, body, where, name):
    """Owned nodes of ``body`` where ``where`` holds (may be empty here), their local
    positions, global positions at t=0 and full indices, gathered on every rank."""
    nodes = _nodes_where(body, where, name)
    X = _node_positions(body, nodes)
    G = body.frame.state(0.0).to_global(X) if len(X) else np.zeros((0, 3))
    full = _full_indices(space, body, nodes)
    comm = space.comm
    allX = np.concatenate(comm.allgather(X)) if comm.size > 1 else X
    allG = np.concatenate(comm.allgather(G)) if comm.size > 1 else G
    allF = np.concatenate(comm.allgather(full)) if comm.size > 1 else full
    return nodes, X, G, allX, allG, allF


def tie(space, body_a, body_b, where: Callable, tol: float = 1e-8,
        name: Optional[str] = None) -> Joint:
    """Tie the nodes of ``body_b`` where ``where`` holds (on b's local coordinates) to the nodes
    of ``body_a`` at the same global position at t = 0 (where ``where`` holds on a's local
    coordinates). Every selected node of either side must find a partner within ``tol`` times
    the larger body extent.

    Raises:
        ValueError: on every rank, listing (up to ten) unmatched points, or for an empty
            selection.
    """
    from scipy.spatial import cKDTree

    name = name or f"tie({body_a.name},{body_b.name})"
    if not callable(where):
        raise TypeError(f"{name}: `where` must be a callable x -> bool array, got {where!r}")
    comm = space.comm
    _, _, _, allXa, allGa, allFa = _gather_candidates(space, body_a, where, name)
    nodes_b, Xb, Gb, _, allGb, _ = _gather_candidates(space, body_b, where, name)
    if len(allGa) == 0 or len(allGb) == 0:
        raise ValueError(f"{name}: `where` selects no node of body "
                         f"{(body_a if len(allGa) == 0 else body_b).name!r}")
    h = tol * max(body_a.extent(), body_b.extent(), 1e-300)
    tree = cKDTree(allGa)
    d, idx = tree.query(Gb, distance_upper_bound=h) if len(Gb) else (np.zeros(0),
                                                                      np.zeros(0, int))
    miss_b = Gb[~np.isfinite(d)]
    da, _ = cKDTree(allGb).query(allGa, distance_upper_bound=h)
    miss_a = allGa[~np.isfinite(da)]  # identical on every rank
    miss_b = np.concatenate(comm.allgather(miss_b))
    if len(miss_a) or len(miss_b):
        lines = [f"{body_b.name}: {p.tolist()}" for p in miss_b[:10]] + \
                [f"{body_a.name}: {p.tolist()}" for p in miss_a[:10]]
        raise ValueError(f"{name}: {len(miss_b) + len(miss_a)} interface nodes have no partner "
                         f"within {h:.3e} m (global positions at t=0): " + "; ".join(lines))
    return Joint(space, body_a, body_b, nodes_b, allFa[idx], allXa[idx], name)


def pin(space, body_a, body_b, point: Sequence[float], tol: float = 1e-8,
        name: Optional[str] = None) -> Joint:
    """Join the node of ``body_b`` and the node of ``body_a`` (or the ground, for None) that
    sit at the global ``point`` at t = 0: a revolute joint in 2D, a spherical one in 3D."""
    label = "ground" if body_a is None else body_a.name
    name = name or f"pin({label},{body_b.name})"
    p = checks.point3(point, f"{name}: point")
    comm = space.comm

    def local_node(body):
        s0 = body.frame.state(0.0)
        X = s0.R.T @ (p - s0.r_O)
        return body.locate_node(X, tol), X

    nb, Xb = local_node(body_b)
    nodes_b = np.zeros(0, np.int64) if nb is None else np.array([nb], np.int64)
    if body_a is None:
        full_a = np.zeros((len(nodes_b), body_b.gdim), np.int64)
        X_a = np.tile(p, (len(nodes_b), 1))
    else:
        na, _ = local_node(body_a)
        fa = _full_indices(space, body_a, np.array([na])) if na is not None else None
        xa = _node_positions(body_a, np.array([na])) if na is not None else None
        fa = [f for f in comm.allgather(fa) if f is not None][0]
        xa = [x for x in comm.allgather(xa) if x is not None][0]
        full_a = np.tile(fa, (len(nodes_b), 1))
        X_a = np.tile(xa, (len(nodes_b), 1))
    return Joint(space, body_a, body_b, nodes_b, full_a, X_a, name)


class Slider(Constraint):
    """The node of ``body`` at ``point`` (global, at t = 0) slides along a fixed global
    ``axis``: its displacement normal to the axis, in the global frame, follows the rigid
    motion's mismatch (zero when the frame's motion already keeps the point on the line).
    Rheonomic when the body's frame rotates."""

    def __init__(self, space, body, point, axis, tol: float = 1e-8,
                 name: Optional[str] = None):
        self.name = name or f"slider({body.name})"
        self.body = body
        gdim = body.gdim
        a = checks.unit_axis(axis, f"{self.name}: axis")
        if gdim == 2:
            if abs(a[2]) > 1e-12:
                raise ValueError(f"{self.name}: a 2D body slides along an in-plane axis")
            self.normals = np.array([[-a[1], a[0], 0.0]])
        else:
            q, _ = np.linalg.qr(np.column_stack([a, np.eye(3)]))
            self.normals = q[:, 1:3].T
        p = checks.point3(point, f"{self.name}: point")
        self.P = p
        s0 = body.frame.state(0.0)
        node = body.locate_node(s0.R.T @ (p - s0.r_O), tol)
        self.nodes = np.zeros(0, np.int64) if node is None else np.array([node], np.int64)
        self.X = _node_positions(body, self.nodes)
        self.time_dependent = not body.frame.time_invariant

    def rows(self, space, t: float) -> Rows:
        if len(self.nodes) == 0:
            return Rows.empty(self.name)
        gdim = self.body.gdim
        C, z = relative_motion(_state(self.body, t), GROUND, self.X,
                               self.P[None, :])  # C = R_b, z = p_b - P (global)
        dofs = _full_indices(space, self.body, self.nodes)[0]
        cols, coef, rhs, piv, indptr = [], [], [], [], [0]
        for n in self.normals:
            c = np.einsum("i,kij->kj", n, C)[:, :gdim]  # (3 jets, gdim): n^T R_b
            cols.extend(dofs.tolist())
            coef.extend(c.T.tolist())
            rhs.append(-(z[0] @ n))
            piv.append(dofs[int(np.argmax(np.abs(c[0])))])
            indptr.append(len(cols))
        return Rows(self.name, np.array(indptr, np.int64), np.array(cols, np.int64),
                    np.array(coef, dtype=float), np.array(rhs, dtype=float),
                    np.array(piv, np.int64), rheonomic=self.time_dependent)


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


class RigidRegion(Constraint):
    """The nodes of ``body`` where ``where`` holds move as one rigid (linearized) body:
    u(x) = u_m + theta x (x - x_m), an RBE2-like constraint. The 6 (3 in 2D) rigid parameters
    are carried by the best-conditioned choice of the region's own dofs, every other dof of the
    region depends on them.
    """

    def __init__(self, space, body, where=None, facets=None, name: Optional[str] = None):
        self.name = name or f"rigid({body.name})"
        self.body = body
        nodes = _select_nodes(body, where, facets, self.name)
        gdim = body.gdim
        X = _node_positions(body, nodes)
        full = _full_indices(space, body, nodes)
        comm = space.comm
        X = np.concatenate(comm.allgather(X))
        full = np.concatenate(comm.allgather(full))
        xm = X.mean(axis=0)
        d = X - xm
        # T: u_node = T_node p, p = (u_m, theta)
        if gdim == 2:
            T = np.zeros((len(X), 2, 3))
            T[:, 0, 0] = T[:, 1, 1] = 1.0
            T[:, 0, 2] = -d[:, 1]
            T[:, 1, 2] = d[:, 0]
        else:
            T = np.zeros((len(X), 3, 6))
            T[:, :, :3] = np.eye(3)
            for i in range(len(X)):
                T[i, :, 3:] = -skew(d[i])
        T = T.reshape(-1, T.shape[-1])
        r = T.shape[1]
        if np.linalg.matrix_rank(T) < r:
            raise ValueError(f"{self.name}: the region's nodes do not fix a rigid motion "
                             f"(collinear or too few nodes)")
        from scipy.linalg import qr

        _, _, perm = qr(T.T, pivoting=True, mode="economic")
        keep = np.sort(perm[:r])
        self.masters = full.reshape(-1)[keep]
        W = T @ np.linalg.inv(T[keep])  # u = W u_keep
        others = np.setdiff1d(np.arange(len(T)), keep)
        self._dep = full.reshape(-1)[others]
        self._W = W[others]
        self.rank = comm.rank
        self.n_nodes = len(X)

    def rows(self, space, t: float) -> Rows:
        if self.rank != 0:
            return Rows.empty(self.name)
        m, r = self._W.shape
        cols = np.column_stack([self._dep, np.tile(self.masters, (m, 1))]).reshape(-1)
        coef = np.zeros((m * (r + 1), 3))
        vals = np.column_stack([np.ones(m), -self._W]).reshape(-1)
        coef[:, 0] = vals
        return Rows(self.name, np.arange(0, m * (r + 1) + 1, r + 1, dtype=np.int64), cols,
                    coef, np.zeros((m, 3)), self._dep.copy())
