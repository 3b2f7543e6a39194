"""The full coordinate vector of a model: all dofs of all bodies, distributed as PETSc expects.

Rank r owns, in order, its owned dofs of body 0, then of body 1, ...: the layout of a PETSc
MatNest, so block-diagonal operators of several bodies convert to one AIJ matrix without
renumbering. With a single body the full space *is* the body's space and nothing is copied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks, compat

if TYPE_CHECKING:
    from dolfinx import fem
    from dolfinx.fem import FunctionSpace
    from numpy.typing import ArrayLike

__all__ = ["FullSpace", "rigid_body_modes", "orthonormal_nullspace"]


def rigid_body_modes(V: FunctionSpace) -> List[np.ndarray]:
    """The rigid-body motions of a 2D or 3D vector space at its owned dofs (node-major,
    ``index_map_bs`` components): translations, then rotations about the origin (6 in 3D,
    3 in 2D).

    Args:
        V: the vector function space.

    Returns:
        The modes, one array each.
    """
    g = V.dofmap.index_map_bs
    n = V.dofmap.index_map.size_local
    x = V.tabulate_dof_coordinates()[:n]
    modes = [np.eye(g)[k][None, :].repeat(n, 0) for k in range(g)]
    if g == 3:
        modes += [np.cross(np.eye(3)[k][None, :], x) for k in range(3)]
    else:
        modes += [np.column_stack([-x[:, 1], x[:, 0]])]
    return [m.reshape(-1) for m in modes]


def orthonormal_nullspace(vecs: Sequence[PETSc.Vec], comm: MPI.Comm) -> PETSc.NullSpace:
    """A PETSc null space of the span of ``vecs`` (orthonormalized in place by modified
    Gram-Schmidt; vectors that depend on the previous ones are dropped).

    Args:
        vecs: the vectors.
        comm: their communicator.

    Returns:
        The null space.
    """
    basis = []
    for v in vecs:
        for u in basis:
            v.axpy(-v.dot(u), u)
        nv = v.norm()
        if nv > 1e-10 * np.sqrt(v.getSize()):
            v.scale(1.0 / nv)
            basis.append(v)
    return PETSc.NullSpace().create(vectors=basis, comm=comm)


class FullSpace:
    """Numbering of the concatenated dofs of several bodies on one communicator.

    Args:
        bodies: the model's bodies (same communicator).
    """

    def __init__(self, bodies: Sequence) -> None:
        self.bodies = list(bodies)
        comm = self.bodies[0].comm
        for b in self.bodies[1:]:
            if b.comm.size != comm.size or MPI.Comm.Compare(b.comm, comm) not in (
                    MPI.IDENT, MPI.CONGRUENT):
                raise ValueError("all bodies of a model must live on the same MPI communicator")
        self.comm = comm
        self.bs = [b.V.dofmap.index_map_bs for b in self.bodies]
        self.sizes = [b.V.dofmap.index_map.size_local * bs for b, bs in zip(self.bodies, self.bs)]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.n_local = int(self.offsets[-1])
        self.rstart = comm.exscan(self.n_local) or 0
        self.n_global = comm.allreduce(self.n_local, op=MPI.SUM)
        # per body and rank: where that rank's block of this body starts, in full and body numbers
        self._full_start = []
        self._body_start = []
        self._body_end = []
        for i, b in enumerate(self.bodies):
            bstart = b.V.dofmap.index_map.local_range[0] * self.bs[i]
            self._full_start.append(np.array(comm.allgather(self.rstart + int(self.offsets[i]))))
            self._body_start.append(np.array(comm.allgather(bstart)))
            self._body_end.append(np.array(comm.allgather(bstart + self.sizes[i])))

    @property
    def single(self) -> bool:
        """True for a model of one body (its full space is the body's own)."""
        return len(self.bodies) == 1

    def global_indices(self, ib: int, dofs: np.ndarray) -> np.ndarray:
        """Full global indices of local (owned or ghost, unblocked) dofs of body ``ib``.

        Args:
            ib: the body's index.
            dofs: local unblocked dofs of the body (owned or ghost).

        Returns:
            The full global indices.
        """
        dofs = np.asarray(dofs, dtype=np.int64)
        V = self.bodies[ib].V
        bs = self.bs[ib]
        imap = V.dofmap.index_map
        nodes, comps = dofs // bs, dofs % bs
        gnodes = np.asarray(imap.local_to_global(nodes.astype(np.int32)), dtype=np.int64)
        owners = np.full(len(dofs), self.comm.rank, dtype=np.int64)
        ghost = nodes >= imap.size_local
        if np.any(ghost):
            owners[ghost] = compat.ghost_owners(imap)[nodes[ghost] - imap.size_local]
        return cast(np.ndarray, (self._full_start[ib][owners]
                                 + (gnodes * bs + comps - self._body_start[ib][owners])
                                 ).astype(np.int64))

    def full_of_global(self, ib: int, index: np.ndarray) -> np.ndarray:
        """Full global indices of global (unblocked) dof numbers ``index`` of body ``ib``,
        on any rank.

        Args:
            ib: the body's index.
            index: the body's global dof numbers.

        Returns:
            The full global indices.
        """
        g = np.asarray(index, dtype=np.int64)
        # the first rank whose block ends past g (ranks that own nothing end where they start)
        owner = np.searchsorted(self._body_end[ib], g, side="right")
        full = self._full_start[ib][owner] + (g - self._body_start[ib][owner])
        return cast(np.ndarray, full.astype(PETSc.IntType))

    def owned_range(self, ib: int) -> tuple:
        """Full global range [start, stop) of this rank's owned dofs of body ``ib``.

        Args:
            ib: the body's index.

        Returns:
            ``(start, stop)``.
        """
        s = self.rstart + int(self.offsets[ib])
        return s, s + self.sizes[ib]

    def dof(self, ib: int, point: ArrayLike, component: int, tol: float = 1e-8) -> int:
        """Full global index (the same on every rank) of displacement ``component`` of the
        node of body ``ib`` at ``point`` (body-frame coordinates; -1 when there is none).

        Args:
            ib: the body's index.
            point: the node's position (body-frame coordinates).
            component: the displacement component.
            tol: the largest distance to the node (m).

        Returns:
            The full index, or -1.
        """
        body = self.bodies[ib]
        if not 0 <= int(component) < body.gdim:
            raise ValueError(f"component must lie in 0..{body.gdim - 1}, got {component!r}")
        node = body.locate_node(checks.point3(point, "point"), tol)
        k = -1
        if node is not None:
            k = self.owned_range(ib)[0] + node * self.bs[ib] + int(component)
        return int(self.comm.allreduce(k, op=MPI.MAX))

    def create_vec(self) -> PETSc.Vec:
        """A zero vector of the full coordinates Delta (all bodies' dofs, this layout)."""
        v = PETSc.Vec().createMPI((self.n_local, self.n_global), comm=self.comm)
        v.set(0.0)
        return v

    def block_diagonal(self, mats: List[PETSc.Mat], out: PETSc.Mat = None,
                       off: Dict[Tuple[int, int], PETSc.Mat] | None = None) -> PETSc.Mat:
        """One AIJ matrix with the bodies' matrices on the diagonal (the matrix itself when
        there is one body) and the blocks ``off`` between bodies (rows of body i, columns of
        body j; e.g. zero blocks that reserve the pattern of a bearing between two bodies).
        ``out``, if given, is refilled (same pattern).

        Args:
            mats: the bodies' matrices.
            out: the object to refill (None: a new one).
            off: ``{(i, j): matrix}`` off the diagonal, or None.

        Returns:
            The matrix.
        """
        if self.single:
            return mats[0]
        n = len(mats)
        off = off or {}
        nest = PETSc.Mat().createNest([[mats[i] if i == j else off.get((i, j))
                                        for j in range(n)] for i in range(n)], comm=self.comm)
        if out is None:
            return nest.convert("aij")
        nest.convert("aij", out=out)
        return out

    def gather(self, vecs: List[PETSc.Vec], out: PETSc.Vec = None) -> PETSc.Vec:
        """Owned values of the bodies' vectors, concatenated into a full vector.

        Args:
            vecs: the bodies' vectors.
            out: the object to refill (None: a new one).

        Returns:
            The full vector.
        """
        if self.single and out is None:
            return vecs[0]
        out = out if out is not None else self.create_vec()
        arr = out.getArray()
        for i, v in enumerate(vecs):
            arr[self.offsets[i]: self.offsets[i + 1]] = v.getArray(readonly=True)[: self.sizes[i]]
        return out

    def scatter(self, x: PETSc.Vec, funcs: Sequence[fem.Function]) -> None:
        """Set the bodies' Functions from a full vector (ghosts updated).

        Args:
            x: a full vector.
            funcs: the bodies' Functions.
        """
        arr = x.getArray(readonly=True)
        for i, f in enumerate(funcs):
            f.x.array[: self.sizes[i]] = arr[self.offsets[i]: self.offsets[i + 1]]
            f.x.scatter_forward()
