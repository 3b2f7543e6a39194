"""Applied loads of a body: values in time, where they act, and the node of a point load.

A :class:`Load` is a vector, constant or a function of time, in the frame's local components or
in global ones (turned into local ones with the frame's rotation); it fills a UFL constant that
the body's load forms use. :func:`facet_measure` makes the ``ds`` of a traction from facet tags or
a predicate; :func:`locate_node` finds the owned node at a point on exactly one rank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence, Tuple, Union

import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI

from dolfinx_mbs import checks, compat
from dolfinx_mbs.frames.base import FrameState

if TYPE_CHECKING:
    from dolfinx.fem import FunctionSpace
    from dolfinx.mesh import Mesh, MeshTags
    from petsc4py import PETSc

__all__ = ["Load", "AppliedLoads", "VectorLike", "TimeVector", "facet_measure", "locate_node",
           "diameter"]

#: a vector given as a sequence of numbers or a numpy array
VectorLike = Union[Sequence[float], np.ndarray]
#: a vector constant in time, or a function of time t (s) returning one
TimeVector = Union[VectorLike, Callable[[float], VectorLike]]


class Load:
    """A load with a time function: ``value(state)`` (a gdim-vector, local components) fills
    the UFL constant ``const``.

    Args:
        value: a gdim-vector, or ``t -> vector``.
        gdim: the body's dimension.
        mesh: the body's mesh (for the constant).
        name: for messages ("traction", ...).
        local: True when ``value`` is in the frame's local components, False for global ones.
    """

    def __init__(self, value: TimeVector, gdim: int, mesh: Mesh, name: str, local: bool) -> None:
        self.name = name
        self.gdim = gdim
        self.local = local
        self.fn = value if callable(value) else None
        self.comm = mesh.comm
        self.const = fem.Constant(mesh, np.zeros(gdim, dtype=compat.scalar_type))
        self.fixed = None if callable(value) else checks.vector(value, gdim, name)
        if self.fixed is not None and local:  # constant in local components: set once
            self.const.value = self.fixed

    @property
    def steady(self) -> bool:
        """Constant in local components."""
        return self.fn is None and self.local

    def value(self, state: FrameState) -> np.ndarray:
        """The load vector at a frame state, in the body's local components.

        Args:
            state: the frame state; a global load is rotated into the frame by ``state.R``.

        Returns:
            The (gdim,) vector: the fixed value or the user's function at ``state.t``.

        Raises:
            ValueError: the user's function gave no finite gdim-vector (on every rank, as
                any error the function raises on one rank: collective when it is a function).
        """
        if self.fn is None:
            assert self.fixed is not None  # a load is a function or a fixed vector
            v = self.fixed
        else:
            with checks.collective(self.comm, f"{self.name} at t={state.t:g}"):
                v = checks.vector(self.fn(state.t), self.gdim, f"{self.name}(t={state.t:g})")
        if not self.local:  # global components -> local
            v3 = np.zeros(3)
            v3[: self.gdim] = v
            v = (state.R.T @ v3)[: self.gdim]
        return v

    def update(self, state: FrameState) -> None:
        """Set the load's UFL constant to its value at a frame state.

        Args:
            state: the frame state (see :meth:`value`).
        """
        self.const.value = self.value(state)


def facet_measure(mesh: Mesh, facets: Tuple[MeshTags, int] | None = None,
                  where: Callable[[np.ndarray], np.ndarray] | None = None,
                  what: str = "add_traction") -> ufl.Measure:
    """The ``ds`` of the boundary facets given by ``facets=(meshtags, tag)`` or by a predicate
    ``where(x) -> bool array`` on facet midpoints (x of shape (3, n)).

    Args:
        mesh: the mesh.
        facets: ``(meshtags, tag)`` of the facets, or None.
        where: a predicate ``x -> bool array`` on facet midpoints (x of shape (3, n)), or None.
        what: the caller, named in messages.

    Returns:
        The measure.

    Raises:
        ValueError: both or neither given, or no facet selected on any rank (every rank).
    """
    from dolfinx import mesh as dmesh

    tdim = mesh.topology.dim
    fdim = tdim - 1
    if (facets is None) == (where is None):
        raise ValueError(f"{what}: give exactly one of facets=(meshtags, tag) or where=")
    if facets is not None:
        tags, tag = facets
        idx = tags.indices[tags.values == tag]
    else:
        mesh.topology.create_connectivity(fdim, tdim)
        with checks.collective(mesh.comm, f"{what}: `where`"):
            idx = dmesh.locate_entities_boundary(mesh, fdim, where)
    if mesh.comm.allreduce(len(idx), op=MPI.SUM) == 0:
        if facets is not None:
            present = sorted(set().union(*mesh.comm.allgather(
                {int(v) for v in np.unique(facets[0].values)})))
            raise ValueError(f"{what}: the selection holds no facet: no facet has the tag "
                             f"{facets[1]!r} (the facet tags hold {present or 'none'})")
        raise ValueError(f"{what}: the selection holds no facet: the predicate where= is "
                         "true at no boundary facet's midpoint")
    idx = np.sort(idx).astype(np.int32)
    mt = dmesh.meshtags(mesh, fdim, idx, np.full(idx.shape, 1, dtype=np.int32))
    return ufl.Measure("ds", domain=mesh, subdomain_data=mt, subdomain_id=1)


def diameter(mesh: Mesh) -> float:
    """Diameter of the mesh's bounding box (m), the same on every rank.

    Args:
        mesh: the mesh.

    Returns:
        The diameter (m).
    """
    x = mesh.geometry.x
    lo = x.min(axis=0) if len(x) else np.full(3, np.inf)
    hi = x.max(axis=0) if len(x) else np.full(3, -np.inf)
    glo, ghi = np.empty_like(lo), np.empty_like(hi)
    mesh.comm.Allreduce(lo, glo, op=MPI.MIN)
    mesh.comm.Allreduce(hi, ghi, op=MPI.MAX)
    return float(np.linalg.norm(ghi - glo))


def locate_node(V: FunctionSpace, p: np.ndarray, tol: float, name: str) -> int | None:
    """Local index of the owned dof node of ``V`` at point ``p``, on the one rank that owns the
    nearest node (None on the others).

    Args:
        V: the function space.
        p: the point (local coordinates, m).
        tol: the largest distance to a node, relative to the mesh diameter.
        name: the caller, named in messages.

    Returns:
        The local node index, or None on the other ranks.

    Raises:
        ValueError: on every rank, if no node lies within ``tol`` x mesh diameter of ``p``.
    """
    comm = V.mesh.comm
    imap = V.dofmap.index_map
    xs = V.tabulate_dof_coordinates()[: imap.size_local]
    d = np.linalg.norm(xs - p[None, :], axis=1) if len(xs) else np.array([np.inf])
    i = int(np.argmin(d))
    dmin = float(d[i])
    gmin = comm.allreduce(dmin, op=MPI.MIN)
    if gmin > tol * max(diameter(V.mesh), 1.0):
        raise ValueError(f"point {p.tolist()} is not at a node of body {name!r} "
                         f"(nearest node at distance {gmin:.3e})")
    owner = comm.allreduce(comm.rank if dmin == gmin else comm.size, op=MPI.MIN)
    return i if comm.rank == owner else None


class AppliedLoads:
    """The applied loads of one body: body forces, tractions (each with its ``ds``) and point
    loads (each with the owned node it acts on, None on the other ranks), and the forms and
    vector additions made of them.

    Args:
        mesh: the body's mesh.
        gdim: the body's dimension.
        name: the body's name (for messages).
    """

    def __init__(self, mesh: Mesh, gdim: int, name: str) -> None:
        self.mesh, self.gdim, self.name = mesh, gdim, name
        #: (load, measure): ``ufl.dx`` for a body force, a ``ds`` for a traction
        self.distributed: list = []
        #: (load, owned node or None)
        self.points: list = []

    def add(self, value: TimeVector, what: str, local: bool, measure: ufl.Measure | None = None,
            node: int | None = None) -> None:
        """A body force (``measure`` None: ``ufl.dx``), a traction (``measure``: its ``ds``)
        or a point load (``what == "point load"``, at ``node``).

        Args:
            value: the load: a vector or ``t -> vector``.
            what: ``"body force"``, ``"traction"`` or ``"point load"``.
            local: components in the body frame (False: global components).
            measure: the traction's ``ds`` (None: a body force).
            node: the point load's node (local index), or None.
        """
        ld = Load(value, self.gdim, self.mesh, what, local)
        if what == "point load":
            self.points.append((ld, node))
        else:
            self.distributed.append((ld, ufl.dx if measure is None else measure))

    @staticmethod
    def _varies(ld: Load) -> bool:
        return ld.fn is not None or not ld.local

    def varying(self) -> list:
        """(load, measure) of the body forces and tractions that change in time (a function
        of t, or global components, which turn with the frame)."""
        return [(ld, dm) for ld, dm in self.distributed if self._varies(ld)]

    def steady(self) -> list:
        """The loads constant in local components: (load, where) pairs, ``where`` a measure
        (``ufl.dx`` or a ``ds``) or ``("node", node)`` (a point load)."""
        return [(ld, dm) for ld, dm in self.distributed if ld.steady] + \
            [(ld, ("node", node)) for ld, node in self.points if ld.steady]

    def form(self, v: ufl.Argument, thickness: float, user: ufl.Form | None = None,
             varying: bool = True, steady_only: bool = False) -> ufl.Form | None:
        """Thickness * load.v over each body force's and traction's measure, plus ``user`` (a
        load form or None); without the varying ones when ``varying`` is False; with
        ``steady_only``, of the loads constant in local components alone. None when empty.

        Args:
            v: the test function.
            thickness: the thickness of a 2D body (1 in 3D).
            user: the user's load form, or None.
            varying: include the loads that vary in time.
            steady_only: only the loads constant in local components.

        Returns:
            The linear form, or None.
        """
        L = None
        for ld, dm in self.distributed:
            if (steady_only and not ld.steady) or (not varying and self._varies(ld)):
                continue
            L = thickness * ufl.inner(ld.const, v) * dm + (L if L is not None else 0)
        if user is not None:
            L = user if L is None else L + user
        return L

    def update(self, state: FrameState) -> None:
        """Fill the constants of the body forces and tractions for ``state``.

        Args:
            state: the frame state.
        """
        for ld, _ in self.distributed:
            ld.update(state)

    def add_points(self, b: PETSc.Vec, state: FrameState, comm: MPI.Comm) -> None:
        """Add the point loads at ``state`` to the owned part of the assembled vector ``b``.

        Args:
            b: the assembled vector.
            state: the frame state.
            comm: the body's communicator.
        """
        if not self.points:
            return
        # the user's functions are evaluated on every rank (not only the owner's), under one
        # guard: their error, or a non-finite value, is raised on all ranks; constant values
        # need neither (no collective per state)
        if any(ld.fn is not None for ld, _ in self.points):
            with checks.collective(comm, f"point load of body {self.name!r} at "
                                         f"t={state.t:g}"):
                values = [ld.value(state) for ld, _ in self.points]
        else:
            values = [ld.value(state) if node is not None else None for ld, node in self.points]
        self._add_at_nodes(b, [(node, val) for (_, node), val in zip(self.points, values)])

    def add_steady_points(self, b: PETSc.Vec) -> None:
        """Add the point loads constant in local components to the owned part of ``b``.

        Args:
            b: the assembled vector.
        """
        self._add_at_nodes(b, [(node, ld.fixed) for ld, node in self.points if ld.steady])

    def _add_at_nodes(self, b: PETSc.Vec, pairs: Iterable[Tuple[int, np.ndarray]]) -> None:
        bs = self.gdim
        for node, val in pairs:
            if node is not None:
                with b.localForm() as bl:
                    bl.array[node * bs: (node + 1) * bs] += val
