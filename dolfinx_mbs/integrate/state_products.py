"""The matrix products of one state that a step's monitor and the next residual share.

In the node-block form (:class:`dolfinx_mbs.systems.InertiaBlocks`: constraints that fix whole
nodes) every inertia-type matrix is the mass times a gdim x gdim matrix per node, and the mass
commutes with such a block matrix (it is the scalar mass times the identity per node). Two
products of a state q, M q and K_s q, then give all the energies ask for:

    K q = K_s q + W_K (M q),     G_p q = W_p (M q),     K_el q = K_s q (no geometric stiffness),

and the residual of the next step, which PETSc evaluates first at the same state with zero
rates (TSTHETA's and TSALPHA2's initial guess is the last solution), needs no product of its
own. :class:`StateProducts` keeps M q, K_s q and a copy of q; a form asks ``holds(s, x)``
(same operators, x equal to q entry by entry) before it reuses them.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

import numpy as np
from petsc4py import PETSc

__all__ = ["StateProducts", "SteppedVelocity", "apply_blocks", "blocks_into",
           "second_order_residual"]

EPS = float(np.finfo(float).eps)


def blocks_into(segments: Sequence[tuple], xa: np.ndarray, oa: np.ndarray, which: int,
                add: bool = False, scale: float = 1.0) -> None:
    """Set or add ``oa`` (+)= scale W xa node by node, on local arrays.

    Args:
        segments: as in :func:`apply_blocks`.
        xa: the local array multiplied.
        oa: the local array set or added to.
        which: the index of the matrix W in each segment's tuple.
        add: add to ``oa`` instead of setting it.
        scale: the factor.
    """
    for seg in segments:
        (lo, hi), g, W = seg[0], seg[1], seg[which]
        y = (xa[lo:hi].reshape(-1, g) @ W.T).ravel()
        if scale != 1.0:
            y *= scale
        if add:
            oa[lo:hi] += y
        else:
            oa[lo:hi] = y


def apply_blocks(segments: Sequence[tuple], x: PETSc.Vec, out: PETSc.Vec, which: int,
                 add: bool = False) -> PETSc.Vec:
    """Set or add ``out`` (+)= W x node by node.

    Args:
        segments: the ((start, stop), gdim, matrices...) tuples of
            :class:`~dolfinx_mbs.systems.InertiaBlocks` (``blocks`` or ``momentum``).
        x: the vector multiplied.
        out: the vector set or added to.
        which: the index of the matrix W in each tuple.
        add: add to ``out`` instead of setting it.

    Returns:
        ``out``.
    """
    blocks_into(segments, x.getArray(readonly=True), out.getArray(), which, add)
    return out


class StateProducts:
    """M q and K_s q of the last state q given to :meth:`form`, for the record's version;
    with a velocity v also M v, M q and M v then formed in one pass over M (a product with
    a two-column dense matrix: the matrix is read once for both)."""

    def __init__(self) -> None:
        self.q: PETSc.Vec | None = None
        self.Mq: PETSc.Vec | None = None
        self.Ksq: PETSc.Vec | None = None
        self.Mv: PETSc.Vec | None = None
        self.version: Hashable = None
        self._pair: tuple | None = None  # (M, dense [q v], M [q v]) of the merged product

    def form(self, s: Any, q: PETSc.Vec, v: PETSc.Vec | None = None) -> StateProducts:
        """Form the products of ``q`` (and M v of ``v``, into ``Mv``) with the operators of
        the record ``s``, unless they are kept already.

        Args:
            s: the record (:class:`~dolfinx_mbs.systems.records.SecondOrder` or a stepper's
                own with its load vectors), with its node-block form ``s.blocks``.
            q: the state.
            v: a velocity whose M v is wanted too, or None.

        Returns:
            Itself.
        """
        kept = self.holds(s, q)
        if kept and v is None:
            return self
        if self.q is None:
            self.q, self.Mq, self.Ksq = q.duplicate(), q.duplicate(), q.duplicate()
        if v is not None and self.Mv is None:
            self.Mv = q.duplicate()
        if kept:
            s.M.mult(v, self.Mv)
            return self
        q.copy(self.q)
        if v is None:
            s.M.mult(q, self.Mq)
        else:
            self._mass_pair(s.M, q, v)
        s.blocks.Ks.mult(q, self.Ksq)
        self.version = s.version
        return self

    def _mass_pair(self, M: PETSc.Mat, q: PETSc.Vec, v: PETSc.Vec) -> None:
        """Mq, Mv = M q, M v by one product of M with the dense matrix [q v]."""
        if self._pair is None or self._pair[0] is not M:
            n_local, n = q.getLocalSize(), q.getSize()
            D = PETSc.Mat().createDense(((n_local, n), (PETSc.DECIDE, 2)), comm=q.getComm())
            D.setUp()
            D.assemble()
            self._pair = (M, D, M.matMult(D))
        _, D, C = self._pair
        d = D.getDenseArray()
        d[:, 0] = q.getArray(readonly=True)
        d[:, 1] = v.getArray(readonly=True)
        D.assemble()  # a new state of D
        M.matMult(D, result=C)
        c = C.getDenseArray(readonly=True)
        assert self.Mq is not None and self.Mv is not None  # (made by the caller, update)
        self.Mq.array[:] = c[:, 0]
        self.Mv.array[:] = c[:, 1]

    def holds(self, s: Any, x: PETSc.Vec) -> bool:
        """Whether the products kept are those of ``x`` with the operators of ``s``.

        Args:
            s: the record.
            x: the state.

        Returns:
            True when they are (same version, x equal to q entry by entry).
        """
        return self.q is not None and s.blocks is not None and self.version == s.version \
            and x.equal(self.q)

    def energies(self, s: Any) -> tuple:
        """(K_el q, K_pot q) of the state kept; K_pot = K = K_s + M W_K.

        Args:
            s: the state's record (``s.Kpot`` must be ``s.K``).

        Returns:
            (K_el q, K_pot q), vectors kept by this object.
        """
        kr = s.blocks
        assert self.q is not None and self.Ksq is not None  # (the state kept)
        Kel_q = self.Ksq
        if kr.Ks is not s.Kel:  # K_s = K_el + K_sigma: one more product
            Kel_q = self._vec("kel")
            s.Kel.mult(self.q, Kel_q)
        Kq = self.Ksq.copy(self._vec("k"))
        return Kel_q, apply_blocks(kr.blocks, self.Mq, Kq, 3, add=True)

    def _vec(self, name: str) -> PETSc.Vec:
        v = getattr(self, "_" + name, None)
        if v is None:
            assert self.q is not None  # (a state is kept)
            v = self.q.duplicate()
            setattr(self, "_" + name, v)
        return v


class SteppedVelocity:
    """Hamilton's velocity v (M v = w = p - G_p q - pi_0) from the step, without a solve,
    where the scheme relates the velocities of a step's ends to its mean velocity,
    v_n+1 = 2 (q_n+1 - q_n) / dt - v_n: exactly so for TSTHETA with theta = 1/2 (Crank-
    Nicolson, implicit midpoint) when M, G_p and pi_0 do not change in time (the record's
    version and pi_0 the same at both ends). A matrix product checks the relation
    (|w - M v| <= RTOL |w| + 100 eps |p|: w is a small difference of large momenta, p ~ pi_0,
    and a solve could not do better) every CHECK_EVERY steps where it holds by construction
    (round-off accumulates in the recurrence), at every step elsewhere; the mass matrix is
    solved with (``mass_solve``, factorized once) where the check fails (other schemes,
    changing frames, a restart). The initial state's velocity is v0 (:meth:`first`).

    Args:
        ts: the run's TS (its type and theta, read at every state).
        mass_solve: ``mass_solve(M, b, x)``, x = M^-1 b.
    """

    RTOL = 1e-12
    CHECK_EVERY = 10

    def __init__(self, ts: PETSc.TS,
                 mass_solve: Callable[[PETSc.Mat, PETSc.Vec, PETSc.Vec], object]) -> None:
        self.ts, self.mass_solve = ts, mass_solve
        self.last: tuple | None = None  # (t, q, v, version, pi0) of the last state
        self.initial: tuple | None = None  # (t0, v0)
        self.unchecked = 0

    def first(self, t0: float, v0: PETSc.Vec) -> None:
        """The initial state's velocity v0, taken for the first state if it is at t0.

        Args:
            t0: the initial time (s).
            v0: the initial velocity.
        """
        self.initial = (t0, v0)

    def velocity(self, t: float, s: Any, q: PETSc.Vec, w: PETSc.Vec, p_norm: float,
                 out: PETSc.Vec, work: PETSc.Vec) -> PETSc.Vec:
        """The velocity at (t, q), into ``out``.

        Args:
            t: the time (s).
            s: the record at t.
            q: the state.
            w: p - G_p q - pi_0.
            p_norm: |p|.
            out: the vector to fill.
            work: a vector like q.

        Returns:
            ``out``.
        """
        last, initial = self.last, self.initial
        self.initial = None
        if last is not None and t > last[0]:
            q0, v0, version0, pi0 = last[1:]
            out.waxpy(-1.0, q0, q)  # 2 (q - q0) / dt - v0
            out.scale(2.0 / (t - last[0]))
            out.axpy(-1.0, v0)
            exact = self._exact_relation(s, version0, pi0)
            if exact and self.unchecked + 1 < self.CHECK_EVERY:
                self.unchecked += 1
                ok = True
            else:
                self.unchecked = 0
                s.M.mult(out, work)
                work.aypx(-1.0, w)  # w - M v
                ok = work.norm() <= self.RTOL * w.norm() + 100.0 * EPS * p_norm
        else:
            q0, v0, pi0 = (last[1], last[2], last[4]) if last is not None else \
                (q.duplicate(), q.duplicate(), s.pi0.duplicate())
            ok = initial is not None and initial[0] == t
            if ok:
                assert initial is not None
                initial[1].copy(out)
        if not ok:
            self.unchecked = 0
            self.mass_solve(s.M, w, out)
        q.copy(q0)
        out.copy(v0)
        s.pi0.copy(pi0)
        self.last = (t, q0, v0, s.version, pi0)
        return out

    def _exact_relation(self, s: Any, version0: Hashable, pi0: PETSc.Vec) -> bool:
        ts = self.ts
        return bool(ts.getType() == PETSc.TS.Type.THETA and ts.getTheta() == 0.5 and
                    version0 == s.version and s.pi0.equal(pi0))


def second_order_residual(s: Any, U: PETSc.Vec, V: PETSc.Vec, A: PETSc.Vec, F: PETSc.Vec,
                          work: PETSc.Vec) -> None:
    """The residual F = M A + C V + K U - f of the second-order operators ``s``.

    With the record's node-block form (``s.blocks``) by two matrix products,
    M (A + W_C V + W_K U) + K_s (U + b V), instead of three.

    Args:
        s: the record (:class:`dolfinx_mbs.systems.SecondOrder`, or a stepper's own with its
            load vectors).
        U: the displacement.
        V: the velocity.
        A: the acceleration.
        F: the residual to fill.
        work: a vector like U.
    """
    kr = s.blocks
    if kr is None:
        s.M.mult(A, F)
        s.C.multAdd(V, F, F)
        s.K.multAdd(U, F, F)
        F.axpy(-1.0, s.f)
        return
    ua, va, aa = (x.getArray(readonly=True) for x in (U, V, A))
    w = work.getArray()
    w[:] = aa
    for (lo, hi), g, WC, WK, _ in kr.blocks:
        w[lo:hi] += (va[lo:hi].reshape(-1, g) @ WC.T + ua[lo:hi].reshape(-1, g) @ WK.T).ravel()
    s.M.mult(work, F)
    if any(b for *_, b in kr.blocks):
        w[:] = ua
        for (lo, hi), _, _, _, b in kr.blocks:
            w[lo:hi] += b * va[lo:hi]
        kr.Ks.multAdd(work, F, F)
    else:
        kr.Ks.multAdd(U, F, F)
    F.axpy(-1.0, s.f)
