"""The rigid-body motions a model's constraints leave free, and the elastic modes beside them.

An unconstrained (or partly constrained) body has motions without elastic strain: its
translations and rotations, or the mechanism of several bodies joined by pins. At rest they
are eigenvalues 0 of (K, M), and the shift-and-invert target 0 is one: the factorization is
singular and what SLEPc returns depends on MUMPS' pivots, so on the number of ranks. In a
spinning frame they are defective (Jordan blocks at 0 and +/- i Omega, below), which breaks
the reordering of SLEPc's Schur forms (LAPACK trexc) when they are computed with the elastic
modes. :mod:`dolfinx_mbs.modal` and :mod:`dolfinx_mbs.campbell` therefore

1. find the rigid subspace R (:func:`rigid_subspace`): the combinations of every body's
   rigid-body fields (:func:`dolfinx_mbs.assembly.space.rigid_body_modes`) that satisfy the
   homogeneous constraints (A restrict(r) = r) and have no elastic energy (r^T K r ~ 0:
   a spring to the ground removes a motion from R), with an M-orthonormal basis Q in the
   reduced coordinates;
2. deflate it: the elastic modes are sought M-orthogonal to R, Q^T M x = 0 (for a free body
   the mean-axis, or Tisserand, conditions: no mean translation, int rho u = 0, and no mean
   rotation, int rho X x u = 0). The rigid motions are held by a stiffness s far above the
   model's (s = 1e4 max K_ii / max M_ii, the rigid eigenvalues then at +/- i s^(1/2), never
   near the target): (lambda^2 M + lambda G + K + s M Q Q^T M) x = 0, a penalty form of the
   constraint, whose elastic eigenvalues at rest are exactly those of the free body (K Q = 0
   and Q^T M x = 0 there) and differ from the constrained problem's by O(Omega^2 / s) when
   spinning. The dense rank-dim term is kept out of the matrices with a border
   (:meth:`RigidSubspace.border`): [[K, B], [B^T, -c I]], B = (s c)^(1/2) M Q, c = max K_ii
   (both blocks of the size of K's entries, so that no vector along the border's unknowns
   looks converged), on which the default target 0 works as for a held body (away from a
   critical speed);
3. report the rigid motions apart: their count and the eigenvalues of the problem restricted
   to R (a dim x dim quadratic problem, :meth:`RigidSubspace.eigenvalues`), logged, and
   returned by ``modes``.

**Why deflate (and not shift away and drop the rigid pairs).** At rest the elastic
eigenvectors of (K, M) are M-orthogonal to R, so the deflated problem has exactly the free
body's elastic modes. In a spinning frame R is not invariant (the Coriolis force of a rotation
about the spin axis is radial; the spin softening of a tilt is a shear), so the full model
couples rigid and elastic motions; but the linear moving-frame model represents a rotation by
the field psi x X, exact to first order only, and without the geometric stiffness of the
centrifugal prestress (``docs/theory.md`` section 3) its rotations are not those of a rigid body
(below): coupling the elastic modes to them would carry that defect into them. The deflated
modes are the body's vibrations about its mean rigid motion. Measured on a free box
1 x 0.1 x 0.1 m spinning at 100 rad/s about its long axis, the full model's elastic
frequencies (found with a real target 150 rad/s and the rigid pairs dropped) differ from these
by less than 1e-7 relative; but that route computes the defective rigid eigenvalues with the
elastic ones, and LAPACK's reordering of the Schur form (trexc) failed on them for some numbers
of requested modes.
**What the rigid eigenvalues are.** At rest: 0. In a frame spinning at Omega about e the
equations are those of the body seen from the rotating frame: a translation along e stays at
0; translations across e are a body at rest in the inertial frame, seen to whirl backwards at
the spin rate: lambda = +/- i Omega (double). Rotations: without stiffening the spin softening
of a rotation about e is not balanced by the prestress, and it shows as a divergence at the
spin rate (lambda = +/- Omega), an artifact; the tilts about axes across e are not the rigid
body's precession and nutation either (so the instability of a spin about the intermediate
principal axis is not contained in the linear moving-frame model). They are reported as the
model gives them, for information, not as physical results.
"""

from __future__ import annotations

import logging
from typing import Dict, List, Optional

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.assembly.space import rigid_body_modes

__all__ = ["RigidSubspace", "rigid_subspace"]

log = logging.getLogger(__name__)

#: the rigid motions' stiffness s in the bordered pencil, times the largest K_ii / M_ii
PENALTY = 1e4
#: a constraint defect (relative, in the norm squared) and an elastic energy (relative to the
#: largest diagonal stiffness over mass) below which a rigid field counts as free
DEFECT_TOL = 1e-12
ENERGY_TOL = 1e-10


def _sum(comm, local: np.ndarray) -> np.ndarray:
    """Sum over ranks, rank 0's result on every rank (the decisions are the same)."""
    mpi = comm.tompi4py() if hasattr(comm, "tompi4py") else comm
    from mpi4py import MPI

    return mpi.bcast(mpi.reduce(local, op=MPI.SUM, root=0), root=0)


def _null_combinations(Gd: np.ndarray, Gn: np.ndarray, tol: float) -> np.ndarray:
    """Columns C, C^T Gn C = I, spanning {c : c^T Gd c <= tol c^T Gn c} (symmetric Grams)."""
    import scipy.linalg

    mu, C = scipy.linalg.eigh(0.5 * (Gd + Gd.T), 0.5 * (Gn + Gn.T))
    return C[:, mu <= tol]


class RigidSubspace:
    """An M-orthonormal basis Q of the free rigid motions in the reduced coordinates, and the
    bordered pencils of the elastic modes (module docstring).

    Attributes:
        dim: its dimension (at least 1).
    """

    def __init__(self, Q: List[PETSc.Vec], MQ: List[PETSc.Vec], comm):
        self.Q, self.comm = Q, comm
        self.dim = len(Q)
        #: the bodies' single rigid fields that are free on their own, e.g.
        #: ``"body 'beam': translation along x"`` (set by :func:`rigid_subspace`)
        self.names: List[str] = []
        self._MQ = np.array([v.getArray(readonly=True).copy() for v in MQ]).reshape(self.dim, -1)
        for v in MQ:
            v.destroy()
        self._blocks: Optional[tuple] = None
        self._out: Dict[str, PETSc.Mat] = {}

    def _border_blocks(self, Kr: PETSc.Mat, Mr: PETSc.Mat) -> tuple:
        """B = (s c)^(1/2) M Q (n x dim, its columns owned by rank 0), B^T, -c I and 0."""
        if self._blocks is None:
            comm, r = Kr.getComm(), self.dim
            root = comm.getRank() == 0
            nloc, N = Kr.getLocalSize()[0], Kr.getSize()[0]
            rloc = r if root else 0
            # K + s M Q Q^T M = K + B (c I)^-1 B^T, B = (s c)^(1/2) M Q: the blocks B and c I
            # of the size of K's entries (a pure-multiplier vector must not look converged)
            Kd, Md = Kr.getDiagonal(), Mr.getDiagonal()
            c = Kd.norm(PETSc.NormType.INFINITY)
            stiff = PENALTY * c / Md.norm(PETSc.NormType.INFINITY)
            Kd.destroy()
            Md.destroy()
            B = PETSc.Mat().createAIJ(((nloc, N), (rloc, r)),
                                      nnz=(r if root else 0, 0 if root else r), comm=comm)
            lo = Kr.getOwnershipRange()[0]
            B.setValues(np.arange(lo, lo + nloc, dtype=PETSc.IntType),
                        np.arange(r, dtype=PETSc.IntType),
                        np.sqrt(stiff * c) * np.ascontiguousarray(self._MQ.T))
            B.assemble()
            Z = PETSc.Mat().createAIJ(((rloc, r), (rloc, r)), nnz=(1, 0), comm=comm)
            for i in range(rloc):
                Z.setValue(i, i, -c)
            Z.assemble()
            zero = PETSc.Mat().createAIJ(((rloc, r), (rloc, r)), nnz=(1, 0), comm=comm)
            for i in range(rloc):
                zero.setValue(i, i, 0.0)
            zero.assemble()
            self._blocks = (B, B.transpose(PETSc.Mat()), Z, zero)
        return self._blocks

    def border(self, Kr: PETSc.Mat, Gr: Optional[PETSc.Mat], Mr: PETSc.Mat) -> tuple:
        """The pencil of the elastic modes: (K_b, G_b, M_b) = ([[K, M Q], [Q^T M, 0]],
        [[G, 0], [0, 0]], [[M, 0], [0, 0]]) (G_b None when ``Gr`` is), as AIJ matrices kept
        and refilled by later calls. An eigenvector's first part (:meth:`elastic_part`) is
        the mode, M-orthogonal to the rigid motions."""
        B, BT, Z, zero = self._border_blocks(Kr, Mr)
        out = []
        for key, X in (("K", Kr), ("G", Gr), ("M", Mr)):
            if X is None:
                out.append(None)
                continue
            blocks = [[X, B], [BT, Z]] if key == "K" else [[X, None], [None, zero]]
            nest = PETSc.Mat().createNest(blocks, comm=Kr.getComm())
            old = self._out.get(key)
            if old is not None:
                nest.convert("aij", out=old)
                nest.destroy()
            else:  # converted in place: the nest object becomes the AIJ matrix
                self._out[key] = nest.convert("aij")
            out.append(self._out[key])
        return tuple(out)

    def elastic_part(self, xb: PETSc.Vec, like: PETSc.Mat) -> PETSc.Vec:
        """The reduced-coordinate part of a bordered vector, as a new vector of ``like``'s
        layout."""
        x = like.createVecRight()
        n = x.getLocalSize()
        x.getArray()[:] = xb.getArray(readonly=True)[:n]
        return x

    def eigenvalues(self, Kr: PETSc.Mat, Gr: Optional[PETSc.Mat]) -> np.ndarray:
        """The eigenvalues of the rigid motions alone, lambda^2 I + lambda Q^T G Q + Q^T K Q
        (one per conjugate pair: the ``dim`` with the largest imaginary, then real part;
        without ``Gr`` the w^2 of Q^T K Q), the same on every rank (module docstring)."""
        r = self.dim
        local = np.zeros((2, r, r))
        y = Kr.createVecLeft()
        Qa = np.array([q.getArray(readonly=True) for q in self.Q]).reshape(r, -1)
        for j, q in enumerate(self.Q):
            for k, X in enumerate((Kr, Gr)):
                if X is not None:
                    X.mult(q, y)
                    local[k, :, j] = Qa @ y.getArray(readonly=True)
        y.destroy()
        Kq, Gq = _sum(self.comm, local)
        if Gr is None:
            return np.sort(np.linalg.eigvals(0.5 * (Kq + Kq.T)).real)
        companion = np.block([[np.zeros((r, r)), np.eye(r)], [-Kq, -Gq]])
        lam = np.linalg.eigvals(companion)
        return lam[np.lexsort((-lam.real, -np.round(lam.imag, 8)))][:r]

    def destroy(self) -> None:
        for v in self.Q:
            v.destroy()
        for M in list(self._out.values()) + list(self._blocks or ()):
            M.destroy()
        self.Q, self._out, self._blocks = [], {}, None


def rigid_subspace(system, t: float = 0.0) -> Optional[RigidSubspace]:
    """The rigid motions of ``system``'s bodies that its constraints at ``t`` leave free and
    its stiffness does not resist (module docstring), or None when there are none (or the
    system is not a Maggi-reduced one: velocity rows, multipliers)."""
    red = getattr(system, "reducer", None)
    if getattr(system, "has_multipliers", False) or getattr(system, "basis", None) is not None \
            or red is None:
        return None
    red.update(t)
    if red.rheonomic:  # the free motions change with time: no constant subspace
        return None
    space, asm = system.space, system.assembly
    fields, labels = [], []
    for ib, b in enumerate(system.bodies):
        g = b.V.dofmap.index_map_bs
        if g not in (2, 3) or b.gdim != g:
            continue
        lo = space.offsets[ib]
        kinds = [f"translation along {a}" for a in "xyz"[:g]] + \
            ([f"rotation about {a}" for a in "xyz"] if g == 3 else ["rotation about z"])
        for m, kind in zip(rigid_body_modes(b.V), kinds):
            f = np.zeros(space.n_local)
            f[lo: lo + len(m)] = m
            fields.append(f)
            labels.append(f"body {b.name!r}: {kind}")
    if not fields:
        return None
    F = np.array(fields)
    k = len(F)
    full, q = space.create_vec(), red.create_reduced_vec()
    back, KF, MF = space.create_vec(), [], []
    K, M = asm.elastic(), asm.mass()
    defect = np.zeros((k, space.n_local))
    for i in range(k):
        full.getArray()[:] = F[i]
        red.restrict(full, q)
        red.expand(q, back, homogeneous=True)
        defect[i] = back.getArray(readonly=True) - F[i]
        y = space.create_vec()
        K.mult(full, y)
        KF.append(y.getArray(readonly=True).copy())
        M.mult(full, y)
        MF.append(y.getArray(readonly=True).copy())
        y.destroy()
    grams = _sum(system.comm, np.stack([defect @ defect.T, F @ F.T, F @ np.array(KF).T,
                                        F @ np.array(MF).T]))
    C = _null_combinations(grams[0], grams[1], DEFECT_TOL)
    if C.shape[1] > 0:
        C = C @ _null_combinations(C.T @ grams[2] @ C, C.T @ grams[3] @ C,
                                   ENERGY_TOL * stiffness_scale(K, M))
    Q, MQ = [], []
    for c in C.T:
        full.getArray()[:] = c @ F
        Q.append(red.restrict(full))
        full.getArray()[:] = c @ np.array(MF)
        MQ.append(red.project(full))
    for v in (full, q, back):
        v.destroy()
    if not Q:
        return None
    out = RigidSubspace(Q, MQ, system.comm)
    # the single fields free on their own (a mechanism's motions are free only combined)
    d = np.diag
    energy_tol = ENERGY_TOL * stiffness_scale(K, M)
    out.names = [lab for i, lab in enumerate(labels)
                 if d(grams[0])[i] <= DEFECT_TOL * d(grams[1])[i]
                 and d(grams[2])[i] <= energy_tol * d(grams[3])[i]]
    return out


def stiffness_scale(K: PETSc.Mat, M: PETSc.Mat) -> float:
    """max K_ii / max M_ii: the stiffness scale that the tolerances on energy refer to."""
    Kd, Md = K.getDiagonal(), M.getDiagonal()
    scale = Kd.norm(PETSc.NormType.INFINITY) / Md.norm(PETSc.NormType.INFINITY)
    Kd.destroy()
    Md.destroy()
    return scale
