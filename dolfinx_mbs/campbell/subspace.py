"""The subspace a Campbell sweep carries from speed to speed, and its solves.

At each speed Omega the sweep wants the ``m`` pairs of (lambda^2 M + lambda G + K) x = 0
nearest a real shift sigma (:mod:`dolfinx_mbs.campbell`). The eigenvectors change smoothly
with Omega, so the vectors of the speeds already solved hold most of the next speed's:

1. **One space for the sweep.** X (real, orthonormal columns, each rank its rows) holds the
   first speed's eigenvectors (real and imaginary parts, from SLEPc's PEP) and every
   correction since. The products A X of the pencil's constant matrices (K_0, K_2, G_0, G_1,
   M of :class:`~dolfinx_mbs.campbell.pencil.SweepPencil`; K, G, M of the speed where the
   pencil is not such a combination) and X^T A X are kept; a new column costs one product
   per matrix, and a speed's projected pencil is a combination of small matrices.
2. **Quadratic Rayleigh-Ritz.** The projected problem (lambda^2 M_p + lambda G_p + K_p) s = 0
   is solved densely (shift-and-invert companion form, on rank 0, broadcast); the Ritz pairs
   (lambda, x = X s) nearest sigma are the candidates (one per conjugate pair,
   :func:`dolfinx_mbs.modal.representatives`).
3. **Checked by a solve, corrected by the same solve.** With P = K + sigma G + sigma^2 M
   (:class:`ShiftedFactor`) and r = (lambda^2 M + lambda G + K) x, the pair's
   shift-and-invert residual (the one SLEPc's PEP and the linearization z = [x; mu x / a],
   mu = lambda - sigma, S z = z / mu measure) is

       ||S z - z / mu|| = ||P^-1 r|| / |mu|,

   and the pair is converged when it is <= ``RESIDUAL_FACTOR * tol`` |1 / mu| ||z||, i.e.
   ||P^-1 r|| <= RESIDUAL_FACTOR tol ||x|| (1 + |mu|^2 / a^2)^(1/2). One multi-right-hand-side
   solve gives P^-1 r of all the wanted pairs; the unconverged ones' P^-1 r (a residual
   inverse iteration step) join X, and the speed is projected again. Usually one or two solves
   a speed (the space already holds the last speeds' vectors: their extrapolation to this
   speed among its combinations).
4. **One factorization over many speeds.** The solves use the factorization of P at an
   earlier speed (P_j) for the first ``reuse`` solves of a speed, P of the speed itself (P_i,
   a numeric refactorization on the one pattern) after that. With P_j the residual is
   measured as ||P_i^-1 P_j|| ||P_j^-1 r||, the norm ratio taken in the space, where the
   two differ (the low modes; near a critical speed P_i is nearly singular and the ratio
   large): a bound of ||P_i^-1 r|| as far as X holds the directions P_i^-1 amplifies. The
   corrections P_j^-1 r are preconditioned residuals, as good a direction while P_j is near.
   A pencil evaluated at every speed (not the combination) is refactorized at every speed.
5. **Bounded.** When X grows past ``max_dim`` columns it is compressed (before a speed, with
   rotations of X, the products and the projections alone, no new product) to the Ritz
   vectors of the last ``keep`` speeds. A speed not converged in ``max_iter`` solves is solved
   by SLEPc's PEP (its solver kept), whose vectors join X.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Dict, List, Tuple, cast

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.modal import eigen as modal
from dolfinx_mbs.petsc_options import DIFFERENT, SAME, SUBSET, direct_lu, factorize

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

__all__ = ["ShiftedFactor", "SubspaceSolver", "RESIDUAL_FACTOR", "block_mult"]

#: a pair is converged at a shift-and-invert residual of this times ``tol``: SLEPc's ``tol``
#: bounds its Krylov estimate, which the solves' round-off (condition of P(sigma) times machine
#: epsilon) keeps from the explicit residual here; measured on the shaft of
#: tests/campbell/test_campbell.py, 1e-8 gives frequencies within 2e-9 of independent SLEPc solves,
#: the scatter of SLEPc's own
RESIDUAL_FACTOR = 100.0

#: the pencil as terms: for "K", "G", "M", a list of (name, matrix, coefficient)
Terms = Dict[str, List[Tuple[str, PETSc.Mat, float]]]


def _dense(comm: MPI.Comm, arr: np.ndarray, N: int) -> PETSc.Mat:
    """An MPI dense matrix with the local rows ``arr`` (n_local x k)."""
    arr = np.asfortranarray(arr, dtype=PETSc.ScalarType)
    return PETSc.Mat().createDense(((arr.shape[0], N), (PETSc.DECIDE, arr.shape[1])),
                                   array=arr, comm=comm)


def block_mult(A: PETSc.Mat, W: np.ndarray) -> np.ndarray:
    """A W for the local rows W of a block of columns (local rows of the result): one
    pass over A for all the columns.

    Args:
        A: a parallel matrix.
        W: this rank's rows of the columns, in A's column layout.

    Returns:
        This rank's rows of A W (A's row layout).
    """
    X = _dense(A.getComm(), W, A.getSize()[1])
    Y = A.matMult(X)
    out = cast(np.ndarray, Y.getDenseArray().copy())
    X.destroy()
    Y.destroy()
    return out


def _same_pattern(A: PETSc.Mat, B: PETSc.Mat) -> bool:
    """Whether A and B have the same nonzero pattern (on every rank)."""
    ia, ja, _ = A.getValuesCSR()
    ib, jb, _ = B.getValuesCSR()
    same = ia.shape == ib.shape and ja.shape == jb.shape and bool(
        np.array_equal(ia, ib) and np.array_equal(ja, jb))
    return bool(A.getComm().tompi4py().allreduce(same, op=MPI.LAND))


class ShiftedFactor:
    """P(sigma) = K + sigma G + sigma^2 M on one pattern for the whole sweep, and its direct
    solver (MUMPS; LDL^T while sigma = 0 and K is symmetric, LU from the first K that is not,
    e.g. a bearing's cross-coupling that grows from 0 with the speed: LDL^T reads one
    triangle and would factor another matrix): the symbolic factorization is made once (and
    again at that change), each later :meth:`update` is a numeric refactorization (the
    pattern's nonzero state is kept: K, G and M are added on the same pattern, or as subsets
    of the union).

    Args:
        comm: the communicator.
        shift: the shift sigma.
    """

    def __init__(self, comm: MPI.Comm, shift: float) -> None:
        self.comm, self.shift = comm, float(shift)
        self.P: PETSc.Mat | None = None
        self.ksp: PETSc.KSP | None = None
        self.same = True  # K, G, M share P's pattern (else G, M are added as subsets)
        self.symmetric = False  # factored by LDL^T

    def update(self, K: PETSc.Mat, G: PETSc.Mat, M: PETSc.Mat) -> None:
        """Refactor P = K + s G + s^2 M for a new pencil (s the shift).

        The matrix and its solver are made at the first call and refilled at later ones.

        Args:
            K: stiffness matrix at the speed.
            G: gyroscopic (+ damping) matrix at the speed.
            M: mass matrix.
        """
        s = self.shift
        if self.P is None:
            self.P = K.copy()
            if s != 0.0:
                self.same = _same_pattern(K, G) and _same_pattern(K, M)
                st = SAME if self.same else DIFFERENT
                self.P.axpy(s, G, structure=st)
                self.P.axpy(s * s, M, structure=st)
            self.symmetric = s == 0.0 and self._symmetric(K)
            self._new_solver()
        else:  # the pattern (nonzero state) of P is kept: a numeric factorization only
            assert self.ksp is not None  # (made with P)
            if self.same:
                K.copy(self.P, structure=SAME)
            else:
                self.P.zeroEntries()
                self.P.axpy(1.0, K, structure=SUBSET)
            if s != 0.0:
                st = SAME if self.same else SUBSET
                self.P.axpy(s, G, structure=st)
                self.P.axpy(s * s, M, structure=st)
            if self.symmetric and not self._symmetric(K):
                self.symmetric = False
                self.ksp.destroy()
                self._new_solver()   # LU, a new analysis
            else:
                self.ksp.setOperators(self.P)
        factorize(self.ksp, f"P(sigma) = K + sigma G + sigma^2 M at the shift sigma = {s:g}")

    @staticmethod
    def _symmetric(K: PETSc.Mat) -> bool:
        return bool(K.isSymmetric(1e-13 * K.norm(PETSc.NormType.INFINITY)))

    def _new_solver(self) -> None:
        """The direct solver of P: LDL^T when :attr:`symmetric`, else LU."""
        self.ksp = PETSc.KSP().create(self.comm)
        direct_lu(self.ksp, PETSc.PC.Type.CHOLESKY if self.symmetric else PETSc.PC.Type.LU)
        self.ksp.setOptionsPrefix(modal.PREFIX + "block_")
        self.ksp.setOperators(self.P)
        self.ksp.setFromOptions()

    def solve(self, B: np.ndarray) -> np.ndarray:
        """P^-1 B for the local rows of a block B.

        Args:
            B: a block of vectors (local rows).

        Returns:
            P^-1 B (local rows).
        """
        assert self.P is not None and self.ksp is not None  # (update() comes first)
        N = self.P.getSize()[0]
        R = _dense(self.comm, B, N)
        X = R.duplicate()
        compat.mat_solve(self.ksp, R, X)
        out = cast(np.ndarray, X.getDenseArray().copy())
        R.destroy()
        X.destroy()
        return out

    def destroy(self) -> None:
        """Destroy the factored matrix and its solver (collective)."""
        for X in (self.ksp, self.P):
            if X is not None:
                X.destroy()
        self.ksp = self.P = None


class SubspaceSolver:
    """The sweep's carried subspace and its solves (module docstring).

    Args:
        comm: the pencil's communicator.
        m: pairs wanted at each speed.
        shift: the real shift sigma.
        tol: relative residual tolerance (times ``RESIDUAL_FACTOR``, module docstring).
        extra: pairs beyond ``m`` taken from SLEPc and kept as the Ritz vectors of a speed
            (as many of them as SLEPc converges to an accepted backward error).
        max_iter: solves a speed before it is left to SLEPc's PEP.
        reuse: solves a speed makes with the factorization of an earlier speed before it
            refactorizes P at its own (0: a factorization at every speed).
        max_dim: columns of the space before it is compressed (default 10 (m + extra)).
        keep: speeds whose Ritz vectors a compressed space holds.
    """

    def __init__(self, comm: MPI.Comm, m: int, shift: float, tol: float, extra: int = 4,
                 max_iter: int = 6, max_dim: int | None = None, keep: int = 3,
                 reuse: int = 2) -> None:
        self.comm, self.m, self.shift, self.tol = comm, m, float(shift), tol
        self.extra, self.max_iter, self.keep, self.reuse = extra, max_iter, keep, reuse
        self.max_dim = max_dim or 10 * (m + extra)
        self.mpi = comm.tompi4py() if hasattr(comm, "tompi4py") else comm
        self.factor = ShiftedFactor(comm, shift)
        self.pep = None
        self.X: np.ndarray | None = None
        self.prods: Dict[str, np.ndarray] = {}   # A X, local rows
        self.proj: Dict[str, np.ndarray] = {}    # X^T A X
        self.history: List[np.ndarray] = []      # the last speeds' Ritz vectors' coefficients
        self.a = 1.0
        self.made: Dict[str, List[Tuple[str, float]]] = {}  # the factorized P's coefficients
        self.stats = {"block": 0, "slepc": 0, "blocks": 0, "factorizations": 0,
                      "compressions": 0}

    # -- the space -----------------------------------------------------------------------
    def _dots(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, self.mpi.allreduce(A.T @ B, op=MPI.SUM))

    def _orth(self, W: np.ndarray) -> np.ndarray:
        """W orthonormalized against X and itself (twice: block Gram-Schmidt and the
        eigen-decomposition of W^T W); directions within span X to round-off dropped."""
        scale = np.max(np.diag(self._dots(W, W)))
        for _ in range(2):
            if self.X is not None:
                W = W - self.X @ self._dots(self.X, W)
            gram = self._dots(W, W)
            d, U = self.mpi.bcast(np.linalg.eigh(gram) if self.mpi.rank == 0 else None,
                                  root=0)
            keep = d > 1e-20 * scale
            W = W @ (U[:, keep] / np.sqrt(d[keep]))
            scale = 1.0
        return W

    def _extend(self, W: np.ndarray, terms: Terms) -> None:
        """Add the directions of W to the space, with their products and projections."""
        W = self._orth(W)
        c = W.shape[1]
        if c == 0:
            return
        for name, A, _ in (t for key in "KGM" for t in terms[key]):
            AW = block_mult(A, W)
            if self.X is None:
                self.prods[name], self.proj[name] = AW, self._dots(W, AW)
                continue
            AX = self.prods[name]
            top = np.hstack([self.proj[name], self._dots(self.X, AW)])
            self.proj[name] = np.vstack([top, np.hstack([self._dots(W, AX),
                                                         self._dots(W, AW)])])
            self.prods[name] = np.hstack([AX, AW])
        self.X = W if self.X is None else np.hstack([self.X, W])
        self.history = [np.vstack([C, np.zeros((c, C.shape[1]))]) for C in self.history]

    def _products(self, terms: Terms) -> None:
        """All products and projections anew (matrices that are not the constant terms)."""
        assert self.X is not None  # (a space to multiply)
        for name, A, _ in (t for key in "KGM" for t in terms[key]):
            self.prods[name] = block_mult(A, self.X)
            self.proj[name] = self._dots(self.X, self.prods[name])

    def _compress(self) -> None:
        """The space cut to the Ritz vectors of the last ``keep`` speeds (rotations only)."""
        C = np.hstack(self.history[-self.keep:])
        U, sv, _ = np.linalg.svd(C, full_matrices=False)
        Q = self.mpi.bcast(U[:, sv > 1e-12 * sv[0]] if self.mpi.rank == 0 else None, root=0)
        self.X = self.X @ Q
        for name in self.prods:
            self.prods[name] = self.prods[name] @ Q
            self.proj[name] = Q.T @ self.proj[name] @ Q
        self.history = [Q.T @ C for C in self.history[-self.keep:]]
        self.stats["compressions"] += 1

    # -- one speed -----------------------------------------------------------------------
    def solve(self, K: PETSc.Mat | None, G: PETSc.Mat | None, M: PETSc.Mat | None,
              terms: Terms | None = None,
              pencil: Callable[[], Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]] | None = None
              ) -> Tuple[np.ndarray, List[Tuple[PETSc.Vec, PETSc.Vec]]]:
        """The ``m`` pairs nearest the shift (as :func:`dolfinx_mbs.modal.gyroscopic_modes`
        returns them: one per conjugate pair, ascending signed frequency, new vectors).

        Args:
            K: the stiffness at this speed (None with ``pencil`` and ``terms``).
            G: the gyroscopic (and damping) matrix at this speed (or None, as K).
            M: the mass matrix (or None, as K).
            terms: the pencil as constant matrices with this speed's coefficients, the same
                matrix objects at every speed (:meth:`SweepPencil.terms`); None: K, G, M are
                this speed's own (the products are formed anew).
            pencil: ``pencil() -> (K, G, M)``, called only when the assembled pencil is
                needed (a factorization at this speed, or SLEPc): forming it from the terms
                costs a sum of large matrices, and most speeds need none.

        Returns:
            The eigenvalues and the (real, imaginary) vector pairs.
        """
        if pencil is None:
            def pencil() -> Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]:
                return K, G, M
        fresh = terms is None
        if terms is None:
            terms = {"K": [("K", K, 1.0)], "G": [("G", G, 1.0)], "M": [("M", M, 1.0)]}
        if self.X is not None:
            if fresh:
                self._products(terms)
            if self.X.shape[1] > self.max_dim and len(self.history) >= self.keep:
                self._compress()
            out = self._iterate(terms, pencil, 0 if fresh else self.reuse)
            if out is not None:
                self.stats["block"] += 1
                return out
            log.info("Campbell sweep: subspace solve not converged in %d solves; SLEPc PEP",
                     self.max_iter)
        self.stats["slepc"] += 1
        lam, vecs, self.pep = modal.reused_gyroscopic_modes(
            *pencil(), self.m + self.extra, self.pep, shift=self.shift, tol=self.tol,
            least=self.m)
        cols = [v.getArray(readonly=True) for pair in vecs for v in pair]
        if fresh and self.X is not None:  # products of the old space with these matrices
            self._products(terms)
        self._extend(np.column_stack(cols), terms)
        near = np.argsort(np.abs(lam - self.shift), kind="stable")
        self.a = float(np.median(np.abs(lam[near[:self.m]] - self.shift)))
        assert self.X is not None  # (extended just above)
        self.history.append(self._dots(self.X, np.column_stack(cols)))
        for i in near[self.m:]:
            vecs[i][0].destroy()
            vecs[i][1].destroy()
        near = near[:self.m]
        near = near[np.argsort(modal.signed_frequencies(lam[near]), kind="stable")]
        return lam[near], [vecs[i] for i in near]

    def _combined(self, terms: Terms, key: str, store: Dict[str, np.ndarray]) -> np.ndarray:
        return sum(c * store[name] for name, _, c in terms[key])  # type: ignore[return-value]

    def _ritz(self, terms: Terms) -> Tuple[np.ndarray, np.ndarray]:
        """The representatives nearest the shift of the projected pencil's eigenvalues (up to
        m + extra) and their unit coefficient vectors s (Ritz vectors X s), rank 0's."""
        if self.mpi.rank == 0:
            Kp, Gp, Mp = (self._combined(terms, key, self.proj) for key in "KGM")
            sig, a, k = self.shift, self.a, Kp.shape[0]
            P = Kp + sig * Gp + sig * sig * Mp
            top = -np.linalg.solve(P, np.hstack([Gp + 2.0 * sig * Mp, a * Mp]))
            S = np.block([[top], [np.eye(k) / a, np.zeros((k, k))]])
            theta, V = np.linalg.eig(S)
            order = np.argsort(-np.abs(theta), kind="stable")
            theta, V = theta[order], V[:k, order]
            small = 1e-300
            lam = sig + 1.0 / np.where(np.abs(theta) > small, theta, small)
            want = self.m + self.extra
            rep = modal.representatives(lam, np.abs(lam[:2 * want]).max())
            chosen = np.flatnonzero(rep)[:want]
            s = V[:, chosen]
            out = (lam[chosen], s / np.linalg.norm(s, axis=0))
        else:
            out = None
        return cast("Tuple[np.ndarray, np.ndarray]", self.mpi.bcast(out, root=0))

    def _projected_P(self, coefs: Dict[str, List[Tuple[str, float]]]) -> np.ndarray:
        sig = self.shift
        return sum(w * c * self.proj[name] for key, w in (("K", 1.0), ("G", sig),  # type: ignore[return-value]
                                                          ("M", sig * sig))
                   for name, c in coefs[key])

    def _norm_ratio(self, terms: Terms) -> float:
        """||P_i^-1 P_j|| in the space (P_i this speed's P, P_j the factorized one's): the
        factor between the residual norms of the two, at least 1 (rank 0's)."""
        c = None
        if self.mpi.rank == 0:
            now = {key: [(name, c) for name, _, c in terms[key]] for key in "KGM"}
            Pi, Pj = self._projected_P(now), self._projected_P(self.made)
            c = max(1.0, float(np.linalg.norm(np.linalg.solve(Pi, Pj), 2)))
        return cast(float, self.mpi.bcast(c, root=0))

    def _iterate(self, terms: Terms, pencil: Callable[[], Tuple[PETSc.Mat, PETSc.Mat, PETSc.Mat]],
                 reuse: int) -> Tuple[np.ndarray, List[PETSc.Vec]] | None:
        """Projection, check and correction until the wanted pairs converge (or None); the
        first ``reuse`` solves with the last factorization, if any, their residuals scaled by
        :meth:`_norm_ratio`."""
        m = self.m
        own = False
        assert self.X is not None  # (called with a space)
        for it in range(self.max_iter):
            if not own and (self.factor.P is None or it >= reuse):
                self.factor.update(*pencil())
                self.made = {key: [(name, c) for name, _, c in terms[key]] for key in "KGM"}
                self.stats["factorizations"] += 1
                own = True
            ratio = 1.0 if own else self._norm_ratio(terms)
            lam, s = self._ritz(terms)
            if len(lam) < m:
                return None
            KX, GX, MX = (self._combined(terms, key, self.prods) for key in "KGM")
            sm, lm = s[:, :m], lam[:m]
            coef = np.hstack([sm.real, sm.imag])
            kx, gx, mx = (A @ coef for A in (KX, GX, MX))
            r = [kx[:, :m] + 1j * kx[:, m:], gx[:, :m] + 1j * gx[:, m:],
                 mx[:, :m] + 1j * mx[:, m:]]
            R = r[0] + lm * r[1] + lm ** 2 * r[2]
            W = self.factor.solve(np.hstack([R.real, R.imag]))
            self.stats["blocks"] += 1
            sq = self.mpi.allreduce(np.sum(W ** 2, axis=0), op=MPI.SUM)
            res = ratio * np.sqrt(sq[:m] + sq[m:])
            mu = lm - self.shift
            a = float(np.median(np.abs(mu)))
            bound = RESIDUAL_FACTOR * self.tol * np.sqrt(1.0 + np.abs(mu) ** 2 / a ** 2)
            ok = res <= bound
            log.debug("subspace solve: %d columns, %d of %d pairs converged, worst %.2e of "
                      "the bound (norm ratio %.3g)", self.X.shape[1], int(np.sum(ok)), m,
                      np.max(res / bound), ratio)
            if np.all(ok):
                self.a = a
                self.history.append(np.hstack([s.real, s.imag]))
                return self._vectors(lm, sm)
            bad = np.flatnonzero(~ok)
            self._extend(np.hstack([W[:, bad], W[:, m + bad]]), terms)
        return None

    def _vectors(self, lam: np.ndarray, s: np.ndarray) -> Tuple[np.ndarray, List[PETSc.Vec]]:
        """The pairs as PETSc vectors (real and imaginary part of X s), ascending signed
        frequency."""
        order = np.argsort(modal.signed_frequencies(lam), kind="stable")
        Z = self.X @ np.hstack([s.real, s.imag])
        m = s.shape[1]
        vecs = []
        assert self.factor.P is not None  # (factorized for the space)
        for i in order:
            xr, xi = self.factor.P.createVecs()
            xr.array[:] = Z[:, i]
            xi.array[:] = Z[:, m + i]
            vecs.append((xr, xi))
        return lam[order], vecs

    def destroy(self) -> None:
        """Destroy the factor, the eigensolver and the carried subspace (collective)."""
        self.factor.destroy()
        if self.pep is not None:
            self.pep.destroy()
        self.pep = None
        self.X = None
        self.prods.clear()
        self.proj.clear()
