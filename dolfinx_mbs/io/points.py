"""A field's values at points, on every rank.

    values = mbs.io.evaluate(body.u, [(1.0, 0.05, 0.05), (0.5, 0.0, 0.0)])   # shape (2, 3)

Each point is evaluated on the one rank that owns it (DOLFINx's point ownership, as
:class:`dolfinx_mbs.io.Probes` does: :func:`dolfinx_mbs.compat.point_ownership`) and the values
are summed over the ranks, so every rank gets the same array. The points are coordinates of the
field's mesh: a body's local coordinates (m), not global positions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import ufl
from mpi4py import MPI

from dolfinx_mbs import checks, compat

if TYPE_CHECKING:
    from dolfinx.fem import Function
    from dolfinx.mesh import Mesh

__all__ = ["evaluate"]


def _points(points: Sequence[float] | Sequence[Sequence[float]] | np.ndarray,
            gdim: int) -> tuple[np.ndarray, bool]:
    """The points as an (n, 3) array, and whether one point (not a list of them) was given."""
    try:
        p = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"points must be a point or a list of points of {gdim} (or 3) "
                         f"coordinates, got {checks.shown(points)}") from None
    single = p.ndim == 1
    p = p.reshape(1, -1) if single else p
    if p.ndim != 2 or p.shape[1] not in (gdim, 3) or p.shape[0] == 0:
        raise ValueError(f"points must be a point or a list of points of {gdim} (or 3) "
                         f"coordinates, got shape {np.shape(points)}")
    if not np.all(np.isfinite(p)):
        k = int(np.flatnonzero(~np.all(np.isfinite(p), axis=1))[0])
        raise ValueError(f"points must be finite, got {checks.shown(p[k])} (point {k})")
    if p.shape[1] == 2:
        p = np.hstack([p, np.zeros((len(p), 1))])
    return p, single


def _extent(mesh: Mesh) -> str:
    """The mesh's bounding box in words, for the error of a point outside."""
    x = np.asarray(mesh.geometry.x[:, : mesh.geometry.dim], dtype=float)
    lo, hi = np.empty(x.shape[1]), np.empty(x.shape[1])
    mesh.comm.Allreduce(x.min(axis=0) if len(x) else np.full(x.shape[1], np.inf), lo, MPI.MIN)
    mesh.comm.Allreduce(x.max(axis=0) if len(x) else np.full(x.shape[1], -np.inf), hi, MPI.MAX)
    return " x ".join(f"[{a:g}, {b:g}]" for a, b in zip(lo, hi))


def evaluate(u: Function,
             points: Sequence[float] | Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    r"""The values of the DOLFINx Function ``u`` at ``points``, the same on every rank.

    Collective: every rank calls it with the same points.

    Args:
        u: a ``dolfinx.fem.Function`` (scalar, vector or tensor valued), e.g. a body's ``u``
            or a field returned by :meth:`dolfinx_mbs.Model.solve_static`.
        points: one point, or a list (n, d) of points, of d = gdim or 3 coordinates of ``u``'s
            mesh (a body's local coordinates, m; z = 0 for a 2D mesh).

    Returns:
        For a list of points, an array (n, \\*value_shape): (n, gdim) for a displacement,
        (n,) for a scalar field; for one point, that point's values (value_shape).

    Raises:
        ValueError: (on every rank) points of the wrong shape or not finite, or a point that
            lies in no cell of the mesh (the message names it and the mesh's extent).
    """
    mesh = u.function_space.mesh
    p, single = _points(points, mesh.geometry.dim)
    owners, cells = compat.point_ownership(mesh, p)
    if np.any(owners < 0):
        k = int(np.flatnonzero(owners < 0)[0])
        raise ValueError(f"point {checks.shown(p[k][: mesh.geometry.dim])} lies in no cell of "
                         f"the mesh of {u.name!r} (the mesh spans {_extent(mesh)})")
    shape = tuple(ufl.shape(u))
    size = int(np.prod(shape)) if shape else 1
    local = np.zeros((len(p), size))
    mine = np.flatnonzero(owners == mesh.comm.rank)
    if len(mine):
        x = np.ascontiguousarray(p[mine], dtype=mesh.geometry.x.dtype)
        values = u.eval(x, np.asarray(cells[mine], dtype=np.int32))
        local[mine] = np.asarray(values).reshape(len(mine), size)
    out: np.ndarray = np.zeros_like(local)
    mesh.comm.Allreduce(local, out, op=MPI.SUM)
    out = out.reshape((len(p),) + shape)
    return out[0] if single else out
