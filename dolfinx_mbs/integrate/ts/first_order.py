"""The first-order forms on 2n unknowns, as PETSc TS callbacks on a typed system.

* :class:`FirstOrderProblem`: y = (q, v): q' - v = 0, M v' + C v + K q = f;
* :class:`HamiltonProblem`: y = (q, p): M q' + G_p q + pi_0 - p = 0,
  p' + G_q q' + K_h q + h - f_a = 0;
* :class:`VelocityRowsProblem`: y = (q, w): q' - A_n w - a_n = 0, M_w w' + C_w w + K_w q = f_w.

All three step with TSTHETA (implicit midpoint) and solve the step through the exact Schur
complement on n unknowns (the eliminated block is a I): PCFIELDSPLIT with S factorized, or
with ``-mbs_pc_type gamg`` S alone by Krylov + GAMG (:mod:`dolfinx_mbs.integrate.ts.schur_shell`).
Their
common part (TS set-up, residual and Jacobian plumbing, read-back) is
:class:`dolfinx_mbs.integrate.ts.second_order.TSProblem`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Tuple, cast

from petsc4py import PETSc

from dolfinx_mbs.integrate.state_products import SteppedVelocity, apply_blocks
from dolfinx_mbs.integrate.step_solvers import option, schur_multigrid
from dolfinx_mbs.integrate.ts import schur_shell
from dolfinx_mbs.integrate.ts.second_order import TSProblem
from dolfinx_mbs.petsc_options import SAME, SUBSET, factorize

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.petsc_options import SolverOptions
    from dolfinx_mbs.systems.velocity import VelocitySystem

__all__ = ["FirstOrderProblem", "HamiltonProblem", "VelocityRowsProblem"]


def _pc_asked(opts: SolverOptions) -> bool:
    """True when the run's options or the database choose another preconditioner of the step
    than the Schur split (-mbs_pc_type gamg asks for GAMG on the Schur split: step_solvers)."""
    return option(opts, "pc_type") not in (None, PETSc.PC.Type.FIELDSPLIT)


class _TwoBlockProblem(TSProblem):
    """y = (a, b) on 2n (or n + n_w) unknowns, TSTHETA, the step solved through the exact
    Schur complement (the eliminated block is a I)."""

    endpoint = True
    #: which block is the a I one: "a" (first-order, velocity) or "b" (Hamilton)
    diagonal = "a"
    #: S is formed from the operators (not a product: PETSc's "selfp" forms that one)
    formed_schur = True
    _inner_ready = False

    def __init__(self, system: RunSystem, ts: PETSc.TS, opts: SolverOptions,
                 t0: float) -> None:
        super().__init__(system, ts, opts, t0)
        comm = self.comm
        self.nb_local = self._second_local(system.at(t0))
        ts.setType(PETSc.TS.Type.THETA)
        ts.setTheta(0.5)
        ts.setThetaEndpoint(self.endpoint)
        r0 = comm.exscan(self.n_local + self.nb_local) or 0
        self.is_a = PETSc.IS().createStride(self.n_local, r0, 1, comm=comm)
        self.is_b = PETSc.IS().createStride(self.nb_local, r0 + self.n_local, 1, comm=comm)
        self.F = PETSc.Vec().createMPI((self.n_local + self.nb_local, PETSc.DECIDE),
                                       comm=comm)
        ts.setIFunction(self._function, self.F)
        self._shift: float | None = None
        # multigrid: S alone (schur_shell); velocity rows: PCFIELDSPLIT, GAMG on "selfp"
        self.shell = self.formed_schur and schur_multigrid(opts)
        if self.shell:
            opts.values["pc_type"] = PETSc.PC.Type.PYTHON
            self.set_up_snes()
            self.J, self.S, self._st, self._inner = schur_shell.make(
                self, ts, system.at(t0).M, self.F)
            ts.setIJacobian(self._jacobian, self.J, self.J)
            return
        self.I = self._identity()
        self.blocks = self._make_blocks(system.at(t0))
        # the step matrix as a MATNEST of the four blocks, filled in place (PCFIELDSPLIT takes
        # its blocks as they are, no conversion or extraction per step); one AIJ matrix only
        # when the options ask for another preconditioner (e.g. -mbs_pc_type lu)
        self.nest = self._nest()
        self.nested = not _pc_asked(opts)
        self.J = self.nest if self.nested else self.nest.convert("aij")
        ts.setIJacobian(self._jacobian, self.J, self.J)
        self.set_up_snes()
        # the 2n system through its Schur complement on n unknowns, so each step factorizes
        # an n x n matrix as the second-order form does; -mbs_pc_type lu factorizes all of it
        ksp = ts.getSNES().getKSP()
        ksp.setType(PETSc.KSP.Type.PREONLY)
        pc = ksp.getPC()
        pc.setType(PETSc.PC.Type.FIELDSPLIT)
        diag, rest = (self.is_a, self.is_b) if self.diagonal == "a" else (self.is_b, self.is_a)
        pc.setFieldSplitIS(("d", diag), ("s", rest))
        pc.setFieldSplitType(PETSc.PC.CompositeType.SCHUR)
        pc.setFieldSplitSchurFactType(PETSc.PC.SchurFactType.FULL)
        # the Schur complement S = A_ss - A_sd (a I)^-1 A_ds, formed here on the operators'
        # one pattern (numeric refactorization only); PETSc's "selfp" product where not
        self.S = self._schur_matrix(system.at(t0))
        if self.S is not None:
            pc.setFieldSplitSchurPreType(PETSc.PC.SchurPreType.USER, self.S)
        else:
            pc.setFieldSplitSchurPreType(PETSc.PC.SchurPreType.SELFP)

    def _schur_matrix(self, s: Any) -> PETSc.Mat | None:
        return s.M.duplicate()

    def _residual(self, t: float, s: Any, xa: PETSc.Vec, xb: PETSc.Vec, da: PETSc.Vec,
                  db: PETSc.Vec, fa: PETSc.Vec, fb: PETSc.Vec
                  ) -> None:  # pragma: no cover - the form's
        raise NotImplementedError

    def _fill(self, s: Any, a: float, KN: PETSc.Mat | None, b: List[PETSc.Mat],
              new_a: bool) -> None:  # pragma: no cover - the form's
        raise NotImplementedError

    def destroy(self) -> None:
        if self.shell:
            self.ts.getSNES().getKSP().getPC().setPythonContext(None)
            self._inner.destroy()
        self._stepped = None  # Hamilton's: holds this form's mass solve (a reference cycle)
        super().destroy()

    def _second_local(self, s: Any) -> int:
        return cast(int, self.n_local)

    def _make_blocks(self, s: Any) -> List[PETSc.Mat]:
        eye = [0, 1] if self.diagonal == "a" else [1, 3]
        return [self.I.duplicate() if i in eye else s.M.duplicate() for i in range(4)]

    def _identity(self) -> PETSc.Mat:
        I_ = PETSc.Mat().createAIJ(((self.n_local, self.n), (self.n_local, self.n)), nnz=1,
                                   comm=self.comm)
        r0, r1 = I_.getOwnershipRange()
        for i in range(r0, r1):
            I_.setValue(i, i, 1.0)
        I_.assemble()
        return I_

    def _nest(self) -> PETSc.Mat:
        b = self.blocks
        return PETSc.Mat().createNest([[b[0], b[1]], [b[2], b[3]]], comm=self.comm)

    def _function(self, ts: PETSc.TS, t: float, X: PETSc.Vec, Xdot: PETSc.Vec,
                  F: PETSc.Vec) -> None:
        if self.skip_residual:
            return
        s = self.system.at(t)
        get = [(V, is_, V.getSubVector(is_)) for V in (X, Xdot, F)
               for is_ in (self.is_a, self.is_b)]
        (_, _, xa), (_, _, xb), (_, _, da), (_, _, db), (_, _, fa), (_, _, fb) = get
        self._residual(t, s, xa, xb, da, db, fa, fb)
        for V, is_, sub in get:
            V.restoreSubVector(is_, sub)

    def _jacobian(self, ts: PETSc.TS, t: float, X: PETSc.Vec, Xdot: PETSc.Vec, a: float,
                  J: PETSc.Mat, P: PETSc.Mat) -> None:
        s = self.system.at(t)
        if self._unchanged(s, a):
            return
        KN = None
        if self.nonlinear:
            xa = X.getSubVector(self.is_a)
            KN = self._nonlinear(t, xa, False)
            X.restoreSubVector(self.is_a, xa)
        if self.shell:  # S alone; the other blocks are the system's matrices (schur_shell)
            self._st.s, self._st.a, self._st.KN = s, a, KN
            schur_shell.fill_schur(s, self.name, a, KN, self.S)
            self._set_up_solver(J, P)
            if self._inner_ready:
                factorize(self._inner, options=self.opts)
            else:
                self.opts.set_from_options(self._inner)
                self.opts.set_up(self._inner)
                self._inner_ready = True
            return
        new_a = a != self._shift  # the blocks a I and -I: filled only when a changes
        self._shift = a
        self._fill(s, a, KN, self.blocks, new_a)
        if self.S is not None:  # S = A_ss + A_ds / a (A_sd = -I, A_dd = a I)
            self.blocks[0 if self.diagonal == "b" else 3].copy(self.S, structure=SAME)
            self.S.axpy(1.0 / a, self.blocks[2], structure=SAME)
        if self.nested:
            J.assemble()  # the blocks changed: a new state of the nest
        else:
            self._nest().convert("aij", out=J)  # (a new nest: converting one again fails)
        self._set_up_solver(J, P)

    def _scaled_identity(self, out: PETSc.Mat, a: float) -> None:
        self.I.copy(out, structure=SAME)
        out.scale(a)

    def initial_state(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                      p0: PETSc.Vec | None = None) -> PETSc.Vec:
        """The TS's solution y = (a, b) at ``t0``.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum (replaces v0 there), or None.

        Returns:
            The solution vector set on the TS.
        """
        X = self.F.duplicate()
        xa, xb = X.getSubVector(self.is_a), X.getSubVector(self.is_b)
        q0.copy(xa)
        self._second_initial(t0, q0, v0, p0, xb)
        X.restoreSubVector(self.is_a, xa)
        X.restoreSubVector(self.is_b, xb)
        self.ts.setSolution(X)
        return X

    def _second_initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                        p0: PETSc.Vec | None, xb: PETSc.Vec) -> None:
        v0.copy(xb)

    def state(self, t: float, need_v: bool = True) -> Tuple[PETSc.Vec, PETSc.Vec]:
        """Reduced displacement and velocity at the TS's current solution (reused vectors).

        Args:
            t: the time just reached (s).
            need_v: whether v is read.

        Returns:
            (q, v).
        """
        X = self.ts.getSolution()
        xa, xb = X.getSubVector(self.is_a), X.getSubVector(self.is_b)
        xa.copy(self.q)
        self._second_state(xb)
        X.restoreSubVector(self.is_a, xa)
        X.restoreSubVector(self.is_b, xb)
        return self.q, self._velocity(t, need_v)

    def _second_state(self, xb: PETSc.Vec) -> None:
        xb.copy(self.v)

    def _velocity(self, t: float, need_v: bool) -> PETSc.Vec:
        return self.v


class FirstOrderProblem(_TwoBlockProblem):
    """y = (q, v): q' - v = 0, M v' + C v + K q (+ n(q)) = f; Crank-Nicolson by default."""

    name = "first-order"

    def _residual(self, t: float, s: Any, xa: PETSc.Vec, xb: PETSc.Vec, da: PETSc.Vec,
                  db: PETSc.Vec, fa: PETSc.Vec, fb: PETSc.Vec) -> None:
        da.copy(fa)
        fa.axpy(-1.0, xb)
        s.M.mult(db, fb)
        s.C.multAdd(xb, fb, fb)
        s.K.multAdd(xa, fb, fb)
        fb.axpy(-1.0, s.f)
        if self.nonlinear:
            fb.axpy(1.0, self._nonlinear(t, xa, True))

    def _fill(self, s: Any, a: float, KN: PETSc.Mat | None, b: List[PETSc.Mat],
              new_a: bool) -> None:
        # [[a I, -I], [K, a M + C]]
        if new_a:
            self._scaled_identity(b[0], a)
            self._scaled_identity(b[1], -1.0)
        s.K.copy(b[2], structure=SAME)
        if KN is not None:
            b[2].axpy(1.0, KN, structure=SUBSET)
        s.C.copy(b[3], structure=SAME)
        b[3].axpy(a, s.M, structure=SAME)


class HamiltonProblem(_TwoBlockProblem):
    """y = (q, p): the block "mass" [[M, 0], [G_p, I]], no inverse of M formed; implicit
    midpoint by default (conserves the Jacobi integral of a steady spin)."""

    name = "hamiltonian"
    endpoint = False
    diagonal = "b"
    _v0 = None  # (t0, v0, p0) of the initial state
    _stepped: SteppedVelocity | None = None  # the velocity from the step

    def _residual(self, t: float, s: Any, xa: PETSc.Vec, xb: PETSc.Vec, da: PETSc.Vec,
                  db: PETSc.Vec, fa: PETSc.Vec, fb: PETSc.Vec) -> None:
        if s.blocks is not None:
            self._block_residual(s, xa, xb, da, db, fa, fb)
            if self.nonlinear:
                fb.axpy(1.0, self._nonlinear(t, xa, True))
            return
        s.M.mult(da, fa)
        s.Gp.multAdd(xa, fa, fa)
        fa.axpy(1.0, s.pi0)
        fa.axpy(-1.0, xb)
        db.copy(fb)
        if s.Gq is not None:  # moving constraints: G_q = A^T(G_p + D)A - A'^T M A
            s.Gq.multAdd(da, fb, fb)
        else:
            s.Gp.multAdd(da, fb, fb)
            if s.D is not None:
                s.D.multAdd(da, fb, fb)
        s.Kh.multAdd(xa, fb, fb)
        fb.axpy(1.0, s.h)
        fb.axpy(-1.0, s.fa)
        if self.nonlinear:
            fb.axpy(1.0, self._nonlinear(t, xa, True))

    def _block_residual(self, s: Any, xa: PETSc.Vec, xb: PETSc.Vec, da: PETSc.Vec,
                        db: PETSc.Vec, fa: PETSc.Vec, fb: PETSc.Vec) -> None:
        """The residual in node-block form (:class:`dolfinx_mbs.systems.InertiaBlocks`): three
        matrix products where the matrices need four or five."""
        kr = s.blocks
        P = self.products
        if da.norm(PETSc.NormType.NORM_INFINITY) == 0.0 and \
                db.norm(PETSc.NormType.NORM_INFINITY) == 0.0 and P.holds(s, xa):
            # at the last observed state with zero rates (PETSc's first guess): no product
            apply_blocks(kr.momentum, P.Mq, fa, 2)  # M W_p q = W_p M q
            fa.axpy(1.0, s.pi0)
            fa.axpy(-1.0, xb)
            apply_blocks(kr.momentum, P.Mq, fb, 4)  # W_w M q
            fb.axpy(1.0, P.Ksq)
            fb.axpy(1.0, s.h)
            fb.axpy(-1.0, s.fa)
            return
        ua, va = xa.getArray(readonly=True), da.getArray(readonly=True)
        w = self.work.getArray()
        w[:] = va  # q' + W_p q
        for (lo, hi), g, Wp, _, _, _ in kr.momentum:
            w[lo:hi] += (ua[lo:hi].reshape(-1, g) @ Wp.T).ravel()
        s.M.mult(self.work, fa)
        fa.axpy(1.0, s.pi0)
        fa.axpy(-1.0, xb)
        w[:] = 0.0  # (W_p + a_R I) q' + W_w q
        for (lo, hi), g, _, WpD, Ww, _ in kr.momentum:
            w[lo:hi] = (va[lo:hi].reshape(-1, g) @ WpD.T
                        + ua[lo:hi].reshape(-1, g) @ Ww.T).ravel()
        s.M.mult(self.work, fb)
        fb.axpy(1.0, db)
        if any(b for *_, b in kr.momentum):
            w[:] = ua
            for (lo, hi), _, _, _, _, b in kr.momentum:
                w[lo:hi] += b * va[lo:hi]
            kr.Ks.multAdd(self.work, fb, fb)
        else:
            kr.Ks.multAdd(xa, fb, fb)
        fb.axpy(1.0, s.h)
        fb.axpy(-1.0, s.fa)

    def _fill(self, s: Any, a: float, KN: PETSc.Mat | None, b: List[PETSc.Mat],
              new_a: bool) -> None:
        # [[a M + G_p, -I], [K_h + a (G_p + D), a I]]
        s.Gp.copy(b[0], structure=SAME)
        b[0].axpy(a, s.M, structure=SAME)
        if new_a:
            self._scaled_identity(b[1], -1.0)
            self._scaled_identity(b[3], a)
        s.Kh.copy(b[2], structure=SAME)
        if KN is not None:
            b[2].axpy(1.0, KN, structure=SUBSET)
        if s.Gq is not None:
            b[2].axpy(a, s.Gq, structure=SAME)
        else:
            b[2].axpy(a, s.Gp, structure=SAME)
            if s.D is not None:
                b[2].axpy(a, s.D, structure=SAME)

    def _second_initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                        p0: PETSc.Vec | None, xb: PETSc.Vec) -> None:
        if p0 is not None:
            p0.copy(xb)
            return
        s = self.system.at(t0)  # p0 = M v0 + G_p q0 + pi_0
        s.M.mult(v0, xb)
        s.Gp.multAdd(q0, xb, xb)
        xb.axpy(1.0, s.pi0)
        self._v0 = (t0, v0.copy(), xb.copy())  # the first state's velocity: no mass solve

    def _velocity(self, t: float, need_v: bool) -> PETSc.Vec:
        """Solve for v: M v = w = p - G_p q - pi_0 (self.v holds p; G_p q = W_p M q in node-block
        form, M q kept for the energies and the next residual), by the step relation where
        it holds (:class:`~dolfinx_mbs.integrate.state_products.SteppedVelocity`)."""
        if not need_v:
            return self.v
        s = self.system.at(t)
        p_norm = self.v.norm()
        if self._stepped is None:
            self._stepped = SteppedVelocity(self.ts, self.mass_solve)
        if self._v0 is not None:  # the initial state (not a restart's): v0
            t0, v0, p0 = self._v0
            self._v0 = None
            if t0 == t and p0.equal(self.v):
                self._stepped.first(t0, v0)
        if s.blocks is not None:
            apply_blocks(s.blocks.momentum, self.products.form(s, self.q).Mq, self.work, 2)
        else:
            s.Gp.mult(self.q, self.work)
        self.v.axpy(-1.0, self.work)
        self.v.axpy(-1.0, s.pi0)  # w
        if self.mass_velocity is None:
            self.mass_velocity = self.v.duplicate()
        self.v.copy(self.mass_velocity)  # M v = w, for the energies
        self._stepped.velocity(t, s, self.q, self.mass_velocity, p_norm, self.v, self.work)
        return self.v


class VelocityRowsProblem(_TwoBlockProblem):
    """y = (q, w), w the independent velocities of the velocity constraints
    (:mod:`dolfinx_mbs.systems.velocity`).

    Args:
        system: the run's :class:`~dolfinx_mbs.systems.velocity.VelocitySystem`.
        ts: the run's TS.
        opts: the run's solver options.
        t0: the initial time (s).
    """

    name = "first-order"
    system: VelocitySystem

    def __init__(self, system: VelocitySystem, ts: PETSc.TS, opts: SolverOptions,
                 t0: float) -> None:
        super().__init__(system, ts, opts, t0)
        self.w = self.blocks[3].createVecRight()
        self._wd = self._wtmp = self._wacc = None

    def _second_local(self, s: Any) -> int:
        return cast(int, s.Mw.getLocalSize()[0])

    formed_schur = False

    def _schur_matrix(self, s: Any) -> PETSc.Mat | None:
        return None  # K_w A_n is a product: PETSc's "selfp" forms it

    def _make_blocks(self, s: Any) -> List[PETSc.Mat]:
        # [[a I, -A_n], [K_w, a M_w + C_w]]: rectangular blocks
        return [self.I.duplicate(), s.An.duplicate(), s.Kw.duplicate(), s.Mw.duplicate()]

    def _residual(self, t: float, s: Any, xa: PETSc.Vec, xb: PETSc.Vec, da: PETSc.Vec,
                  db: PETSc.Vec, fa: PETSc.Vec, fb: PETSc.Vec) -> None:
        da.copy(fa)
        s.An.multAdd(xb, s.an, self.work)
        fa.axpy(-1.0, self.work)
        s.Mw.mult(db, fb)
        s.Cw.multAdd(xb, fb, fb)
        s.Kw.multAdd(xa, fb, fb)
        fb.axpy(-1.0, s.fw)

    def _fill(self, s: Any, a: float, KN: PETSc.Mat | None, b: List[PETSc.Mat],
              new_a: bool) -> None:
        self._scaled_identity(b[0], a)
        s.An.copy(b[1], structure=SAME)
        b[1].scale(-1.0)
        s.Kw.copy(b[2], structure=SAME)
        s.Cw.copy(b[3], structure=SAME)
        b[3].axpy(a, s.Mw, structure=SAME)

    def _second_initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                        p0: PETSc.Vec | None, xb: PETSc.Vec) -> None:
        self.system.basis.restrict(v0, xb)  # w0: the independent entries of v0

    def _second_state(self, xb: PETSc.Vec) -> None:
        xb.copy(self.w)

    def _velocity(self, t: float, need_v: bool) -> PETSc.Vec:
        return self.system.velocity(t, self.w, self.v)  # v = A_n w + a_n

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Q'' = A_n w' + A_n' w + a_n', M_w w' = f_w - C_w w - K_w q.

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity (w, the state's, is read).
            out: the vector to fill.

        Returns:
            ``out``.
        """
        s = self.system.at(t)
        if self._wd is None:
            self._wd, self._wtmp, self._wacc = (s.fw.duplicate() for _ in range(3))
        wd = s.fw.copy(self._wd)
        s.Cw.mult(self.w, self._wtmp)
        wd.axpy(-1.0, self._wtmp)
        s.Kw.mult(q, self._wtmp)
        wd.axpy(-1.0, self._wtmp)
        self.mass_solve(s.Mw, wd, self._wacc)
        return self.system.acceleration(t, self.w, self._wacc, out)
