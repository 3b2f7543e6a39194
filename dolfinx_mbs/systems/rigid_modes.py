"""The rigid-body motions a model's constraints leave free, and the elastic modes beside them.

An unconstrained (or partly constrained) body has motions without elastic strain: its
translations and rotations, or the mechanism of several bodies joined by pins. At rest they
are eigenvalues 0 of (K, M), and the shift-and-invert target 0 is one: the factorization is
singular and what SLEPc returns depends on MUMPS' pivots, so on the number of ranks. In a
spinning frame they are defective (Jordan blocks at 0 and +/- i Omega, below), which breaks
the reordering of SLEPc's Schur forms (LAPACK trexc) when they are computed with the elastic
modes. :mod:`dolfinx_mbs.modal` and :mod:`dolfinx_mbs.campbell` therefore

1. find the free motions R (:func:`rigid_subspace`, below), with an M-orthonormal basis Q
   in the reduced coordinates;
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

**What is free.** A motion is free when nothing resists it: the combinations r of every
body's rigid-body fields (:func:`dolfinx_mbs.assembly.space.rigid_body_modes`, about each
body's centroid) that

* satisfy the homogeneous constraints (A restrict(r) = r);
* carry no stiffness of the operator the eigenproblems use, K + K_omega + K_sigma (elastic,
  spin softening, geometric stiffness of the centrifugal, gravity and applied prestress, the
  user's stiffness forms): the restriction of that operator to them is zero (its eigenvalues
  within 1e-13 of max K_ii / max M_ii). A spring to the ground, the gravity tension of a
  hanging link or the centrifugal tension of a link pinned to a spinning arm (a centrifugal
  pendulum, whose swing has the stiffness Omega^2 m R l / 2 of K_sigma + K_omega) removes a
  motion from R: it is a mode, with its frequency. One part is not counted: the spin
  softening of a body *without* stiffening. A rigid rotation turns the body's centrifugal
  load, which only the prestress's K_sigma balances (``docs/theory.md`` section 3); without it
  K_omega alone gives every rotation about the spin axis the divergence rate Omega, an
  artifact of the linear model, and every translation across the axis the -Omega^2 m of a body
  at rest in the inertial frame seen turning;
* stay free as the frames turn: with J the turning of the rigid fields (a + psi x X ->
  (omega x a, omega x psi), about the centroid c: (omega x a + (omega x c) x psi,
  omega x psi)), a motion at rest in the inertial frame is r(t) = e^(-J t) r(0) in the body
  frame; R is the largest subspace with J R in R. A free body passes (J maps rigid fields to
  rigid fields); a link pinned to a turning arm off the axis does not (its swing turned is a
  translation of the pin), so without stiffening its swing stays among the modes as the
  divergence -Omega^2 J_pin of the linear model, which a run shows too; pinned on the axis it
  passes (a rotation about the axis).

The test is on the operators, not on how the model was written: two equal frames given as one
object or as two make the same R.

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
from typing import TYPE_CHECKING, Dict, List, Protocol, Sequence, Tuple, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.assembly.space import rigid_body_modes
from dolfinx_mbs.frames.base import skew

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.assembly.space import FullSpace
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.frames.base import FrameState

__all__ = ["RigidSubspace", "rigid_subspace"]


class ModelParts(Protocol):
    """What :func:`rigid_subspace` reads of a system: a typed system, or the parts of a model
    before its systems exist (the static prestress)."""

    @property
    def assembly(self) -> Assembly:
        """The bodies' full operators."""

    @property
    def space(self) -> FullSpace:
        """The numbering of the bodies' dofs in the full vector."""

    @property
    def bodies(self) -> Sequence[Body]:
        """The elastic bodies, in the model's order."""

    @property
    def comm(self) -> MPI.Comm:
        """The bodies' communicator."""


log = logging.getLogger(__name__)

#: the rigid motions' stiffness s in the bordered pencil, times the largest K_ii / M_ii
PENALTY = 1e4
#: a constraint defect (relative, in the norm squared) and a stiffness (an eigenvalue of the
#: stiffness restricted to the rigid motions, relative to the largest diagonal stiffness over
#: mass) below which a rigid motion counts as free: the round-off of K r for rigid fields about
#: the body's centroid is ~1e-16 of that scale (measured), a pendulum under gravity ~1e-11
DEFECT_TOL = 1e-12
ENERGY_TOL = 1e-13
#: the part of J r off the free motions (relative, in the mass norm squared, per abs(omega)^2)
#: below which the frames' turning keeps r free
INVARIANCE_TOL = 1e-8


def _sum(comm: MPI.Comm, local: np.ndarray) -> np.ndarray:
    """Sum over ranks, rank 0's result on every rank (the decisions are the same)."""
    mpi = comm.tompi4py() if hasattr(comm, "tompi4py") else comm
    from mpi4py import MPI

    return cast(np.ndarray, mpi.bcast(mpi.reduce(local, op=MPI.SUM, root=0), root=0))


def _null_combinations(Gd: np.ndarray, Gn: np.ndarray, tol: float) -> np.ndarray:
    """Columns C, C^T Gn C = I, spanning {c : c^T Gd c <= tol c^T Gn c} (symmetric Grams)."""
    import scipy.linalg

    mu, C = scipy.linalg.eigh(0.5 * (Gd + Gd.T), 0.5 * (Gn + Gn.T))
    return cast(np.ndarray, C[:, mu <= tol])


class RigidSubspace:
    """An M-orthonormal basis Q of the free rigid motions in the reduced coordinates, and the
    bordered pencils of the elastic modes (module docstring).

    Args:
        Q: the M-orthonormal basis vectors.
        MQ: M times each of them.
        comm: the communicator.

    Attributes:
        dim: its dimension (at least 1).
    """

    def __init__(self, Q: List[PETSc.Vec], MQ: List[PETSc.Vec], comm: MPI.Comm) -> None:
        self.Q, self.comm = Q, comm
        self.dim = len(Q)
        #: the bodies' single rigid fields that are free on their own, e.g.
        #: ``"body 'beam': translation along x"`` (set by :func:`rigid_subspace`)
        self.names: List[str] = []
        self._MQ = np.array([v.getArray(readonly=True).copy() for v in MQ]).reshape(self.dim, -1)
        for v in MQ:
            v.destroy()
        self._blocks: tuple | None = None
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

    def border(self, Kr: PETSc.Mat, Gr: PETSc.Mat | None, Mr: PETSc.Mat) -> tuple:
        """The pencil of the elastic modes: (K_b, G_b, M_b) = ([[K, M Q], [Q^T M, 0]],
        [[G, 0], [0, 0]], [[M, 0], [0, 0]]) (G_b None when ``Gr`` is), as AIJ matrices kept
        and refilled by later calls. An eigenvector's first part (:meth:`elastic_part`) is
        the mode, M-orthogonal to the rigid motions.

        Args:
            Kr: the reduced stiffness.
            Gr: the reduced velocity coupling (or None).
            Mr: the reduced mass.

        Returns:
            ``(K_b, G_b, M_b)``.
        """
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

    def padded(self, X: PETSc.Mat, Mr: PETSc.Mat, border: bool = False) -> PETSc.Mat:
        """A new AIJ matrix of the bordered pencil's layout: [[X, M Q], [Q^T M, 0]] with
        ``border`` (as :meth:`border`'s K), [[X, 0], [0, 0]] without (its G and M); not kept
        (for pencils combined from several matrices of different patterns).

        Args:
            X: a reduced matrix.
            Mr: the reduced mass.
            border: add the border M Q.

        Returns:
            The new matrix.
        """
        B, BT, Z, zero = self._border_blocks(X, Mr)
        blocks = [[X, B], [BT, Z]] if border else [[X, None], [None, zero]]
        nest = PETSc.Mat().createNest(blocks, comm=X.getComm())
        return nest.convert("aij")  # in place: the nest object becomes the AIJ matrix

    def elastic_part(self, xb: PETSc.Vec, like: PETSc.Mat) -> PETSc.Vec:
        """The reduced-coordinate part of a bordered vector, as a new vector of ``like``'s
        layout.

        Args:
            xb: a bordered vector.
            like: a matrix of the reduced layout.

        Returns:
            The new vector.
        """
        x = like.createVecRight()
        n = x.getLocalSize()
        x.array[:] = xb.getArray(readonly=True)[:n]
        return x

    def eigenvalues(self, Kr: PETSc.Mat, Gr: PETSc.Mat | None) -> np.ndarray:
        """The eigenvalues of the rigid motions alone, lambda^2 I + lambda Q^T G Q + Q^T K Q
        (one per conjugate pair: the ``dim`` with the largest imaginary, then real part;
        without ``Gr`` the w^2 of Q^T K Q), the same on every rank (module docstring).

        Args:
            Kr: the reduced stiffness.
            Gr: the reduced velocity coupling (or None).

        Returns:
            The eigenvalues.
        """
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
        """Destroy the subspace's vectors and the matrices made from it (collective)."""
        for v in self.Q:
            v.destroy()
        for M in list(self._out.values()) + list(self._blocks or ()):
            M.destroy()
        self.Q, self._out, self._blocks = [], {}, None


def _fields(system: ModelParts) -> Tuple[List[np.ndarray], List[str], List[tuple]]:
    """Every body's rigid fields: translations, then rotations about the body's centroid (of
    its dof points: small coordinates keep the round-off of K r small), as full local arrays,
    their labels, and per body ``(body index, first field, gdim, centroid)``."""
    space = system.space
    mpi = system.comm.tompi4py() if hasattr(system.comm, "tompi4py") else system.comm
    fields, labels, blocks = [], [], []
    for ib, b in enumerate(system.bodies):
        g = b.V.dofmap.index_map_bs
        if g not in (2, 3) or b.gdim != g:
            continue
        n = b.V.dofmap.index_map.size_local
        x = b.V.tabulate_dof_coordinates()[:n, :g]
        total = mpi.allreduce(np.r_[x.sum(axis=0), len(x)])
        c = total[:g] / max(total[g], 1.0)
        lo = space.offsets[ib]
        blocks.append((ib, len(fields), g, np.r_[c, np.zeros(3 - g)]))
        kinds = [f"translation along {a}" for a in "xyz"[:g]] + \
            ([f"rotation about {a}" for a in "xyz"] if g == 3 else ["rotation about z"])
        modes = [m.reshape(-1) for m in rigid_body_modes(b.V)[:g]]
        d = x - c
        if g == 3:
            modes += [np.cross(np.eye(3)[k][None, :], d).reshape(-1) for k in range(3)]
        else:
            modes += [np.column_stack([-d[:, 1], d[:, 0]]).reshape(-1)]
        for m, kind in zip(modes, kinds):
            f = np.zeros(space.n_local)
            f[lo: lo + len(m)] = m
            fields.append(f)
            labels.append(f"body {b.name!r}: {kind}")
    return fields, labels, blocks


def _turning(blocks: Sequence[tuple], k: int,
             states: Sequence[FrameState]) -> Tuple[np.ndarray, float]:
    """J (k x k) on the rigid fields' coefficients: the rate at which the frames' turning
    changes a motion at rest in the inertial frame, d/dt (a, psi) = -J (a, psi) (module
    docstring), and the largest abs(omega)^2 of the bodies (0: no frame turns)."""
    J = np.zeros((k, k))
    w2 = 0.0
    for ib, i0, g, c in blocks:
        w = np.asarray(states[ib].omega, dtype=float)
        w2 = max(w2, float(w @ w))
        if g == 3:   # a + psi x (X - c) -> (w x a + (w x c) x psi, w x psi)
            J[i0: i0 + 3, i0: i0 + 3] = skew(w)
            J[i0: i0 + 3, i0 + 3: i0 + 6] = skew(np.cross(w, c))
            J[i0 + 3: i0 + 6, i0 + 3: i0 + 6] = skew(w)
        else:        # in the plane: omega = w_z e_z, psi about z
            J[i0: i0 + 3, i0: i0 + 3] = w[2] * np.array([[0.0, -1.0, c[0]], [1.0, 0.0, c[1]],
                                                         [0.0, 0.0, 0.0]])
    return J, w2


def _null_symmetric(A: np.ndarray, B: np.ndarray, tol: float) -> np.ndarray:
    """Columns C, C^T B C = I, spanning the null space of the symmetric A relative to the
    positive definite B (generalized eigenvalues within +/- ``tol``; A may be indefinite)."""
    import scipy.linalg

    mu, C = scipy.linalg.eigh(0.5 * (A + A.T), 0.5 * (B + B.T))
    return cast(np.ndarray, C[:, np.abs(mu) <= tol])


def rigid_subspace(system: ModelParts, t: float = 0.0,
                   states: Sequence[Sequence[FrameState]] | None = None, at_time: bool = False,
                   frames: bool = True) -> RigidSubspace | None:
    """The free motions of ``system``'s bodies (module docstring): the rigid motions that its
    constraints at ``t`` leave free, on which its stiffness does no work and which the frames'
    turning keeps free; None when there are none (or the system is not a Maggi-reduced one:
    velocity rows, multipliers).

    Args:
        system: a typed system (:mod:`dolfinx_mbs.systems`).
        t: the time of the constraints and (without ``states``) of the frame states.
        states: frame states (one sequence of FrameState per body, several of them) at which
            the motions must be free, e.g. the speeds of a Campbell sweep; None: the frames'
            states at ``t``.
        at_time: the subspace at ``t`` alone, also with rheonomic constraints (an eigenproblem
            about the state at ``t``); False: None with rheonomic constraints (their free
            motions change with time).
        frames: False: the free motions of the elastic stiffness alone (no frame state, no
            geometric stiffness, no turning): those of a static solve, e.g. the prestress's.

    Returns:
        The :class:`RigidSubspace`, or None.
    """
    red = getattr(system, "reducer", None)
    if getattr(system, "has_multipliers", False) or getattr(system, "basis", None) is not None \
            or red is None:
        return None
    red.update(t)
    if red.rheonomic and not at_time:
        return None
    space, asm = system.space, system.assembly
    fields, labels, blocks = _fields(system)
    if not fields:
        return None
    F = np.array(fields)
    k = len(F)
    if not frames:
        sets = []
    else:
        sets = [asm.states(t)] if states is None else [list(s) for s in states]
    full, q = space.create_vec(), red.create_reduced_vec()
    back, y = space.create_vec(), space.create_vec()
    M = asm.mass()
    defect = np.zeros((k, space.n_local))
    MF = np.zeros((k, space.n_local))
    for i in range(k):
        full.array[:] = F[i]
        red.restrict(full, q)
        red.expand(q, back, homogeneous=True)
        defect[i] = back.getArray(readonly=True) - F[i]
        M.mult(full, y)
        MF[i] = y.getArray(readonly=True)
    Kel = asm.elastic()
    scale = stiffness_scale(Kel, M)
    local = [defect @ defect.T, F @ F.T, F @ MF.T]
    if not frames:
        KF = np.zeros((k, space.n_local))
        Ksup = asm.supported()  # a bearing holds what it supports, as a constraint does
        for i in range(k):
            full.array[:] = F[i]
            Ksup.mult(full, y)
            KF[i] = y.getArray(readonly=True)
        local.append(F @ KF.T)
    turning = []
    for st in sets:
        K = asm.stiffness(t, angular_acceleration=False, states=st)
        KF = np.zeros((k, space.n_local))
        for i in range(k):
            full.array[:] = F[i]
            K.mult(full, y)
            KF[i] = y.getArray(readonly=True)
        E = F @ KF.T
        # the spin softening of bodies without stiffening is not a stiffness of their rigid
        # motions (module docstring): taken out
        for ib, i0, g, _ in blocks:
            body = system.bodies[ib]
            if body.stiffening is not None:
                continue
            Kw = asm.body_operators[ib].matrix("spin_softening")
            lo, hi = space.offsets[ib], space.offsets[ib + 1]
            xb, yb = Kw.createVecs()
            nf = 6 if g == 3 else 3
            Fb = F[i0: i0 + nf, lo:hi]
            Wb = np.zeros((nf, nf))
            for j in range(nf):
                xb.array[:] = Fb[j]
                Kw.mult(xb, yb)
                Wb[:, j] = Fb @ yb.getArray(readonly=True)
            xb.destroy()
            yb.destroy()
            E[i0: i0 + nf, i0: i0 + nf] -= Wb
        local.append(E)
        turning.append(_turning(blocks, k, st))
    for v in (full, q, back, y):
        v.destroy()
    grams = _sum(system.comm, np.stack(local))
    Gm = grams[2]
    C = _null_combinations(grams[0], grams[1], DEFECT_TOL)
    for E in grams[3:]:
        if C.shape[1]:
            C = C @ _null_symmetric(C.T @ E @ C, C.T @ Gm @ C, ENERGY_TOL * scale)
    C = _invariant(C, Gm, turning)
    if C.shape[1] == 0:
        return None
    Q, MQ = [], []
    full = space.create_vec()
    for c in C.T:
        full.array[:] = c @ F
        Q.append(red.restrict(full))
        full.array[:] = c @ MF
        MQ.append(red.project(full))
    full.destroy()
    out = RigidSubspace(Q, MQ, system.comm)
    # the single fields that are free motions on their own (a mechanism's only combined)
    P = C @ (C.T @ Gm)
    off = np.einsum("ij,jk,ki->i", (np.eye(k) - P).T, Gm, np.eye(k) - P)
    out.names = [lab for i, lab in enumerate(labels)
                 if off[i] <= INVARIANCE_TOL * Gm[i, i]]
    return out


def _invariant(C: np.ndarray, Gm: np.ndarray,
               turning: Sequence[Tuple[np.ndarray, float]]) -> np.ndarray:
    """The largest part of span ``C`` (M-orthonormal columns) that each J of ``turning``
    maps into itself (J C y in span C, to ``INVARIANCE_TOL`` relative to abs(omega)^2)."""
    while C.shape[1]:
        H = np.zeros((C.shape[1], C.shape[1]))
        for J, w2 in turning:
            if w2 == 0.0:
                continue
            JC = J @ C
            R = JC - C @ (C.T @ Gm @ JC)   # C^T Gm C = I: the part of J C off span C
            H += R.T @ Gm @ R / w2
        keep = _null_combinations(H, C.T @ Gm @ C, INVARIANCE_TOL)
        if keep.shape[1] == C.shape[1]:
            return C
        C = C @ keep
    return C


def stiffness_scale(K: PETSc.Mat, M: PETSc.Mat) -> float:
    """Max K_ii / max M_ii: the stiffness scale that the tolerances on energy refer to.

    Args:
        K: the stiffness.
        M: the mass.

    Returns:
        The scale.
    """
    Kd, Md = K.getDiagonal(), M.getDiagonal()
    scale = Kd.norm(PETSc.NormType.INFINITY) / Md.norm(PETSc.NormType.INFINITY)
    Kd.destroy()
    Md.destroy()
    return cast(float, scale)
