"""The rigid-body motions a model's constraints leave free, in the eigen-solves.

An unconstrained (or partly constrained) body has motions without elastic strain: its
translations and rotations, or the mechanism of several bodies joined by pins. At rest they
are eigenvalues 0 of (K, M); the shift-and-invert target 0 is then an eigenvalue, the
factorization is singular, and what SLEPc returns depends on MUMPS' pivots and so on the
number of ranks. :mod:`dolfinx_mbs.modal` and :mod:`dolfinx_mbs.campbell` therefore

1. find the rigid subspace R (:func:`rigid_subspace`): the combinations of every body's
   rigid-body fields (:func:`dolfinx_mbs.space.rigid_body_modes`) that satisfy the
   homogeneous constraints (A restrict(r) = r) and have no elastic energy (r^T K r ~ 0:
   a user's spring to the ground removes a motion from R), orthonormal in M;
2. shift away from them (:func:`free_shift`): a real target where the shifted operator is
   nonsingular. In the symmetric problem K_eff = K + K_omega >= -Omega^2 M (the spin
   softening k_omega is at least -abs(omega)^2 times the mass, ``theory.md`` section 2), so
   every eigenvalue w^2 is at least -Omega^2 and the target -(1.5 Omega + s0)^2 lies below
   them all. In the quadratic problem a real eigenvalue lambda has
   lambda^2 = -x^H K_eff x / x^H M x <= Omega^2 (x^H G x is imaginary for a skew G), so the
   real target 1.5 Omega + s0 is no eigenvalue, and for imaginary eigenvalues i w the
   distance to it, (w^2 + sigma^2)^(1/2), orders them by abs(w) as the target 0 did.
   s0 = 1e-4 (max K_ii / max M_ii)^(1/2) keeps the target off zero at rest (a small fraction
   of the highest frequency: the shifted matrix stays well conditioned, the lowest modes
   still come first). (With prestress stiffening or a nonlinear tangent the bound on K_eff
   is not proven; the target is then merely unlikely to be an eigenvalue.);
3. ask for dim(R) more eigenpairs (and two spare) and drop those whose eigenvector lies
   mostly in R: rigid fraction ``abs(Q^T M x)^2 / x^H M x > 0.5`` (:meth:`RigidSubspace.
   fractions`). Their count is logged; ``modes`` returns their eigenvalues.

Deflating R instead (solving on its M-orthogonal complement, the mean-axis conditions) would
change the spinning problem: in a rotating frame the rigid motions are coupled to the elastic
ones (a rotation about the spin axis drives a radial Coriolis force), so the complement is no
invariant subspace. Shifting keeps the eigenvalues of the model as it is and only sorts them.

**What the rigid eigenvalues are.** At rest: 0 (double, a Jordan block: drift at constant
velocity). In a frame spinning at Omega about e, the model's equations are those of the body
seen from the rotating frame: a translation along e stays at 0; translations across e are a
body at rest in the inertial frame, seen to whirl backwards at the spin rate, lambda = +/- i
Omega (double); rotations are fields psi x X, exact to first order only: without the geometric
stiffness of the centrifugal prestress (``stiffening="prestress"``, ``theory.md`` section 3)
the spin softening of a rotation about the axis is not balanced and it shows as a divergence
at about the spin rate, and the tilts about axes across e are not the rigid body's precession
and nutation (whose instability about the intermediate principal axis the linear moving-frame
model does not contain). The rigid eigenvalues are reported as the model gives them, not as
physical results; the **elastic modes** are all the others, the same on every rank count and
in every routine.
"""

from __future__ import annotations

import logging
from typing import List, Optional, Sequence

import numpy as np
from petsc4py import PETSc

from .space import rigid_body_modes

__all__ = ["RigidSubspace", "rigid_subspace", "free_shift", "spin_bound"]

log = logging.getLogger(__name__)

#: a constraint defect (relative, in the norm squared) and an elastic energy (relative to the
#: largest diagonal stiffness over mass) below which a rigid field counts as free
DEFECT_TOL = 1e-12
ENERGY_TOL = 1e-10
#: an eigenvector with more than this fraction of its M-norm in R is a rigid mode
RIGID_FRACTION = 0.5


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
    """An M-orthonormal basis Q of the free rigid motions in the reduced coordinates.

    Attributes:
        dim: its dimension (0: none).
    """

    def __init__(self, Q: List[PETSc.Vec], MQ: List[PETSc.Vec], comm):
        self.Q, self.comm = Q, comm
        self.dim = len(Q)
        self._MQ = np.array([v.getArray(readonly=True).copy() for v in MQ]).reshape(self.dim, -1)
        for v in MQ:
            v.destroy()

    def fractions(self, Mr: PETSc.Mat, vecs: Sequence) -> np.ndarray:
        """The rigid fraction abs(Q^T M x)^2 / (x^H M x) of each eigenvector, given as
        ``(xr, xi)`` (``xi`` None for a real one), the same on every rank."""
        local = np.zeros((len(vecs), 2))
        tmp = Mr.createVecLeft()
        for k, (xr, xi) in enumerate(vecs):
            for x in (xr, xi):
                if x is None:
                    continue
                a = x.getArray(readonly=True)
                Mr.mult(x, tmp)
                local[k, 0] += np.dot(a, tmp.getArray(readonly=True))
        tmp.destroy()
        coef = np.zeros((len(vecs), self.dim, 2))
        for k, (xr, xi) in enumerate(vecs):
            coef[k, :, 0] = self._MQ @ xr.getArray(readonly=True)
            if xi is not None:
                coef[k, :, 1] = self._MQ @ xi.getArray(readonly=True)
        total = _sum(self.comm, np.concatenate([local[:, 0], coef.reshape(-1)]))
        norm = total[: len(vecs)]
        c = total[len(vecs):].reshape(len(vecs), self.dim, 2)
        return np.sum(c ** 2, axis=(1, 2)) / np.maximum(norm, np.finfo(float).tiny)

    def destroy(self) -> None:
        for v in self.Q:
            v.destroy()
        self.Q = []


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
    fields = []
    for ib, b in enumerate(system.bodies):
        if b.V.dofmap.index_map_bs not in (2, 3) or b.gdim != b.V.dofmap.index_map_bs:
            continue
        lo = space.offsets[ib]
        for m in rigid_body_modes(b.V):
            f = np.zeros(space.n_local)
            f[lo: lo + len(m)] = m
            fields.append(f)
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
        Kd, Md = K.getDiagonal(), M.getDiagonal()
        scale = Kd.norm(PETSc.NormType.INFINITY) / Md.norm(PETSc.NormType.INFINITY)
        Kd.destroy()
        Md.destroy()
        C = C @ _null_combinations(C.T @ grams[2] @ C, C.T @ grams[3] @ C, ENERGY_TOL * scale)
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
    return RigidSubspace(Q, MQ, system.comm)


def spin_bound(system, t: float = 0.0, states=None) -> float:
    """The largest abs(omega) (rad/s) of the bodies' frame states at ``t`` (or ``states``)."""
    states = states if states is not None else [b.frame.state(t) for b in system.bodies]
    return max(float(np.linalg.norm(st.omega)) for st in states)


def free_shift(Kr: PETSc.Mat, Mr: PETSc.Mat, omega: float, quadratic: bool) -> float:
    """The real target away from every rigid (and every real) eigenvalue: 1.5 Omega + s0 for
    the quadratic problem (1/s), -(1.5 Omega + s0)^2 for the symmetric one (rad^2/s^2)
    (module docstring); ``omega`` from :func:`spin_bound`. The same on every rank."""
    Kd, Md = Kr.getDiagonal(), Mr.getDiagonal()
    s0 = 1e-4 * np.sqrt(Kd.norm(PETSc.NormType.INFINITY) / Md.norm(PETSc.NormType.INFINITY))
    Kd.destroy()
    Md.destroy()
    sigma = 1.5 * abs(omega) + s0
    return float(sigma if quadratic else -sigma ** 2)
