"""What a mode of a spinning body does: its orbit sense (whirl) and its kind (lateral,
torsional, axial or other), from the mode's displacement on the bodies that spin.

**Whirl.** For x = a + i b the motion of a node is Re(x e^{i w t}) = a cos wt - b sin wt, an
ellipse traversed about the direction -(a x b). Weighted with the consistent mass matrix M of
the full (expanded) displacement, the orbit sense about the spin axis e is

    h = Im(x^H M J x) / (x^H M P x) = 2 a^T M J b / (a^T M P a + b^T M P b)   in [-1, 1],

J = e x (per node), P = I - e e^T (motion across the axis). h = +1 is a circular orbit in the
sense of the spin, -1 against it, 0 a straight-line orbit; an ellipse of semi-axes p >= q has
abs(h) = 2 p q / (p^2 + q^2) (0.8 for q/p = 1/2, 0.2 for q/p = 1/10).

**Kind.** Each spinning body is cut across its axis into :data:`SLABS` slabs of equal
length; in each slab the mode's displacement is projected (in the lumped mass inner product
below) on the slab's six rigid motions about its centroid, split by what they do to the
axis: translations across it and tilts about axes across it move the shaft's line (lateral:
bending and whirl, what an unbalance excites), the rotation about it twists (torsional), the
translation along it stretches (axial). The mode's fraction of each is the energy of that part
of the projection over the mode's whole energy, f = (lateral, torsional, axial), each in
[0, 1], their sum at most 1; what the slabs' rigid motions leave (a disk's or blade's own
bending, a section's warping) is the rest. The kind is the largest fraction's name when it is
at least :data:`KIND_FLOOR`, else ``"other"``. The inner product weighs each node with the
mass matrix' diagonal scaled to the total mass (positive, where the consistent matrix' row
sums of second-order cells are not), for every displacement component alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

import numpy as np
from mpi4py import MPI

from dolfinx_mbs.campbell.subspace import block_mult
from dolfinx_mbs.frames.base import skew
from dolfinx_mbs.frames.stationary import transverse_basis

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.constraints.maggi import MaggiReducer
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["KINDS", "KIND_FLOOR", "SLABS", "ModeShapes", "kinds_of"]

#: the kinds of mode, in the order of the fractions
KINDS = ("lateral", "torsional", "axial")
#: the least fraction that names a mode's kind (below: "other")
KIND_FLOOR = 0.3
#: slabs per spinning body along its axis
SLABS = 48


def kinds_of(fractions: np.ndarray) -> np.ndarray:
    """The kind of each mode from its fractions (..., 3): the largest's name, or ``"other"``
    when it is below :data:`KIND_FLOOR`.

    Args:
        fractions: the (lateral, torsional, axial) fractions, last axis.

    Returns:
        An array of strings of the leading shape.
    """
    f = np.asarray(fractions, dtype=float)
    names = np.array(KINDS + ("other",), dtype=object)
    best = np.argmax(np.nan_to_num(f, nan=-1.0), axis=-1)
    top = np.take_along_axis(np.nan_to_num(f, nan=-1.0), best[..., None], axis=-1)[..., 0]
    return names[np.where(top >= KIND_FLOOR, best, len(KINDS))].astype(str)


class _Block:
    """One spinning body's share: its rows in the full space, its axis and slabs."""

    def __init__(self, sl: slice, g: int, axis: np.ndarray, x: np.ndarray, w: np.ndarray,
                 comm: MPI.Comm) -> None:
        self.sl, self.g = sl, g
        e = np.asarray(axis, dtype=float)
        self.J = skew(e)[:g, :g]
        self.P = (np.eye(3) - np.outer(e, e))[:g, :g]
        # the directions: two across the axis, then the axis (a 2D body: x, y, and z out of it)
        self.frame = np.vstack([transverse_basis(e), e[None, :]])
        s = x @ e
        lo = comm.allreduce(float(s.min()) if s.size else np.inf, op=MPI.MIN)
        hi = comm.allreduce(float(s.max()) if s.size else -np.inf, op=MPI.MAX)
        width = (hi - lo) / SLABS if hi > lo else 1.0
        self.slab = np.clip(((s - lo) / width).astype(int), 0, SLABS - 1)
        self.w = w
        # each slab's mass and centroid (global), then each node's rigid motions about it
        m = np.bincount(self.slab, weights=w, minlength=SLABS)
        mx = np.stack([np.bincount(self.slab, weights=w * x[:, k], minlength=SLABS)
                       for k in range(3)], axis=1)
        m, mx = comm.allreduce(m, op=MPI.SUM), comm.allreduce(mx, op=MPI.SUM)
        self.used = m > 0.0
        c = mx / np.where(m > 0.0, m, 1.0)[:, None]
        R = self._rigid(x - c[self.slab])           # (nodes, g, rigid motions)
        self.WR = w[:, None, None] * R
        from scipy.sparse import csr_matrix

        n = x.shape[0]
        self.S = csr_matrix((np.ones(n), (self.slab, np.arange(n))), shape=(SLABS, n))
        G = np.einsum("nir,nis->nrs", self.WR, R).reshape(n, -1)
        self.G = comm.allreduce(np.asarray(self.S @ G).reshape((SLABS,) + R.shape[2:] * 2),
                                op=MPI.SUM)

    def _rigid(self, d: np.ndarray) -> np.ndarray:
        """Rigid motions at the offsets ``d`` (nodes, 3) from their slab's centroid, in
        ``frame``'s directions: (nodes, g, 6) translations, then rotations (3D); (nodes, 2,
        3) in 2D (two translations, the rotation about z)."""
        n, g = d.shape[0], self.g
        if g == 3:
            R = np.zeros((n, 3, 6))
            for k, a in enumerate(self.frame):
                R[:, :, k] = a
                R[:, :, 3 + k] = np.cross(a[None, :], d)
            return R
        R = np.zeros((n, 2, 3))
        R[:, 0, 0], R[:, 1, 1] = 1.0, 1.0
        R[:, 0, 2], R[:, 1, 2] = -d[:, 1], d[:, 0]
        return R

    def parts(self, u: np.ndarray) -> np.ndarray:
        """This rank's parts of the slabs' projections: (slabs, rigid motions, modes) of
        R^T W u, for u (nodes, g, modes) complex."""
        r = self.WR.shape[2]
        out = np.zeros((SLABS, r, u.shape[2]), dtype=u.dtype)
        for j in range(r):
            node = sum(self.WR[:, i, j, None] * u[:, i, :] for i in range(self.g))
            out[:, j, :] = self.S @ node
        return out

    def energies(self, b: np.ndarray) -> np.ndarray:
        """(modes, 3) lateral, torsional and axial energies of the projections from the
        slabs' summed ``b`` (slabs, rigid motions, modes)."""
        k = b.shape[2]
        out = np.zeros((k, 3))
        groups = ((0, 1, 3, 4), (5,), (2,)) if self.g == 3 else ((0, 1), (2,), ())
        for s in np.flatnonzero(self.used):
            G = self.G[s]
            q = np.linalg.lstsq(G, b[s], rcond=1e-10)[0]
            for j, idx in enumerate(groups):
                if idx:
                    i = list(idx)
                    qi = q[i]
                    out[:, j] += np.real(np.einsum("rk,rs,sk->k", np.conj(qi), G[np.ix_(i, i)],
                                                   qi))
        return out


class ModeShapes:
    """The whirl index and the kind fractions of full displacement vectors (module docstring)
    of a system's spinning bodies.

    Args:
        system: the second-order system.
        spinning: which of its bodies spin (those the sweep sets).
    """

    def __init__(self, system: SecondOrderSystem, spinning: List[bool]) -> None:
        space = system.space
        comm = system.comm
        d = system.assembly.mass().getDiagonal()
        diag = d.getArray(readonly=True).copy()
        d.destroy()
        self.blocks: List[_Block] = []
        for ib, (body, spin) in enumerate(zip(system.bodies, spinning)):
            if not spin:
                continue
            g = body.gdim
            sl = slice(space.offsets[ib], space.offsets[ib + 1])
            n = (sl.stop - sl.start) // g
            x = np.zeros((n, 3))
            x[:, :g] = body.V.tabulate_dof_coordinates()[:n, :g]
            w = diag[sl].reshape(n, g).mean(axis=1)
            # the axis is invariant under the spin: also its local components
            self.blocks.append(_Block(sl, g, np.asarray(body.frame.axis, dtype=float), x, w,
                                      comm))

    def local_terms(self, red: MaggiReducer, M: PETSc.Mat, Z: np.ndarray) -> np.ndarray:
        """This rank's parts of the sums that give each mode's whirl index and fractions, to
        be summed over the ranks and read by :meth:`whirl_index` and :meth:`fractions`.

        Args:
            red: the system's reducer (full = A reduced).
            M: the full space's mass matrix.
            Z: this rank's rows of the reduced vectors: the k real parts a, then the k
                imaginary parts b.

        Returns:
            (k, 4 + 2 blocks x slabs x 6), real: (2 a^T M J b, a^T M P a + b^T M P b,
            a^T M a + b^T M b, the lumped energy sum w abs(u)^2) of each mode (M symmetric),
            then the real and imaginary parts of the slabs' projections.
        """
        k = Z.shape[1] // 2
        F = block_mult(red.A, Z)        # the full vectors (homogeneous: A q)
        MF = block_mult(M, F)
        a, b, Ma, Mb = F[:, :k], F[:, k:], MF[:, :k], MF[:, k:]
        out = np.zeros((k, 4))
        parts = np.zeros((len(self.blocks), SLABS, 6, k), dtype=complex)
        for i, blk in enumerate(self.blocks):
            sl, g, J, P = blk.sl, blk.g, blk.J, blk.P
            bs = b[sl].reshape(-1, g, k)
            as_ = a[sl].reshape(-1, g, k)
            Jb = np.einsum("ij,njk->nik", J, bs).reshape(-1, k)
            Pa = np.einsum("ij,njk->nik", P, as_).reshape(-1, k)
            Pb = np.einsum("ij,njk->nik", P, bs).reshape(-1, k)
            out[:, 0] += 2.0 * np.sum(Ma[sl] * Jb, axis=0)
            out[:, 1] += np.sum(Ma[sl] * Pa, axis=0) + np.sum(Mb[sl] * Pb, axis=0)
            out[:, 3] += blk.w @ (as_ ** 2 + bs ** 2).sum(axis=1)
            p = blk.parts(as_ + 1j * bs)
            parts[i, :, :p.shape[1], :] = p
        out[:, 2] = np.sum(Ma * a, axis=0) + np.sum(Mb * b, axis=0)
        flat = parts.reshape(-1, k)
        return np.hstack([out, flat.real.T, flat.imag.T])

    @staticmethod
    def whirl_index(terms: np.ndarray) -> np.ndarray:
        """The whirl index h of each mode from the summed :meth:`local_terms` (0 for a mode
        that does not move across the axis).

        Args:
            terms: the sums over the ranks.

        Returns:
            (k,) h.
        """
        moving = terms[:, 1] > 1e-12 * terms[:, 2]
        return np.where(moving, terms[:, 0] / np.where(moving, terms[:, 1], 1.0), 0.0)

    def fractions(self, terms: np.ndarray) -> np.ndarray:
        """(k, 3) the lateral, torsional and axial fractions of each mode from the summed
        :meth:`local_terms` (NaN without spinning motion).

        Args:
            terms: the sums over the ranks.

        Returns:
            The fractions.
        """
        k = terms.shape[0]
        nb = len(self.blocks)
        m = nb * SLABS * 6
        proj = (terms[:, 4:4 + m] + 1j * terms[:, 4 + m:4 + 2 * m]).T.reshape(nb, SLABS, 6, k)
        energy = np.zeros((k, 3))
        for blk, b in zip(self.blocks, proj):
            r = blk.G.shape[1]
            energy += blk.energies(b[:, :r, :])
        total = terms[:, 3]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total[:, None] > 0.0, energy / total[:, None], np.nan)
