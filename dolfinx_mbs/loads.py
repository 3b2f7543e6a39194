"""Applied loads of a body: values in time, where they act, and the node of a point load.

A :class:`Load` is a vector, constant or a function of time, in the frame's local components or
in global ones (turned into local ones with the frame's rotation); it fills a UFL constant that
the body's load forms use. :func:`facet_measure` makes the ``ds`` of a traction from facet tags or
a predicate; :func:`locate_node` finds the owned node at a point on exactly one rank.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI

from . import checks, compat
from .frames import FrameState

__all__ = ["Load", "VectorLike", "TimeVector", "facet_measure", "locate_node", "diameter"]

VectorLike = Union[Sequence[float], np.ndarray]
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

    def __init__(self, value: TimeVector, gdim: int, mesh, name: str, local: bool):
        self.name = name
        self.gdim = gdim
        self.local = local
        self.fn = value if callable(value) else None
        self.const = fem.Constant(mesh, np.zeros(gdim, dtype=compat.scalar_type))
        self.fixed = None if callable(value) else checks.vector(value, gdim, name)
        if self.fixed is not None and local:  # constant in local components: set once
            self.const.value = self.fixed

    @property
    def steady(self) -> bool:
        """Constant in local components."""
        return self.fn is None and self.local

    def value(self, state: FrameState) -> np.ndarray:
        v = self.fixed if self.fn is None else checks.vector(self.fn(state.t), self.gdim,
                                                          f"{self.name}(t={state.t:g})")
        if not self.local:  # global components -> local
            v3 = np.zeros(3)
            v3[: self.gdim] = v
            v = (state.R.T @ v3)[: self.gdim]
        return v

    def update(self, state: FrameState) -> None:
        self.const.value = self.value(state)


def facet_measure(mesh, facets=None, where=None, what: str = "add_traction"):
    """The ``ds`` of the boundary facets given by ``facets=(meshtags, tag)`` or by a predicate
    ``where(x) -> bool array`` on facet midpoints (x of shape (3, n)).

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
        raise ValueError(f"{what}: the selection holds no facet")
    idx = np.sort(idx).astype(np.int32)
    mt = dmesh.meshtags(mesh, fdim, idx, np.full(idx.shape, 1, dtype=np.int32))
    return ufl.Measure("ds", domain=mesh, subdomain_data=mt, subdomain_id=1)


def diameter(mesh) -> float:
    """Diameter of the mesh's bounding box (m), the same on every rank."""
    x = mesh.geometry.x
    lo = x.min(axis=0) if len(x) else np.full(3, np.inf)
    hi = x.max(axis=0) if len(x) else np.full(3, -np.inf)
    glo, ghi = np.empty_like(lo), np.empty_like(hi)
    mesh.comm.Allreduce(lo, glo, op=MPI.MIN)
    mesh.comm.Allreduce(hi, ghi, op=MPI.MAX)
    return float(np.linalg.norm(ghi - glo))


def locate_node(V, p: np.ndarray, tol: float, name: str) -> Optional[int]:
    """Local index of the owned dof node of ``V`` at point ``p``, on the one rank that owns the
    nearest node (None on the others).

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
