"""Joint kinds: constraints that join material points of two bodies, or of a body and the
ground, in the global frame (:class:`Joint`, made by :func:`tie` and :func:`pin`;
:class:`Slider`), and :class:`RigidRegion`, whose nodes move as one rigid body. Their rows have
the form of every constraint kind (:class:`dolfinx_mbs.constraints.Rows`).

Joints are written in the global frame: a material point X_a of body a and X_b of body b coincide
when r_a + R_a (X_a + u_a) = r_b + R_b (X_b + u_b), i.e.

    u_b = C u_a + z,   C = R_b^T R_a,   z = R_b^T (r_a + R_a X_a - r_b) - X_b,

with C and z known functions of time through the two frames (:func:`relative_motion`); when the
two frames move differently the rows are rheonomic. Frames of equal motion
(``frames.equal_motion``: one object, or equal parameters) are one frame (C = I, constant
rows). Frames that describe one rigid motion with
different constant axes and origins (the element frames of seeds 000 and 002: one body cut into
parts, each meshed in its own frame) give constant rows, C = R_b^T R_a and z = 0
(``tie(..., same_motion=True)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.base import Constraint, Rows, nodes_where, select_nodes
from dolfinx_mbs.frames.base import FrameState, equal_motion, skew

if TYPE_CHECKING:
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body

__all__ = ["Joint", "Slider", "RigidRegion", "tie", "pin", "relative_motion", "GROUND"]


# -- frames of joints ------------------------------------------------------------------------
#: The fixed global frame (``None`` as a body in a joint means the ground).
GROUND = FrameState(t=0.0, R=np.eye(3), r_O=np.zeros(3), omega=np.zeros(3), alpha=np.zeros(3),
                    v_O=np.zeros(3), a_O=np.zeros(3))


def _state(body: Body | None, t: float) -> FrameState:
    return GROUND if body is None else body.frame.state(t)


def relative_motion(src: FrameState, dst: FrameState, X_src: np.ndarray,
                    X_dst: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Jets of C = R_dst^T R_src and z = R_dst^T (r_src + R_src X_src - r_dst) - X_dst.

    A point X_src of the source body and X_dst of the destination body coincide when
    ``u_dst = C u_src + z``. Angular velocities and origin accelerations are in local
    components (R' = R [omega]x).

    Args:
        src: the source body's frame state.
        dst: the destination body's frame state.
        X_src: (n, 3) local positions on the source body.
        X_dst: (n, 3) local positions on the destination body.

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


# -- joints --------------------------------------------------------------------------------
def _node_positions(body: Body, nodes: np.ndarray) -> np.ndarray:
    """Local (reference) positions of owned dof nodes, shape (n, 3)."""
    x = body.V.tabulate_dof_coordinates()
    return np.asarray(x[nodes], dtype=float).reshape(-1, 3)


def _full_indices(space: FullSpace, body: Body, nodes: np.ndarray) -> np.ndarray:
    """Full global indices, shape (n, gdim), of the components of owned nodes."""
    ib = space.bodies.index(body)
    bs = body.V.dofmap.index_map_bs
    start, _ = space.owned_range(ib)
    return cast(np.ndarray,
                start + (np.asarray(nodes, np.int64)[:, None] * bs + np.arange(bs)[None, :]))


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
        same_motion: the two frames describe the same rigid motion with different constant
            axes and origins (element frames): the rows are constant, C = R_b^T R_a and z = 0
            at t = 0; a relative motion of the frames at t = 0 raises a ValueError.
    """

    def __init__(self, space: FullSpace, body_a: Body | None, body_b: Body, nodes_b: np.ndarray,
                 full_a: np.ndarray, X_a: np.ndarray, name: str, same_motion: bool = False) -> None:
        self.name = name
        self.body_a, self.body_b = body_a, body_b
        self.nodes_b = np.asarray(nodes_b, np.int64)
        self.full_a = np.asarray(full_a, np.int64).reshape(len(self.nodes_b), body_b.gdim)
        self.X_a = np.asarray(X_a, dtype=float).reshape(-1, 3)
        self.X_b = _node_positions(body_b, self.nodes_b)
        # frames of equal motion (one object, or equal parameters) are one frame: C = I
        same = body_a is not None and equal_motion(body_a.frame, body_b.frame)
        steady = body_b.frame.time_invariant and (body_a is None or body_a.frame.time_invariant)
        self.identity = same
        self.constant = None    # the jets of a constant C (same_motion)
        if same_motion and not same:
            self.constant = _constant_relative_rotation(self, body_b.comm)
        self.time_dependent = not (same or steady or same_motion)
        self.n_pairs = body_b.comm.allreduce(len(self.nodes_b), op=MPI.SUM)

    def rows(self, space: FullSpace, t: float) -> Rows:
        """Rows u_b = C u_a + z tying the matched nodes at time ``t``.

        C and z are the relative rotation and offset of the two frames
        (:func:`relative_motion`), constant for element frames of one rigid motion.

        Args:
            space: the model's full space.
            t: time (s).

        Returns:
            The rows of this rank's nodes of ``body_b``.
        """
        gdim = self.body_b.gdim
        n = len(self.nodes_b)
        if self.constant is not None:   # element frames: the nodes coincide at all times
            C, z = self.constant, np.zeros((n, 3, 3))
        else:
            C, z = relative_motion(_state(self.body_a, t), _state(self.body_b, t), self.X_a,
                                   self.X_b)
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


def _constant_relative_rotation(joint: Joint, comm: MPI.Comm, rtol: float = 1e-6) -> np.ndarray:
    """The jets (C, 0, 0) of C = R_b^T R_a at t = 0 for frames that describe the same rigid
    motion, after checking at t = 0 that they do: no relative rotation rate or acceleration,
    and the joined points' relative velocity and acceleration (z' and z'') vanish, to ``rtol``
    of the frames' own rates (computed frame derivatives are good to ~1e-7)."""
    sa, sb = _state(joint.body_a, 0.0), _state(joint.body_b, 0.0)
    C, z = relative_motion(sa, sb, joint.X_a, joint.X_b)
    w = np.linalg.norm(sa.omega) + np.linalg.norm(sb.omega)
    a = np.linalg.norm(sa.alpha) + np.linalg.norm(sb.alpha) + w * w
    size = np.abs(np.concatenate([joint.X_a, joint.X_b, [sa.r_O - sb.r_O]])).max()
    v = np.linalg.norm(sa.v_O) + np.linalg.norm(sb.v_O) + w * size
    acc = np.linalg.norm(sa.a_O) + np.linalg.norm(sb.a_O) + a * size
    found = [(np.abs(C[1]).max(initial=0.0), w, "rotation rate"),
             (np.abs(C[2]).max(initial=0.0), a, "rotation acceleration"),
             (np.abs(z[:, 1]).max(initial=0.0), v, "velocity of the joined points"),
             (np.abs(z[:, 2]).max(initial=0.0), acc, "acceleration of the joined points")]
    bad = [f"relative {what} {e:.2e} (scale {sc:.2e})" for e, sc, what in found
           if e > rtol * sc]
    checks.raise_everywhere(comm, None if not bad else (
        f"{joint.name}: same_motion=True, but the frames of "
        f"{joint.body_a.name if joint.body_a is not None else 'the ground'!r} and "
        f"{joint.body_b.name!r} move relative to each other at t=0: " + "; ".join(bad)))
    out = np.zeros((3, 3, 3))
    out[0] = C[0]
    return out


def _gather_candidates(space: FullSpace, body: Body,
                       where: Callable[[np.ndarray], np.ndarray] | None,
                       facets: Tuple[MeshTags, int] | None, name: str) -> Tuple[np.ndarray, ...]:
    """Owned nodes of ``body`` where ``where`` holds or on ``facets`` (may be empty here),
    their local positions, global positions at t=0 and full indices, gathered on every rank."""
    if facets is None:
        nodes = nodes_where(body, where, name)
    else:
        try:
            nodes = select_nodes(body, None, facets, name)
        except ValueError as e:  # name the side of the tie that selects nothing
            raise ValueError(f"{e} (facets of body {body.name!r})") from None
    X = _node_positions(body, nodes)
    G = body.frame.state(0.0).to_global(X) if len(X) else np.zeros((0, 3))
    full = _full_indices(space, body, nodes)
    comm = space.comm
    allX = np.concatenate(comm.allgather(X)) if comm.size > 1 else X
    allG = np.concatenate(comm.allgather(G)) if comm.size > 1 else G
    allF = np.concatenate(comm.allgather(full)) if comm.size > 1 else full
    return nodes, X, G, allX, allG, allF


def tie(space: FullSpace, body_a: Body, body_b: Body, where: Callable | None = None,
        tol: float = 1e-8, name: str | None = None,
        facets: Tuple[Tuple[MeshTags, int], Tuple[MeshTags, int]] | None = None,
        where_b: Callable | None = None, same_motion: bool = False) -> Joint:
    """Tie the nodes of ``body_b`` on the interface to the nodes of ``body_a`` at the same
    global position at t = 0. The interface is given by ``where`` (a predicate on a's local
    coordinates, and on b's unless ``where_b`` is given) or by
    ``facets=((tags_a, tag_a), (tags_b, tag_b))``, the facet tags of the interface on each
    body's mesh (e.g. from gmsh physical groups). Every selected node of either side must find
    a partner within ``tol`` times the larger body extent. ``same_motion=True`` declares that
    the two frames describe the same rigid motion with different constant axes and origins
    (see :class:`Joint`): constant rows instead of rheonomic ones.

    Args:
        space: the model's full space.
        body_a: the first body.
        body_b: the second body.
        where: a predicate ``x -> bool array`` on a's local coordinates (and b's without
            ``where_b``), or None.
        tol: the largest distance between tied nodes, relative to the larger body extent.
        name: the joint's name (None: a default).
        facets: ``((tags_a, tag_a), (tags_b, tag_b))``, or None.
        where_b: the predicate on b's local coordinates, or None.
        same_motion: the two frames describe the same rigid motion (constant rows).

    Returns:
        The joint.

    Raises:
        ValueError: on every rank, listing (up to ten) unmatched points, for an empty
            selection, for both or neither of ``where`` and ``facets``, or for frames in
            relative motion with ``same_motion``.
    """
    from scipy.spatial import cKDTree

    name = name or f"tie({body_a.name},{body_b.name})"
    if (where is None) == (facets is None):
        raise ValueError(f"{name}: give exactly one of a predicate `where` or "
                         "facets=((tags_a, tag_a), (tags_b, tag_b))")
    where_b = where if where_b is None else where_b
    if where is not None:
        for arg, fn in (("where", where), ("where_b", where_b)):
            if not callable(fn):
                raise TypeError(f"{name}: `{arg}` must be a callable x -> bool array, got "
                                f"{fn!r}")
    fa = fb = None
    if facets is not None:
        try:
            fa, fb = facets
            (_, _), (_, _) = fa, fb
        except (TypeError, ValueError):
            raise ValueError(f"{name}: facets must be ((tags_a, tag_a), (tags_b, tag_b)), one "
                             f"(meshtags, tag) pair per body, got {facets!r}") from None
    comm = space.comm
    _, _, _, allXa, allGa, allFa = _gather_candidates(space, body_a, where, fa, name)
    nodes_b, Xb, Gb, _, allGb, _ = _gather_candidates(space, body_b, where_b, fb, name)
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
    return Joint(space, body_a, body_b, nodes_b, allFa[idx], allXa[idx], name,
                 same_motion=same_motion)


def pin(space: FullSpace, body_a: Body | None, body_b: Body, point: Sequence[float],
        tol: float = 1e-8, name: str | None = None) -> Joint:
    """Join the node of ``body_b`` and the node of ``body_a`` (or the ground, for None) that
    sit at the global ``point`` at t = 0: a revolute joint in 2D, a spherical one in 3D.

    Args:
        space: the model's full space.
        body_a: the first body, or None for the ground.
        body_b: the second body.
        point: the joint's global position at t = 0.
        tol: the largest distance of the nodes from ``point``, relative to the mesh size.
        name: the joint's name (None: a default).

    Returns:
        The joint.
    """
    label = "ground" if body_a is None else body_a.name
    name = name or f"pin({label},{body_b.name})"
    p = checks.point3(point, f"{name}: point")
    comm = space.comm

    def local_node(body: Body) -> Tuple[int | None, np.ndarray]:
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
    Rheonomic when the body's frame rotates.

    Args:
        space: the model's full space.
        body: the body.
        point: the node's global position at t = 0.
        axis: the slide's global direction.
        tol: the largest distance to the node, relative to the mesh size.
        name: the constraint's name (None: a default).
    """

    def __init__(self, space: FullSpace, body: Body, point: ArrayLike, axis: ArrayLike,
                 tol: float = 1e-8, name: str | None = None) -> None:
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

    def rows(self, space: FullSpace, t: float) -> Rows:
        """Rows n^T (R_b (X + u) + r_b - P) = 0 for each normal n of the sliding axis.

        Args:
            space: the model's full space.
            t: time (s).

        Returns:
            The rows of this rank's nodes on the axis.
        """
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


class RigidRegion(Constraint):
    """The nodes of ``body`` where ``where`` holds move as one rigid (linearized) body:
    u(x) = u_m + theta x (x - x_m), an RBE2-like constraint. The 6 (3 in 2D) rigid parameters
    are carried by the best-conditioned choice of the region's own dofs, every other dof of the
    region depends on them.

    Args:
        space: the model's full space.
        body: the body.
        where: a predicate ``x -> bool array`` on local coordinates (3, n), or None.
        facets: ``(meshtags, tag)`` of the facets, or None.
        name: the constraint's name (None: a default).
    """

    def __init__(self, space: FullSpace, body: Body,
                 where: Callable[[np.ndarray], np.ndarray] | None = None,
                 facets: Tuple[MeshTags, int] | None = None, name: str | None = None) -> None:
        self.name = name or f"rigid({body.name})"
        self.body = body
        nodes = select_nodes(body, where, facets, self.name)
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
        T = T.reshape(-1, T.shape[-1])  # type: ignore[assignment]
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

    def rows(self, space: FullSpace, t: float) -> Rows:
        """Rows u_dep = W u_masters that move the region's dependent dofs with its masters.

        Args:
            space: the model's full space.
            t: time (s), unused (the rows are constant).

        Returns:
            All rows on rank 0, none elsewhere.
        """
        if self.rank != 0:
            return Rows.empty(self.name)
        m, r = self._W.shape
        cols = np.column_stack([self._dep, np.tile(self.masters, (m, 1))]).reshape(-1)
        coef = np.zeros((m * (r + 1), 3))
        vals = np.column_stack([np.ones(m), -self._W]).reshape(-1)
        coef[:, 0] = vals
        return Rows(self.name, np.arange(0, m * (r + 1) + 1, r + 1, dtype=np.int64), cols,
                    coef, np.zeros((m, 3)), self._dep.copy())
