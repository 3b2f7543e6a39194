"""A body's cells, nodes and nodal values gathered onto rank 0, ready for VTK.

Each rank takes the VTK cells of its owned cells in a Lagrange space
(:func:`dolfinx_mbs.compat.vtk_mesh`, DOLFINx's ``dolfinx.plot.vtk_mesh``), the coordinates of
its local nodes (ghosts included, so that every owned cell's nodes are there) and the values
of the Functions at those nodes; rank 0 receives them all with the node numbers shifted by
the nodes of the ranks before it. A node on a partition boundary then appears once per rank
that holds it, with the same coordinates and values: a picture does not see the difference.
Lengths in the mesh's units (m), displacements as given.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

import numpy as np

from dolfinx_mbs import checks, compat

if TYPE_CHECKING:
    from dolfinx.fem import Function
    from mpi4py import MPI


@dataclasses.dataclass
class Gathered:
    """The VTK description of one Lagrange space and the values of Functions on it (rank 0).

    Attributes:
        cells: VTK connectivity, flat: for each cell its node count, then its nodes.
        types: the VTK cell type of each cell.
        points: node coordinates, shape (n, 3) (z = 0 for a 2D mesh).
        values: one array per gathered Function, shape (n, 3) for a vector Function (the
            third component 0 in 2D), (n,) for a scalar one.
    """

    cells: np.ndarray
    types: np.ndarray
    points: np.ndarray
    values: list[np.ndarray]

    @property
    def n_points(self) -> int:
        """The number of nodes (partition-boundary nodes counted once per rank)."""
        return int(self.points.shape[0])


def _node_values(u: Function) -> np.ndarray:
    """``u``'s values at its space's local nodes (owned and ghost), vectors padded to 3."""
    bs = u.function_space.dofmap.index_map_bs
    arr = np.asarray(u.x.array).real.reshape(-1, bs)
    if bs == 1:
        return arr[:, 0].copy()
    if bs == 3:
        return arr.copy()
    out = np.zeros((arr.shape[0], 3))
    out[:, :bs] = arr
    return out


def on_root(gathered: Sequence[Gathered | None]) -> list[Gathered]:
    """What :func:`gather` returned, on rank 0 (where every entry is set): the pictures are
    drawn there only.

    Args:
        gathered: the results of :func:`gather` on this rank.

    Returns:
        The same entries, none None.

    Raises:
        RuntimeError: called on a rank other than 0 (it holds no gathered data).
    """
    out = [g for g in gathered if g is not None]
    if len(out) != len(gathered):
        raise RuntimeError("the gathered data are on rank 0 only")
    return out


def gather(functions: Sequence, comm: MPI.Comm | None = None) -> Gathered | None:
    """Gather the space of ``functions`` (all on one Lagrange space) and their values on rank 0.

    Collective: every rank of the space's communicator calls it. The ghost values are
    updated first (``scatter_forward``).

    Args:
        functions: DOLFINx Functions on the same Lagrange space (a body's displacement, the
            real and imaginary parts of a mode).
        comm: the communicator; default the mesh's.

    Returns:
        A :class:`Gathered` on rank 0, None on the other ranks.

    Raises:
        ValueError: no Function, or Functions on different spaces (on every rank: the
            arguments are the same everywhere).
    """
    functions = list(functions)
    if not functions:
        raise ValueError("functions must hold at least one DOLFINx Function, got none")
    V = functions[0].function_space
    comm = V.mesh.comm if comm is None else comm
    other = [k for k, f in enumerate(functions) if not compat.same_space(f.function_space, V)]
    checks.raise_everywhere(comm, (
        f"functions[{other[0]}] is on another space than functions[0]: gather the Functions "
        "of one space at a time") if other else None)
    for f in functions:
        f.x.scatter_forward()
    topology, types, x = compat.vtk_mesh(V)
    points = np.zeros((x.shape[0], 3))
    points[:, : x.shape[1]] = x
    mine = (np.asarray(topology, dtype=np.int64), np.asarray(types, dtype=np.uint8), points,
            [_node_values(f) for f in functions])
    parts = comm.gather(mine, root=0)
    if comm.rank != 0:
        return None
    cells, offset = [], 0
    for top, typ, pts, _ in parts:
        t = top.copy()
        # each cell is [count, node, node, ...]: shift the nodes, not the counts
        if t.size:
            per = int(t[0]) + 1
            t = t.reshape(-1, per)
            t[:, 1:] += offset
            t = t.reshape(-1)
        cells.append(t)
        offset += pts.shape[0]
    return Gathered(cells=np.concatenate(cells), types=np.concatenate([p[1] for p in parts]),
                    points=np.concatenate([p[2] for p in parts]),
                    values=[np.concatenate([p[3][k] for p in parts])
                            for k in range(len(functions))])
