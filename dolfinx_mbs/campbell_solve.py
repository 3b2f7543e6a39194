"""The eigen-solves of a Campbell sweep, with what one speed leaves to the next.

At a spin speed Omega the sweep solves (lambda^2 M + lambda G + K) x = 0 for the ``m`` pairs
nearest a real shift sigma (:mod:`dolfinx_mbs.campbell`). Across the speeds:

1. **The pencil as a combination.** For bodies in ConstantSpin frames the frame terms are
   linear (Coriolis) and quadratic (spin softening, centrifugal prestress) in Omega, so
   K(Omega) = K_0 + Omega^2 K_2 and G(Omega) = G_0 + Omega G_1. :class:`SweepPencil` takes
   the system's pencil at 0 and at one speed, checks the combination against the system's
   pencil at a third speed (relative Frobenius difference <= 1e-12), and then forms each
   speed's pencil by MatAXPY on one pattern; where the check fails (a nonlinear system's
   tangent, a user's form with an update) it asks the system at every speed.
2. **One factorization object.** P(sigma) = K + sigma G + sigma^2 M keeps its pattern: the
   KSP (direct, MUMPS) is set up once and each speed is a numeric factorization on the first
   speed's symbolic one. With sigma = 0 and a symmetric K (K_eff is, unless a user's form is
   not) it is an LDL^T (MUMPS, indefinite: K_eff is above a critical speed), half the flops.
3. **A block solve warm-started from the last speed** (:class:`BlockShiftInvert`): with the
   scaled linearization z = [x; mu x / a], mu = lambda - sigma, a = (||P(sigma)|| /
   ||M||)^(1/2),

       S z = [-P(sigma)^-1 (a M y + (G + 2 sigma M) x); x / a] = z / mu,

   the block Krylov space of S from the last speed's Ritz vectors (real and imaginary parts of
   ``m + extra`` of them) is built a block at a time, each block one multi-right-hand-side
   solve (MUMPS solves a block of 20 for the price of about 3 single solves), and
   Rayleigh-Ritz gives the eigenpairs. A pair is converged when ||S z - theta z|| <=
   tol |theta| ||z||, theta = 1 / mu (the shift-and-invert residual, as SLEPc's PEP measures
   it); all Ritz values nearer sigma than the m-th wanted pair must be converged. The first
   speed, and a speed whose block space reaches ``max_blocks`` unconverged, are solved by
   SLEPc's PEP (TOAR), whose own ST keeps its factorization's symbolic part across speeds.
"""

from __future__ import annotations

import logging
from typing import List, Optional, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from . import compat, modal
from .petsc_options import direct_lu

log = logging.getLogger(__name__)

__all__ = ["SweepPencil", "BlockShiftInvert"]

SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
DIFFERENT = PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN
#: the combination K_0 + Omega^2 K_2, G_0 + Omega G_1 is used when it matches the system's
#: pencil at a check speed to this relative Frobenius difference
COMBINATION_TOL = 1e-12
#: a block solve's pair is converged at a residual of this times ``tol``: SLEPc's ``tol`` bounds
#: its Krylov estimate, which the solves' round-off (condition of P(sigma) times machine
#: epsilon) keeps from the explicit Ritz residual here; measured on the shaft of
#: tests/test_campbell.py, 1e-8 gives frequencies within 2e-9 of independent SLEPc solves,
#: the scatter of SLEPc's own
RESIDUAL_FACTOR = 100.0


def _fro(X: PETSc.Mat) -> float:
    return X.norm(PETSc.NormType.FROBENIUS)


class SweepPencil:
    """The pencil (K, G, M) of a sweep's speeds (module docstring, item 1).

    Args:
        pencil: ``pencil(speed) -> (K, G, M)``, the system's reduced pencil at ``speed`` (its
            matrices may be the system's own objects, refilled by the next call).
        speeds: the sweep's speeds (the reference and check speeds are taken from them).
    """

    def __init__(self, pencil, speeds: np.ndarray):
        self.pencil = pencil
        self.combined = False
        W = np.asarray(speeds, dtype=float)
        ref = float(W[np.argmax(np.abs(W))])
        if W.size < 3 or ref == 0.0:
            return
        K, G, M = pencil(0.0)
        self.K0, self.G0, self.M = K.copy(), G.copy(), M.copy()
        K, G, _ = pencil(ref)
        self.K2, self.G1 = K.copy(), G.copy()
        ok = True
        for X, X0, p in ((self.K2, self.K0, 2), (self.G1, self.G0, 1)):
            try:
                X.axpy(-1.0, X0, structure=SAME)
            except PETSc.Error:  # pragma: no cover - another pattern
                X.axpy(-1.0, X0, structure=DIFFERENT)
            X.scale(1.0 / ref ** p)
        self.K, self.G = self.K0.duplicate(), self.G0.duplicate()
        check = float(W[len(W) // 2]) if W[len(W) // 2] != 0.0 else 0.5 * ref
        Kc, Gc, _ = pencil(check)
        self._form(check)
        for X, Y in ((self.K, Kc), (self.G, Gc)):
            D = X.copy()
            D.axpy(-1.0, Y, structure=DIFFERENT)
            ok = ok and _fro(D) <= COMBINATION_TOL * max(_fro(Y), 1e-300)
            D.destroy()
        self.combined = bool(K.getComm().tompi4py().allreduce(ok, op=MPI.LAND))
        if not self.combined:
            log.info("Campbell sweep: the pencil is not K_0 + W^2 K_2, G_0 + W G_1; it is "
                     "evaluated at every speed")
            self.destroy()

    def _form(self, speed: float) -> None:
        for out, terms in ((self.K, ((1.0, self.K0), (speed ** 2, self.K2))),
                           (self.G, ((1.0, self.G0), (speed, self.G1)))):
            terms[0][1].copy(out, structure=SAME)
            out.axpy(terms[1][0], terms[1][1], structure=SAME)

    def __call__(self, speed: float) -> Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]:
        if not self.combined:
            return self.pencil(speed)
        self._form(speed)
        return self.K, self.G, self.M

    def destroy(self) -> None:
        for name in ("K0", "G0", "M", "K2", "G1", "K", "G"):
            X = self.__dict__.pop(name, None)
            if X is not None:
                X.destroy()
        self.combined = False


def _dense(comm, arr: np.ndarray, N: int) -> PETSc.Mat:
    """An MPI dense matrix with the local rows ``arr`` (n_local x k)."""
    arr = np.asfortranarray(arr, dtype=PETSc.ScalarType)
    return PETSc.Mat().createDense(((arr.shape[0], N), (PETSc.DECIDE, arr.shape[1])),
                                   array=arr, comm=comm)


class BlockShiftInvert:
    """The warm-started block shift-and-invert solver of a sweep (module docstring, item 3).

    Args:
        comm: the pencil's communicator.
        m: pairs wanted at each speed.
        shift: the real shift sigma.
        tol: relative residual tolerance.
        extra: pairs beyond ``m`` carried to the next speed as its start block.
        max_blocks: block Krylov steps before a speed is left to SLEPc.
    """

    def __init__(self, comm, m: int, shift: float, tol: float, extra: int = 4,
                 max_blocks: int = 6):
        self.comm, self.m, self.shift, self.tol = comm, m, float(shift), tol
        self.extra, self.max_blocks = extra, max_blocks
        self.mpi = comm.tompi4py() if hasattr(comm, "tompi4py") else comm
        self.ksp: Optional[PETSc.KSP] = None
        self.P: Optional[PETSc.Mat] = None
        self.pep = None
        self.start: Optional[np.ndarray] = None  # (2 n_local, k) real start block
        self.stats = {"block": 0, "slepc": 0, "blocks": 0}

    # -- operators -----------------------------------------------------------------------
    def _operators(self, K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat) -> None:
        """P(sigma), G + 2 sigma M and the factorization of P(sigma) (numeric only after the
        first speed)."""
        s = self.shift
        if self.P is None:
            self.P, self.Gs = K.copy(), G.copy()
        else:
            K.copy(self.P, structure=SAME)
            G.copy(self.Gs, structure=SAME)
        if s != 0.0:
            self.P.axpy(s, G, structure=DIFFERENT)
            self.P.axpy(s * s, M, structure=DIFFERENT)
            self.Gs.axpy(2.0 * s, M, structure=DIFFERENT)
        self.M = M
        if self.ksp is None:
            self.ksp = PETSc.KSP().create(self.comm)
            sym = s == 0.0 and bool(K.isSymmetric(1e-13 * K.norm(PETSc.NormType.INFINITY)))
            direct_lu(self.ksp, PETSc.PC.Type.CHOLESKY if sym else PETSc.PC.Type.LU)
            self.ksp.setOptionsPrefix(modal.PREFIX + "block_")
            self.ksp.setOperators(self.P)
            self.ksp.setFromOptions()
        else:
            self.ksp.setOperators(self.P)
        self.ksp.setUp()

    def _apply(self, Zt: np.ndarray, Zb: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """S applied to the block [Zt; Zb] (local rows)."""
        N = self.P.getSize()[0]
        X, Y = _dense(self.comm, Zt, N), _dense(self.comm, Zb, N)
        R = self.M.matMult(Y)
        R.scale(self.a)
        GX = self.Gs.matMult(X)
        R.axpy(1.0, GX)
        out = R.duplicate()
        compat.mat_solve(self.ksp, R, out)
        top = -out.getDenseArray().copy()
        for Z in (X, Y, GX, R, out):
            Z.destroy()
        return top, Zt / self.a

    def _dots(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return self.mpi.allreduce(A.T @ B, op=MPI.SUM)

    def _orth(self, V: np.ndarray, W: np.ndarray, passes: int = 2,
              scale: Optional[float] = None) -> np.ndarray:
        """W orthonormalized against the columns of V and itself: block Gram-Schmidt and the
        eigen-decomposition of W^T W (SVQB), ``passes`` times; directions of W within span V
        (or within its other columns) to round-off are dropped. ``scale``: the largest
        squared column norm of W before any projection (computed when not given)."""
        if scale is None:
            scale = np.max(np.diag(self._dots(W, W)))
        for _ in range(passes):
            if V.shape[1]:
                W = W - V @ self._dots(V, W)
            G = self._dots(W, W)
            d, U = self.mpi.bcast(np.linalg.eigh(G) if self.mpi.rank == 0 else None, root=0)
            keep = d > 1e-20 * scale
            W = W @ (U[:, keep] / np.sqrt(d[keep]))
            scale = 1.0
        return W

    # -- one speed -----------------------------------------------------------------------
    def solve(self, K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat
              ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]]]:
        """The ``m`` pairs nearest the shift (as :func:`dolfinx_mbs.modal.gyroscopic_modes`
        returns them: one per conjugate pair, ascending signed frequency, new vectors)."""
        if self.start is not None:
            self._operators(K, G, M)
            out = self._block()
            if out is not None:
                self.stats["block"] += 1
                return out
            log.info("Campbell sweep: block solve not converged in %d blocks; SLEPc PEP",
                     self.max_blocks)
        self.stats["slepc"] += 1
        lam, vecs, self.pep = modal.reused_gyroscopic_modes(
            K, G, M, self.m + self.extra, self.pep, shift=self.shift, tol=self.tol)
        if self.P is None or self.start is None:
            self._operators(K, G, M)
        self._keep_start(lam, [(xr.getArray(readonly=True) + 1j * xi.getArray(readonly=True))
                               for xr, xi in vecs])
        near = np.argsort(np.abs(lam - self.shift), kind="stable")
        for i in near[self.m:]:
            vecs[i][0].destroy()
            vecs[i][1].destroy()
        near = near[:self.m]
        near = near[np.argsort(modal.signed_frequencies(lam[near]), kind="stable")]
        return lam[near], [vecs[i] for i in near]

    def _keep_start(self, lam: np.ndarray, xs: List[np.ndarray]) -> None:
        """The next speed's start block: real and imaginary parts of [x; mu x / a]."""
        cols = []
        # the scale of the second block: the wanted |mu|, so that both blocks weigh alike
        self.a = float(np.median(np.abs(lam[:self.m] - self.shift)))
        for z, x in zip(lam, xs):
            y = (z - self.shift) / self.a * x
            cols += [np.concatenate([x.real, y.real]), np.concatenate([x.imag, y.imag])]
        self.start = np.array(cols).T

    def _block(self):
        """Block Krylov steps and Rayleigh-Ritz until the wanted pairs converge (or None).
        The residual of a Ritz pair (theta, z = V s) is ||F s_last|| with F the part of the
        last block's image outside span V: the earlier blocks' images lie in it."""
        n = self.P.getLocalSize()[0]
        new = self._orth(np.zeros((2 * n, 0)), self.start.copy())
        pmax = new.shape[1] * self.max_blocks
        Vs, SVs = np.zeros((2 * n, pmax), order="F"), np.zeros((2 * n, pmax), order="F")
        H = np.zeros((pmax, pmax))
        p = q = 0
        for _ in range(self.max_blocks):
            k = new.shape[1]
            if k == 0 or p + k > pmax:
                return None
            Vs[:, p:p + k] = new
            t, b = self._apply(new[:n], new[n:])
            SVs[:n, p:p + k], SVs[n:, p:p + k] = t, b
            V, SV, r, q, p = Vs[:, :p + k], SVs[:, :p + k], q, p, p + k
            self.stats["blocks"] += 1
            # new is orthogonal to span V_prev, which holds S of all blocks but the last one
            H[q:p, r:q] = self._dots(new, SV[:, r:q])
            H[:p, q:p] = self._dots(V, SV[:, q:p])
            F = SV[:, q:p] - V @ H[:p, q:p]
            gram = self._dots(F, F)
            # squared column norms of S new: the parts inside and outside span V
            scale = np.max(np.diag(gram) + np.sum(H[:p, q:p] ** 2, axis=0))
            # the Ritz pairs decide what every rank does: rank 0's, on every rank
            theta, s = self.mpi.bcast(np.linalg.eig(H[:p, :p]) if self.mpi.rank == 0 else None,
                                      root=0)
            last = s[q:p]
            res = np.sqrt(np.abs(np.einsum("ij,ik,kj->j", np.conj(last), gram, last)))
            done = self._converged(theta, s, res / np.linalg.norm(s, axis=0), V)
            if done is not None:
                return done
            # F is projected once already: one more pass (classical Gram-Schmidt twice)
            new = self._orth(V, F, passes=1, scale=scale)
        return None

    def _converged(self, theta, s, res, V):
        """The wanted pairs when all Ritz values up to the m-th wanted pair are converged
        (relative residuals ``res``), else None."""
        sig = self.shift
        small = 1e-300
        mu = 1.0 / np.where(np.abs(theta) > small, theta, small)
        lam = sig + mu
        order = np.argsort(-np.abs(theta), kind="stable")
        # "real" relative to the eigenvalues near the shift (as SLEPc's converged ones), not
        # to far Ritz values (theta ~ 0 from a space that holds the whole problem)
        tiny = 1e-8 * np.abs(lam[order[:2 * (self.m + self.extra)]]).max()
        rep = [(lam[i].imag > tiny) or (abs(lam[i].imag) <= tiny and lam[i].real > 0.0)
               for i in range(len(lam))]
        chosen = [i for i in order if rep[i]][:self.m + self.extra]
        if len(chosen) < self.m + self.extra:
            return None
        # the wanted pairs (the first m representatives) and everything nearer the shift
        upto = list(order).index(chosen[self.m - 1]) + 1
        if not np.all(res[order[:upto]] <= RESIDUAL_FACTOR * self.tol * np.abs(theta[
                order[:upto]])):
            return None
        n = V.shape[0] // 2
        sc = s[:, chosen]
        Z = V[:n] @ sc.real + 1j * (V[:n] @ sc.imag)
        norms = np.sqrt(self.mpi.allreduce(np.sum(np.abs(Z) ** 2, axis=0), op=MPI.SUM))
        xs = [Z[:, j] / norms[j] for j in range(len(chosen))]
        lam_c = lam[chosen]
        self._keep_start(lam_c, xs)
        lam_m = lam_c[:self.m]
        order_m = np.argsort(modal.signed_frequencies(lam_m), kind="stable")
        vecs = []
        for i in order_m:
            xr, xi = self.P.createVecs()
            xr.getArray()[:] = xs[i].real
            xi.getArray()[:] = xs[i].imag
            vecs.append((xr, xi))
        return lam_m[order_m], vecs

    def destroy(self) -> None:
        for X in (self.ksp, self.P, getattr(self, "Gs", None), self.pep):
            if X is not None:
                X.destroy()
        self.ksp = self.P = self.pep = None
