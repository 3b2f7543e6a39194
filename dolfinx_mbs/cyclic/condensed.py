"""Every harmonic index of a cyclic model from one factorization of the sector: the cut faces
condensed once, a dense face operator per index, shift-and-invert Lanczos for all indices in
lock step (``docs/theory.md`` section 10; the frequencies of :meth:`Model.harmonic_frequencies`).

The sector's free dofs (the model's constraints other than the cut's rows eliminated by a
Maggi reducer of their own) split into the low face L, the high face H (each high node paired
with the low node the turn by alpha brings onto it, R its turn) and the interior I. In the
complex form of harmonic index k the high face follows the low one, u_H = e^(i k alpha) R u_L,
so that the operators of index k on (u_I, u_L) are X_k = E_k^H X E_k for X = K, M of the
sector, E_k u = (u_I, u_L, e^(i k alpha) R u_L): a Hermitian pencil of the sector's size, whose
eigenvalues are those of the real two-copy form (:mod:`dolfinx_mbs.cyclic.harmonic`), each
once (the two copies hold each twice).

Only the rows and columns of the faces depend on k. So

* the interior block K_II is factored once (MUMPS LDL^T, distributed; its negative pivots
  counted), and the Schur complement S = K_BB - K_BI K_II^-1 K_IB of the sector on both faces
  B = (L, H) is computed once, by MUMPS during a factorization of K
  (:func:`dolfinx_mbs.cyclic.schur.schur_complement`);
* per index, S_k = E_B^H S E_B = S_LL + S_LH R e^(ik alpha) + e^(-ik alpha) R^T S_HL +
  R^T S_HH R (dense, Hermitian, of the low face's size) is Cholesky-factored (the indices
  shared among the ranks). By Haynsworth's inertia theorem K_k is positive definite when K_II
  and S_k are: no divergent mode, and shift-and-invert at 0 finds the lowest eigenvalues;
* K_k^-1 b is an interior solve, a dense face solve and a second interior solve; the interior
  solves of all indices are one MatMatSolve (their real and imaginary parts as columns);
* Lanczos with full reorthogonalization in the M_k inner product (complex Hermitian; the real
  two-copy form's eigenvalue pairs are single here) runs for every index in lock step, each
  stopping when its wanted Ritz pairs' residuals fall below the tolerance.

Where it does not apply it says why (:class:`NotApplicable`) and the caller uses the two-copy
systems: the Coriolis coupling, nonlinear strain, face nodes partly constrained or tied, sectors
whose faces turn differently, a K_II or S_k that is not positive definite (a divergent mode or a
free motion), or an index that does not converge.

A single-vector Krylov method finds a repeated eigenvalue once. The complex form of
0 < k < N/2 has none generically (an axisymmetric part's nodal diameters k and N - k are
different waves there); the real problems of k = 0 and N/2 hold the pairs cos(n theta),
sin(n theta) of an axisymmetric part (n = jN, jN + N/2), so they get a second Lanczos sequence
kept M-orthogonal to the first's eigenvectors (:func:`lanczos`). Memory: the face operators
take 16 m^2 bytes an index (m the low face's free dofs), spread over the ranks, beside the
sector's Schur complement (8 (2m)^2 bytes on every rank).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.constraints.maggi import MaggiReducer
from dolfinx_mbs.cyclic import schur

if TYPE_CHECKING:
    from dolfinx_mbs.constraints.base import Constraint
    from dolfinx_mbs.cyclic.wheel import Wheel
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["NotApplicable", "FaceSplit", "CondensedSector", "HarmonicSpectrum", "lanczos",
           "harmonic_frequencies"]

#: relative residual of a converged Ritz pair (of the shift-and-invert operator)
TOL = 1e-10
#: Lanczos steps at most (each index; full reorthogonalization)
MAX_STEPS = 120
#: a face operator's smallest Cholesky pivot below this times its largest: singular
PIVOT = 1e-13


@dataclasses.dataclass(frozen=True)
class HarmonicSpectrum:
    """The lowest natural frequencies of several harmonic indices of a cyclic model
    (:meth:`dolfinx_mbs.Model.harmonic_frequencies`).

    Attributes:
        harmonic: the harmonic indices (nodal diameters), ascending.
        frequencies: (len(harmonic), n) rad/s, row j those of ``harmonic[j]`` (for
            0 < k < N/2 each whole-wheel pair twice, as ``natural_frequencies(harmonic=k)``).
        method: per index, ``"condensed"`` (this module) or ``"two-copy"`` (the index's own
            system, :meth:`dolfinx_mbs.Model.natural_frequencies`).
        reason: why the condensed method did not apply (to some or all indices), or None.
    """

    harmonic: np.ndarray
    frequencies: np.ndarray
    method: Tuple[str, ...]
    reason: str | None

    def __getitem__(self, k: int) -> np.ndarray:
        """The frequencies of harmonic index ``k``."""
        hits = np.flatnonzero(self.harmonic == k)
        if len(hits) == 0:
            raise KeyError(f"harmonic index {k} is not in {self.harmonic.tolist()}")
        return np.asarray(self.frequencies[hits[0]])


class NotApplicable(Exception):
    """The condensed method does not apply to this model; the message says why."""


class FaceSplit:
    """The sector's free dofs split into interior, low face and high face (collective).

    Args:
        base: the model's own (k = 0) system.
        wheel: the model's cyclic part.
        constraints: the model's constraints (the cut's k = 0 rows among them).

    Raises:
        NotApplicable: face nodes that are neither all free nor all fixed on both faces, a
            node on both faces, or sectors whose turns differ.
    """

    def __init__(self, base: SecondOrderSystem, wheel: Wheel,
                 constraints: Sequence[Constraint]) -> None:
        space = base.space
        self.comm = comm = space.comm
        others = [c for c in constraints if c is not wheel.rows]
        self.reducer = red = MaggiReducer(space, others)
        turns = [p.R for p in wheel.pairs]
        if any(not np.allclose(R, turns[0], atol=1e-14) for R in turns):
            raise NotApplicable("the sectors' turns differ (bodies in different components)")
        g = turns[0].shape[0]
        ai, _, _ = red.A.getValuesCSR()
        r0, n = space.rstart, space.n_local
        status = np.where(np.diff(ai) == 0, 0, -1)     # 0 fixed, -1 dependent, 1 free
        status[red.independent - r0] = 1
        hi = np.concatenate([p.high.reshape(-1, g) for p in wheel.pairs]).reshape(-1)
        lo = np.concatenate([p.low.reshape(-1, g) for p in wheel.pairs]).reshape(-1)
        H = np.concatenate(comm.allgather(hi)).astype(np.int64)
        L = np.concatenate(comm.allgather(lo)).astype(np.int64)

        def state(full: np.ndarray) -> np.ndarray:
            own = (full >= r0) & (full < r0 + n)
            s = np.full(len(full), -9, dtype=np.int64)
            s[own] = status[full[own] - r0]
            out = np.empty_like(s)
            comm.Allreduce(s, out, op=MPI.MAX)
            return out

        sH, sL = state(H).reshape(-1, g), state(L).reshape(-1, g)
        free = (sH == 1).all(axis=1) & (sL == 1).all(axis=1)
        fixed = (sH == 0).all(axis=1) & (sL == 0).all(axis=1)
        if not (free | fixed).all():
            raise NotApplicable("cut-face nodes partly constrained or tied (each face node "
                                "must be free or clamped, with its partner)")
        Hn, Ln = H.reshape(-1, g)[free].reshape(-1), L.reshape(-1, g)[free].reshape(-1)
        if len(np.intersect1d(Hn, Ln)) or len(np.unique(Ln)) != len(Ln):
            raise NotApplicable("a node on both cut faces (on the axis)")
        self.low = red.reduced_index(Ln)           # reduced global indices
        self.high = red.reduced_index(Hn)
        self.n_face = len(self.low)
        self.turn = sp.kron(sp.eye(self.n_face // g), sp.csr_matrix(turns[0])).tocsr()
        self.B = np.concatenate([self.low, self.high])
        rs, re = red.A.getOwnershipRangeColumn()
        self.rs, self.n_owned = rs, re - rs
        on_face = np.zeros(re - rs, dtype=bool)
        own = (self.B >= rs) & (self.B < re)
        on_face[self.B[own] - rs] = True
        self.own_pos = np.flatnonzero(own)       # positions in B of this rank's face dofs
        self.own_loc = self.B[own] - rs          # their local reduced index
        self.interior = np.flatnonzero(~on_face)  # local reduced indices of the interior
        self.interior_is = PETSc.IS().createGeneral(
            (self.interior + rs).astype(PETSc.IntType), comm=comm)


class CondensedSector:
    """The sector's K and M with K_II factored and the faces condensed (collective).

    Args:
        split: the sector's :class:`FaceSplit`.
        K: the reduced stiffness (prestress, spin softening) on the split's free dofs.
        M: the reduced mass.

    Raises:
        NotApplicable: K_II is not positive definite, or MUMPS's Schur complement cannot be
            reached.
    """

    def __init__(self, split: FaceSplit, K: PETSc.Mat, M: PETSc.Mat) -> None:
        self.split, self.M = split, M
        self.comm = comm = split.comm
        if not schur.available(comm):
            raise NotApplicable("MUMPS's Schur complement is not reachable in this PETSc")
        KII = K.createSubMatrix(split.interior_is, split.interior_is)
        KII.setOption(PETSc.Mat.Option.SYMMETRIC, True)
        ksp = PETSc.KSP().create(comm)
        ksp.setType("preonly")
        ksp.setOperators(KII)
        pc = ksp.getPC()
        pc.setType("cholesky")
        pc.setFactorSolverType("mumps")
        pc.setFactorSetUpSolverType()
        pc.getFactorMatrix().setMumpsIcntl(24, 1)     # detect null pivots (free motion)
        ksp.setUp()
        self._ksp, self._KII = ksp, KII
        self.factor = pc.getFactorMatrix()
        negative, null = self.factor.getMumpsInfog(12), self.factor.getMumpsInfog(28)
        if negative or null:
            self.destroy()
            raise NotApplicable(f"the sector's interior stiffness has {negative} negative and "
                                f"{null} null pivots (a divergent mode or a free motion)")
        ai, aj, av = K.getValuesCSR()
        rows = sp.csr_matrix((av, aj, ai), shape=(split.n_owned, K.getSize()[1]))
        self.K_IB = rows[split.interior][:, split.B].tocsr()   # local rows, all face columns
        self.K_BI = self.K_IB.T.tocsr()
        try:
            S = schur.schur_complement(K, split.B)
        except schur.SchurUnavailable as e:
            self.destroy()
            raise NotApplicable(str(e)) from None
        m, R = split.n_face, split.turn
        S_LHR = np.asarray((R.T @ S[m:, :m]).T)                         # S_LH R
        S_RHHR = np.asarray(R.T @ np.asarray(R.T @ S[m:, m:]).T).T      # R^T S_HH R
        self._even = np.asfortranarray(S[:m, :m] + S_RHHR)   # S_LL + R^T S_HH R
        self._odd = np.asfortranarray(S_LHR)
        self._odd_t = np.asfortranarray(S_LHR.T)

    def destroy(self) -> None:
        """Free the factorization."""
        self._ksp.destroy()
        self._KII.destroy()

    @staticmethod
    def phase(k: int, n_sectors: int) -> complex:
        """e^(i k alpha), exact for k = 0 and N/2."""
        a = 2.0 * math.pi * k / n_sectors
        c, s = math.cos(a), math.sin(a)
        if (2 * k) % n_sectors == 0:
            return complex(round(c), 0.0)
        return complex(c, s)

    def face_operator(self, ph: complex) -> np.ndarray:
        """S_k of the phase ``ph`` (dense, Hermitian)."""
        out = np.asfortranarray(self._even, dtype=complex)
        out += ph * self._odd
        out += np.conj(ph) * self._odd_t
        return out

    # -- block operations on complex vectors (u_I: this rank's rows, u_L: every rank) -----------
    def _face(self, uL: np.ndarray, ph: np.ndarray) -> np.ndarray:
        """(u_L, e^(ik alpha) R u_L) of each column."""
        return np.concatenate([uL, ph[None, :] * (self.split.turn @ uL)])

    def _face_h(self, vB: np.ndarray, ph: np.ndarray) -> np.ndarray:
        """E_B^H of face values (L then H) of each column."""
        m = self.split.n_face
        return np.asarray(vB[:m] + np.conj(ph)[None, :] * (self.split.turn.T @ vB[m:]))

    def mass(self, uI: np.ndarray, uL: np.ndarray, ph: np.ndarray
             ) -> Tuple[np.ndarray, np.ndarray]:
        """M_k u of each column (its index's phase in ``ph``)."""
        s = self.split
        c = uI.shape[1]
        U = np.zeros((s.n_owned, 2 * c), order="F")
        U[s.interior, :c], U[s.interior, c:] = uI.real, uI.imag
        uB = self._face(uL, ph)[s.own_pos]
        U[s.own_loc, :c], U[s.own_loc, c:] = uB.real, uB.imag
        Ud = PETSc.Mat().createDense([(s.n_owned, None), (None, 2 * c)], array=U,
                                     comm=self.comm)
        Vd = self.M.matMult(Ud)
        V = Vd.getDenseArray(readonly=True)
        vI = V[s.interior, :c] + 1j * V[s.interior, c:]
        VB = np.zeros((len(s.B), 2 * c))
        VB[s.own_pos] = V[s.own_loc]
        Ud.destroy()
        Vd.destroy()
        self.comm.Allreduce(MPI.IN_PLACE, VB, op=MPI.SUM)
        return vI, self._face_h(VB[:, :c] + 1j * VB[:, c:], ph)

    def _interior_solve(self, R: np.ndarray) -> np.ndarray:
        """K_II^-1 of complex columns: one MatMatSolve of their real and imaginary parts."""
        c = R.shape[1]
        Rr = np.asfortranarray(np.concatenate([R.real, R.imag], axis=1))
        Bd = PETSc.Mat().createDense([(R.shape[0], None), (None, 2 * c)], array=Rr,
                                     comm=self.comm)
        Xd = Bd.duplicate()
        self.factor.matSolve(Bd, Xd)
        X = Xd.getDenseArray(readonly=True)
        out: np.ndarray = X[:, :c] + 1j * X[:, c:]
        Bd.destroy()
        Xd.destroy()
        return out

    def solve(self, bI: np.ndarray, bL: np.ndarray, ph: np.ndarray,
              faces: Sequence) -> Tuple[np.ndarray, np.ndarray]:
        """K_k^-1 b of each column: ``faces[j]`` the Cholesky factor of column j's S_k on the
        rank that holds it (None elsewhere)."""
        Y = self._interior_solve(bI)
        rB = np.ascontiguousarray(self.K_BI @ Y)
        self.comm.Allreduce(MPI.IN_PLACE, rB, op=MPI.SUM)
        g = bL - self._face_h(rB, ph)
        wL = np.zeros_like(g)
        for j, f in enumerate(faces):
            if f is not None:
                wL[:, j] = sla.cho_solve(f, g[:, j], check_finite=False)
        self.comm.Allreduce(MPI.IN_PLACE, wL, op=MPI.SUM)
        wI = self._interior_solve(bI - self.K_IB @ self._face(wL, ph))
        return wI, wL


def _dots(comm: MPI.Comm, AI: np.ndarray, AL: np.ndarray, xI: np.ndarray,
          xL: np.ndarray) -> np.ndarray:
    """A^H x over the ranks (the replicated face part counted once): columns of A, one x."""
    out = (AI.T @ xI.conj()).conj()
    if comm.rank == 0:
        out += (AL.T @ xL.conj()).conj()
    out = np.ascontiguousarray(out)
    comm.Allreduce(MPI.IN_PLACE, out, op=MPI.SUM)
    return out


class _Basis:
    """Columns of complex vectors split as (this rank's interior rows, the face rows), stored
    in arrays that grow by doubling."""

    def __init__(self, mI: int, mL: int, capacity: int = 24) -> None:
        self.I = np.zeros((mI, capacity), dtype=complex, order="F")
        self.L = np.zeros((mL, capacity), dtype=complex, order="F")
        self.n = 0

    def append(self, xI: np.ndarray, xL: np.ndarray) -> None:
        if self.n == self.I.shape[1]:
            self.I = np.asfortranarray(np.concatenate([self.I, np.zeros_like(self.I)], axis=1))
            self.L = np.asfortranarray(np.concatenate([self.L, np.zeros_like(self.L)], axis=1))
        self.I[:, self.n], self.L[:, self.n] = xI, xL
        self.n += 1

    def columns(self) -> Tuple[np.ndarray, np.ndarray]:
        return self.I[:, : self.n], self.L[:, : self.n]


class _Run:
    """One Lanczos sequence of one index: its basis, M times it, the projected matrix, and
    the vectors it is kept M-orthogonal to (a first run's eigenvectors, or none)."""

    def __init__(self, j: int, mI: int, mL: int, max_steps: int,
                 deflate: Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None) -> None:
        self.j = j
        self.V, self.MV = _Basis(mI, mL), _Basis(mI, mL)
        self.H = np.zeros((max_steps + 1, max_steps), dtype=complex)
        self.deflate = deflate
        self.step = 0

    def orthogonalize(self, comm: MPI.Comm, x: np.ndarray, y: np.ndarray
                      ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y) made M-orthogonal to the basis (twice; its coefficients) and to the
        deflated vectors."""
        QI, QL = self.V.columns()
        AI, AL = self.MV.columns()
        h = np.zeros(QI.shape[1], dtype=complex)
        for _ in range(2):
            if self.deflate is not None:
                XI, XL, MXI, MXL = self.deflate
                c = _dots(comm, MXI, MXL, x, y)
                x, y = x - XI @ c, y - XL @ c
            if QI.shape[1]:
                c = _dots(comm, AI, AL, x, y)
                x, y, h = x - QI @ c, y - QL @ c, h + c
        return x, y, h


def lanczos(sector: CondensedSector, ks: Sequence[int], n_sectors: int, nev: Sequence[int],
            tol: float = TOL, max_steps: int = MAX_STEPS) -> Dict[int, np.ndarray]:
    """The ``nev[j]`` lowest eigenvalues of each index ``ks[j]`` (complex form), all indices
    in lock step (collective).

    A single Lanczos sequence finds a repeated eigenvalue once. For k = 0 and N/2, whose real
    problems hold the pairs of an axisymmetric part (the nodal diameters jN and jN + N/2:
    cos and sin, both of the same index), a second sequence M-orthogonal to the first's
    eigenvectors runs after it, and the lowest of both lists are kept.

    Args:
        sector: the condensed sector.
        ks: the harmonic indices.
        n_sectors: N.
        nev: how many eigenvalues of each.
        tol: the relative residual of a converged Ritz pair.
        max_steps: the most Lanczos steps of a sequence.

    Returns:
        By index, its eigenvalues (rad^2/s^2, ascending); indices whose S_k is not positive
        definite or that did not converge are missing.
    """
    comm, split = sector.comm, sector.split
    ks = list(ks)
    phases = np.array([sector.phase(k, n_sectors) for k in ks])
    faces: List = [None] * len(ks)
    flags = np.zeros(len(ks), dtype=np.int64)   # +1 factored, -1 not positive definite
    for j in range(len(ks)):            # the dense face operators shared among the ranks
        if j % comm.size == comm.rank:
            try:
                f = sla.cho_factor(sector.face_operator(phases[j]), lower=True,
                                   overwrite_a=True, check_finite=False)
                d = np.abs(np.diag(f[0])) ** 2
                if d.min() > PIVOT * d.max():    # else singular to round-off: a free motion
                    faces[j], flags[j] = f, 1
                else:
                    flags[j] = -1
            except np.linalg.LinAlgError:
                flags[j] = -1
    comm.Allreduce(MPI.IN_PLACE, flags, op=MPI.SUM)
    mI, mL = len(split.interior), split.n_face
    rng = np.random.default_rng(2027 + comm.rank)
    rng_face = np.random.default_rng(2026)

    def start(j: int, deflate: Tuple | None) -> _Run:
        run = _Run(j, mI, mL, max_steps, deflate)
        vI = rng.standard_normal(mI) + 1j * rng.standard_normal(mI)
        vL = rng_face.standard_normal(mL) + 1j * rng_face.standard_normal(mL)
        if deflate is not None:
            vI, vL, _ = run.orthogonalize(comm, vI, vL)
        MvI, MvL = sector.mass(vI[:, None], vL[:, None], phases[[j]])
        nrm = math.sqrt(_dots(comm, vI[:, None], vL[:, None], MvI[:, 0], MvL[:, 0]).real[0])
        run.V.append(vI / nrm, vL / nrm)
        run.MV.append(MvI[:, 0] / nrm, MvL[:, 0] / nrm)
        return run

    runs = [start(j, None) for j in range(len(ks)) if flags[j] == 1]
    lists: Dict[int, List[np.ndarray]] = {}
    needed = {j: 2 if (2 * ks[j]) % n_sectors == 0 else 1 for j in range(len(ks))}
    failed: set = set()
    while runs:
        bI = np.array([r.MV.I[:, r.step] for r in runs]).T
        bL = np.array([r.MV.L[:, r.step] for r in runs]).T
        ph = phases[[r.j for r in runs]]
        wI, wL = sector.solve(bI, bL, ph, [faces[r.j] for r in runs])
        for a, r in enumerate(runs):
            wI[:, a], wL[:, a], h = r.orthogonalize(comm, wI[:, a], wL[:, a])
            r.H[: r.step + 1, r.step] = h
        MwI, MwL = sector.mass(wI, wL, ph)
        still = []
        for a, r in enumerate(runs):
            j = r.j
            beta = math.sqrt(max(_dots(comm, wI[:, [a]], wL[:, [a]], MwI[:, a],
                                       MwL[:, a]).real[0], 0.0))
            r.H[r.step + 1, r.step] = beta
            n = r.step + 1
            T = r.H[:n, :n]
            theta, sv = np.linalg.eigh(0.5 * (T + T.conj().T))
            top = np.argsort(-theta)[: nev[j]]
            if n >= nev[j] and np.all(theta[top] > 0) and np.all(
                    np.abs(beta * sv[-1, top]) < tol * theta[top]):
                lists.setdefault(j, []).append(1.0 / theta[top])
                if len(lists[j]) < needed[j]:      # the second, deflated sequence
                    QI, QL = r.V.columns()
                    AI, AL = r.MV.columns()
                    y = sv[:, top]
                    still.append(start(j, (QI @ y, QL @ y, AI @ y, AL @ y)))
            elif beta > 0.0 and n < max_steps:
                r.V.append(wI[:, a] / beta, wL[:, a] / beta)
                r.MV.append(MwI[:, a] / beta, MwL[:, a] / beta)
                r.step += 1
                still.append(r)
            else:                  # no convergence, or an invariant subspace short of nev
                failed.add(j)
        runs = [r for r in still if r.j not in failed]
    return {ks[j]: np.sort(np.concatenate(v))[: nev[j]] for j, v in lists.items()
            if j not in failed and len(v) == needed[j]}


def harmonic_frequencies(wheel: Wheel, base: SecondOrderSystem,
                         constraints: Sequence[Constraint], t: float, n: int,
                         ks: Sequence[int]) -> Tuple[Dict[int, np.ndarray], str | None]:
    """The ``n`` lowest natural frequencies (rad/s) of each harmonic index in ``ks`` by the
    condensed method, as the two-copy systems give them (0 < k < N/2: each pair twice).

    Args:
        wheel: the model's cyclic part.
        base: the model's own (k = 0) system.
        constraints: the model's constraints.
        t: the time of the frame state (s).
        n: how many frequencies of each index.
        ks: the harmonic indices.

    Returns:
        (frequencies by index for those it found, the reason it did not apply to the others
        or None).
    """
    N = wheel.n_sectors
    K = M = None
    try:
        if base.nonlinear:
            raise NotApplicable("nonlinear strain (the tangent about the k = 0 equilibrium)")
        split = FaceSplit(base, wheel, constraints)
        red = split.reducer
        red.update(t)
        asm = base.assembly
        K = red.reduce(asm.stiffness(t, angular_acceleration=False))
        M = red.reduce(asm.mass())
        sector = CondensedSector(split, K, M)
    except NotApplicable as e:
        for X in (K, M):
            if X is not None:
                X.destroy()
        return {}, str(e)
    try:
        nev = [n if (2 * k) % N == 0 else (n + 1) // 2 for k in ks]
        lam = lanczos(sector, ks, N, nev)
    finally:
        sector.destroy()
        K.destroy()
        M.destroy()
        split.interior_is.destroy()
    out = {}
    for k, ev in lam.items():
        w = np.sqrt(ev)
        if (2 * k) % N != 0:
            w = np.repeat(w, 2)[:n]
        out[k] = w
    missing = [k for k in ks if k not in out]
    return out, (f"harmonic indices {missing}: a face operator not positive definite or no "
                 "convergence" if missing else None)
