"""Time integration of the Maggi-reduced equations of motion with PETSc TS.

Three formulations (``theory.md`` sections 2 and 4), each on the reduced operators of
:meth:`dolfinx_mbs.Model.reduced_system` (q the independent coordinates):

* ``"second-order"``: M q'' + C q' + K q = f, as an I2 function; TSALPHA2 (generalized-alpha)
  by default, spectral radius settable.
* ``"first-order"``: y = (q, v): q' - v = 0, M v' + C v + K q = f, for any implicit TS
  (default TSTHETA, theta = 1/2 with endpoint: Crank-Nicolson). With velocity constraints
  (:meth:`dolfinx_mbs.Model.constrain_velocity`) y = (q, w), w the independent velocities:
  q' - A_n w - a_n = 0, M_w w' + C_w w + K_w q = f_w (:mod:`dolfinx_mbs.nonholonomic`); the
  only formulation that takes them.
* ``"hamiltonian"``: y = (q, p) with p the generalized momentum: M q' + G_p q + pi_0 - p = 0,
  p' + (G_p + D) q' + (K + K_omega) q + h - f_a = 0; the block "mass" [[M, 0], [G_p, I]], no
  inverse of M is formed. Default: implicit midpoint (TSTHETA, theta = 1/2, no endpoint), which
  conserves the Jacobi integral of a steadily spinning body.

Every step is one linear solve: the equations are linear in the unknowns, so the TS's
nonlinear solver is a single Newton step with one residual evaluation (``-mbs_snes_type
newtonls`` restores PETSc's Newton, e.g. to watch its residuals). Bodies with
``stiffening="nonlinear"`` (St Venant-Kirchhoff) add A^T n(Delta) to the residual and
A^T K_n(Delta) A to the Jacobian; such models step with PETSc's Newton (``newtonls``), the
tangent formed at every iteration. The TS reads the PETSc options
database with the prefix ``mbs_`` (``-mbs_ts_type bdf``,
``-mbs_ts_adapt_type basic``, ``-mbs_ts_alpha_radius 0.8``, ``-mbs_ksp_type``...). Linear
solves default to a direct LU factorization (MUMPS); the first-order and Hamilton step systems
go through their exact Schur complement on n unknowns (PCFIELDSPLIT with the "selfp" rule, the
eliminated block being a I). With ``-mbs_pc_type gamg`` the second-order Jacobian carries the
bodies' rigid-body modes as near null space. For constraints that fix whole nodes the
second-order residual uses the node-block form of the inertia terms
(:func:`second_order_residual`): two matrix products instead of three.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Dict, Optional, Sequence

import numpy as np
from petsc4py import PETSc

from . import checks, compat
from .io import MotionWriter, Probes, TimeSeriesWriter, probe_columns
from .petsc_options import SolverOptions, direct_lu, reason_name, solver_reasons

__all__ = ["integrate", "Result", "FORMULATIONS"]

log = logging.getLogger(__name__)

FORMULATIONS = ("second-order", "first-order", "hamiltonian")
# fixed steps unless asked otherwise; full Newton steps (the equations are linear). Options
# rather than object calls: petsc4py has no handle on TSAdapt, nor (3.18) on the line search
_DEFAULT_OPTIONS = {"ts_adapt_type": "none", "snes_linesearch_type": "basic"}
# first-order and Hamilton: the eliminated block a I by Jacobi (exact), the Schur complement
# a M + C + K / a (first-order) or a M + 2 G_p + D + K_h / a (Hamilton), formed by PETSc's
# "selfp" rule (exact for a diagonal block), by LU
_SCHUR_OPTIONS = {"fieldsplit_d_ksp_type": "preonly", "fieldsplit_d_pc_type": "jacobi",
                  "fieldsplit_s_ksp_type": "preonly", "fieldsplit_s_pc_type": "lu",
                  "fieldsplit_s_pc_factor_mat_solver_type": "mumps"}
SAME = PETSc.Mat.Structure.SAME_NONZERO_PATTERN
SUBSET = PETSc.Mat.Structure.SUBSET_NONZERO_PATTERN


@dataclasses.dataclass
class Result:
    """What :func:`integrate` returns (identical on every rank).

    Attributes:
        times: (n_steps + 1,) output times (s).
        probes: (n_steps + 1, n_probes, dim) displacement at the probe points (m).
        energy: ``kinetic`` (1/2 q'.M q', relative motion), ``elastic`` (1/2 q.K q),
            ``potential`` (1/2 q.(K + K_omega + K_alpha) q), ``jacobi`` (kinetic + potential - f.q:
            conserved for steady frames and loads), ``work`` (integral of f.q' dt, f all loads
            of the second-order form, trapezoidal): for a steady frame without damping,
            kinetic + potential - work is constant (Coriolis forces do no work).
        formulation: the formulation used.
        ts_type: the PETSc TS type used.
        steps: number of time steps taken.
        reactions: {constraint name: (n_steps + 1, gdim)} resultant constraint force on its
            body, global components (N), when asked for.
    """

    times: np.ndarray
    probes: np.ndarray
    energy: Dict[str, np.ndarray]
    formulation: str
    ts_type: str
    steps: int
    reactions: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


def second_order_residual(s, U, V, A, F, work) -> None:
    """F = M A + C V + K U - f of the reduced system ``s`` (``Model.reduced_system``); with its
    node-block form (``s["kron"]``, see ``Model._inertia_blocks``) by two matrix products,
    M (A + W_C V + W_K U) + K_s (U + b V), instead of three. ``work``: a vector like U."""
    kr = s.get("kron")
    if kr is None:
        s["M"].mult(A, F)
        s["C"].multAdd(V, F, F)
        s["K"].multAdd(U, F, F)
        F.axpy(-1.0, s["f"])
        return
    ua, va, aa = (x.getArray(readonly=True) for x in (U, V, A))
    w = work.getArray()
    w[:] = aa
    for (lo, hi), g, WC, WK, _ in kr["blocks"]:
        w[lo:hi] += (va[lo:hi].reshape(-1, g) @ WC.T + ua[lo:hi].reshape(-1, g) @ WK.T).ravel()
    s["M"].mult(work, F)
    if any(b for *_, b in kr["blocks"]):
        w[:] = ua
        for (lo, hi), _, _, _, b in kr["blocks"]:
            w[lo:hi] += b * va[lo:hi]
        kr["Ks"].multAdd(work, F, F)
    else:
        kr["Ks"].multAdd(U, F, F)
    F.axpy(-1.0, s["f"])


class _LinearStep:
    """A SNES for equations linear in the unknown: x <- x - J^-1 F(x), once. Exact for the
    linear equations of motion, with one residual evaluation per step where Newton needs two
    (the second only to see that the first step converged).

    The TS still sees a function call at the solution: its SNES callback updates the method's
    own state there (TSALPHA2 forms V and A of the step from it); the integrator's residual is
    skipped in that call, as no one reads it."""

    def __init__(self, integrator):
        self.it = integrator
        self.f = None

    def setUp(self, snes):
        pass

    def solve(self, snes, b, x):
        if self.f is None:
            self.f = x.duplicate()
            self.dx = x.duplicate()
        f, dx = self.f, self.dx
        snes.computeFunction(x, f)  # F(x) - b (SNESComputeFunction subtracts the rhs b)
        J, P, _ = snes.getJacobian()
        snes.computeJacobian(x, J, P)
        ksp = snes.getKSP()
        ksp.setOperators(J, P)
        ksp.solve(f, dx)
        if ksp.getConvergedReason() < 0 or not math.isfinite(dx.norm()):
            snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_LINEAR_SOLVE)
            return
        x.axpy(-1.0, dx)
        self.it.skip_residual = True
        try:
            snes.computeFunction(x, f)
        finally:
            self.it.skip_residual = False
        snes.setIterationNumber(1)
        snes.setConvergedReason(PETSc.SNES.ConvergedReason.CONVERGED_ITS)


class _Integrator:
    def __init__(self, model, formulation, t0, dt, u0, v0, opts, p0=None,
                 constraints="maggi"):
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
        if constraints not in ("maggi", "multipliers"):
            raise ValueError(f"constraints must be 'maggi' or 'multipliers', got "
                             f"{constraints!r}")
        if model.velocity_constraints and (formulation != "first-order"
                                           or constraints != "maggi"):
            raise ValueError("velocity constraints (Model.constrain_velocity) need "
                             "formulation='first-order' with constraints='maggi', got "
                             f"formulation={formulation!r}, constraints={constraints!r}")
        if constraints == "multipliers" and formulation != "second-order":
            raise ValueError("constraints='multipliers' works with the second-order "
                             "formulation only")
        if constraints == "multipliers" and model.nonlinear:
            raise ValueError("constraints='multipliers' works with linear strain only (a body "
                             "has stiffening='nonlinear'): use constraints='maggi'")
        #: St Venant-Kirchhoff bodies: Newton's method at every step
        self.nonlinear = model.nonlinear
        self.model = model
        self.form = formulation
        self.skip_residual = False
        self.ham = formulation == "hamiltonian"
        self.multipliers = constraints == "multipliers"
        self.vel = model.velocity_system  # None without velocity constraints
        if self.vel is not None and self.nonlinear:
            raise ValueError("velocity constraints (constrain_velocity) work with linear strain "
                             "only: a body has stiffening='nonlinear'")
        if self.multipliers:
            self.red = model.saddle_point
            self.sys = self.red.system
        elif self.vel is not None:
            self.red = model.reducer
            self.sys = self.vel
        else:
            self.red = model.reducer
            self.sys = lambda t: model.reduced_system(t, hamiltonian=self.ham)
        s = self.sys(t0)
        M = s["M"]
        self.n_local, self.n = M.getLocalSize()[0], M.getSize()[0]
        # the second half of the first-order state: v (or p), or w with velocity constraints
        self.nb_local = self.n_local if self.vel is None else s["Mw"].getLocalSize()[0]
        comm = model.comm
        self.comm = comm
        # initial state in reduced coordinates
        self.q0 = self._initial(u0, "u0")
        self.v0 = self._initial(v0, "v0")
        self.p0 = None if p0 is None else self._initial(p0, "p0")
        if self.vel is not None:  # w0: the independent entries of v0
            self.w0 = self.vel.basis.restrict(self.v0)
            self.w = self.w0.duplicate()
        self.work = M.createVecLeft()
        self.work2 = M.createVecLeft()
        self.q, self.v = M.createVecLeft(), M.createVecLeft()  # monitor state, reused
        self.full = model.space.create_vec()
        self.opts = opts
        ts = PETSc.TS().create(comm)
        ts.setOptionsPrefix(opts.prefix)
        # not ProblemType.LINEAR: PETSc then keeps the first Jacobian, but the shift changes
        # (generalized-alpha restarts with half a step) and so do frame-dependent operators
        ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
        self.ts = ts
        if formulation == "second-order":
            ts.setType("alpha2")
            self.J = M.duplicate()
            self.F = M.createVecLeft()
            ts.setI2Function(self._i2function, self.F)
            ts.setI2Jacobian(self._i2jacobian, self.J, self.J)
        else:
            ts.setType(PETSc.TS.Type.THETA)
            ts.setTheta(0.5)
            ts.setThetaEndpoint(formulation == "first-order")
            r0 = comm.exscan(self.n_local + self.nb_local) or 0
            self.is_a = PETSc.IS().createStride(self.n_local, r0, 1, comm=comm)
            self.is_b = PETSc.IS().createStride(self.nb_local, r0 + self.n_local, 1, comm=comm)
            self.I = self._identity(M)
            if self.vel is not None:  # [[a I, -A_n], [K_w, a M_w + C_w]]: rectangular blocks
                self.blocks = [self.I.duplicate(), s["An"].duplicate(), s["Kw"].duplicate(),
                               s["Mw"].duplicate()]
            else:
                eye = [0, 1] if formulation == "first-order" else [1, 3]
                self.blocks = [self.I.duplicate() if i in eye else M.duplicate()
                               for i in range(4)]
            self.J = self._nest().convert("aij")
            self.F = self.J.createVecLeft()
            ts.setIFunction(self._ifunction, self.F)
            ts.setIJacobian(self._ijacobian, self.J, self.J)
        ts.setTime(t0)
        ts.setTimeStep(dt)
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        # one linear solve per step (_LinearStep; PETSc's "ksponly" skips the function call at
        # the solution that TSALPHA2 needs). -mbs_snes_type newtonls checks it by Newton.
        snes = ts.getSNES()
        if self.nonlinear:  # Newton: the tangent at every iteration
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=25)
            snes.setType(PETSc.SNES.Type.NEWTONLS)
        else:
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=10)
            snes.setType(PETSc.SNES.Type.PYTHON)
            snes.setPythonContext(_LinearStep(self))
        direct_lu(snes.getKSP())
        if formulation != "second-order":
            # the 2n system through its Schur complement on n unknowns (exact: the eliminated
            # block is a I), so each step factorizes an n x n matrix as the second-order form
            # does; -mbs_pc_type lu factorizes the whole 2n system instead
            ksp = snes.getKSP()
            ksp.setType(PETSc.KSP.Type.PREONLY)
            pc = ksp.getPC()
            pc.setType(PETSc.PC.Type.FIELDSPLIT)
            diag, rest = (self.is_a, self.is_b) if formulation == "first-order" else \
                (self.is_b, self.is_a)
            pc.setFieldSplitIS(("d", diag), ("s", rest))
            pc.setFieldSplitType(PETSc.PC.CompositeType.SCHUR)
            pc.setFieldSplitSchurFactType(PETSc.PC.SchurFactType.FULL)
            pc.setFieldSplitSchurPreType(PETSc.PC.SchurPreType.SELFP)

    # -- set-up helpers ---------------------------------------------------------------------
    def _initial(self, x, name) -> PETSc.Vec:
        """A reduced vector from None (zero), a PETSc Vec in full or reduced layout, or per-body
        Functions."""
        q = self.red.create_reduced_vec()
        q.set(0.0)
        if x is None:
            return q
        if isinstance(x, PETSc.Vec):
            if x.getSize() == q.getSize():
                x.copy(q)
                return q
            self.red.restrict(x, q)
            return q
        funcs = x if isinstance(x, (list, tuple)) else [x]
        if len(funcs) != len(self.model.bodies):
            raise ValueError(f"{name}: give one Function per body ({len(self.model.bodies)})")
        full = self.model.space.gather([compat.petsc_vec(f) for f in funcs],
                                       self.model.space.create_vec())
        self.red.restrict(full, q)
        return q

    def _identity(self, like: PETSc.Mat) -> PETSc.Mat:
        n_local, n = self.n_local, self.n
        I_ = PETSc.Mat().createAIJ(((n_local, n), (n_local, n)), nnz=1, comm=self.comm)
        r0, r1 = I_.getOwnershipRange()
        for i in range(r0, r1):
            I_.setValue(i, i, 1.0)
        I_.assemble()
        return I_

    def _nest(self) -> PETSc.Mat:
        b = self.blocks
        return PETSc.Mat().createNest([[b[0], b[1]], [b[2], b[3]]], comm=self.comm)

    # -- second order -----------------------------------------------------------------------
    def _i2function(self, ts, t, U, V, A, F):
        if self.skip_residual:
            return
        s = self.sys(t)
        second_order_residual(s, U, V, A, F, self.work)
        if self.nonlinear:
            F.axpy(1.0, self.model.nonlinear_reduced(U, tangent=False)[0])

    def _unchanged(self, s, *shifts) -> bool:
        """True when the Jacobian already holds these operators and shifts (steady frames and
        a fixed step): it is then left untouched, and so is its factorization."""
        # shifts compared to 12 digits: the step that lands on t_end differs from dt by round-off
        key = (s["_version"],) + tuple(float(f"{x:.12e}") for x in shifts)
        # a nonlinear tangent changes with the state: never the same
        same = key == getattr(self, "_jkey", None) and not self.nonlinear
        self._jkey = key
        # PETSc would refactor on every Jacobian evaluation; keep the factorization instead
        self.ts.getSNES().getKSP().getPC().setReusePreconditioner(same)
        return same

    def _i2jacobian(self, ts, t, U, V, A, shift_v, shift_a, J, P):
        s = self.sys(t)
        if self._unchanged(s, shift_v, shift_a):
            return
        s["K"].copy(J, structure=SAME)
        J.axpy(shift_v, s["C"], structure=SAME)
        J.axpy(shift_a, s["M"], structure=SAME)
        if self.nonlinear:
            J.axpy(1.0, self.model.nonlinear_reduced(U, force=False)[1], structure=SUBSET)
        self._set_up_solver(J, P)

    # -- first order and Hamilton -----------------------------------------------------------
    def _ifunction(self, ts, t, X, Xdot, F):
        if self.skip_residual:
            return
        s = self.sys(t)
        xa, xb = X.getSubVector(self.is_a), X.getSubVector(self.is_b)
        da, db = Xdot.getSubVector(self.is_a), Xdot.getSubVector(self.is_b)
        fa, fb = F.getSubVector(self.is_a), F.getSubVector(self.is_b)
        if self.vel is not None:  # a = q, b = w
            da.copy(fa)
            s["An"].multAdd(xb, s["an"], self.work)
            fa.axpy(-1.0, self.work)
            s["Mw"].mult(db, fb)
            s["Cw"].multAdd(xb, fb, fb)
            s["Kw"].multAdd(xa, fb, fb)
            fb.axpy(-1.0, s["fw"])
        elif self.form == "first-order":  # a = q, b = v
            da.copy(fa)
            fa.axpy(-1.0, xb)
            s["M"].mult(db, fb)
            s["C"].multAdd(xb, fb, fb)
            s["K"].multAdd(xa, fb, fb)
            fb.axpy(-1.0, s["f"])
            if self.nonlinear:
                fb.axpy(1.0, self.model.nonlinear_reduced(xa, tangent=False)[0])
        else:  # a = q, b = p
            s["M"].mult(da, fa)
            s["Gp"].multAdd(xa, fa, fa)
            fa.axpy(1.0, s["pi0"])
            fa.axpy(-1.0, xb)
            db.copy(fb)
            if s.get("Gq") is not None:  # moving constraints: G_q = A^T(G_p + D)A - A'^T M A
                s["Gq"].multAdd(da, fb, fb)
            else:
                s["Gp"].multAdd(da, fb, fb)
                if s["D"] is not None:
                    s["D"].multAdd(da, fb, fb)
            s["Kh"].multAdd(xa, fb, fb)
            fb.axpy(1.0, s["h"])
            fb.axpy(-1.0, s["fa"])
            if self.nonlinear:
                fb.axpy(1.0, self.model.nonlinear_reduced(xa, tangent=False)[0])
        for v, is_ in ((xa, self.is_a), (xb, self.is_b)):
            X.restoreSubVector(is_, v)
        for v, is_ in ((da, self.is_a), (db, self.is_b)):
            Xdot.restoreSubVector(is_, v)
        for v, is_ in ((fa, self.is_a), (fb, self.is_b)):
            F.restoreSubVector(is_, v)

    def _ijacobian(self, ts, t, X, Xdot, a, J, P):
        s = self.sys(t)
        if self._unchanged(s, a):
            return
        b = self.blocks
        KN = None
        if self.nonlinear:
            xa = X.getSubVector(self.is_a)
            KN = self.model.nonlinear_reduced(xa, force=False)[1]
            X.restoreSubVector(self.is_a, xa)
        if self.vel is not None:
            # [[a I, -A_n], [K_w, a M_w + C_w]]
            self.I.copy(b[0], structure=SAME)
            b[0].scale(a)
            s["An"].copy(b[1], structure=SAME)
            b[1].scale(-1.0)
            s["Kw"].copy(b[2], structure=SAME)
            s["Cw"].copy(b[3], structure=SAME)
            b[3].axpy(a, s["Mw"], structure=SAME)
        elif self.form == "first-order":
            # [[a I, -I], [K, a M + C]]
            self.I.copy(b[0], structure=SAME)
            b[0].scale(a)
            self.I.copy(b[1], structure=SAME)
            b[1].scale(-1.0)
            s["K"].copy(b[2], structure=SAME)
            if KN is not None:
                b[2].axpy(1.0, KN, structure=SUBSET)
            s["C"].copy(b[3], structure=SAME)
            b[3].axpy(a, s["M"], structure=SAME)
        else:
            # [[a M + G_p, -I], [K_h + a (G_p + D), a I]]
            s["Gp"].copy(b[0], structure=SAME)
            b[0].axpy(a, s["M"], structure=SAME)
            self.I.copy(b[1], structure=SAME)
            b[1].scale(-1.0)
            s["Kh"].copy(b[2], structure=SAME)
            if KN is not None:
                b[2].axpy(1.0, KN, structure=SUBSET)
            if s.get("Gq") is not None:
                b[2].axpy(a, s["Gq"], structure=SAME)
            else:
                b[2].axpy(a, s["Gp"], structure=SAME)
                if s["D"] is not None:
                    b[2].axpy(a, s["D"], structure=SAME)
            self.I.copy(b[3], structure=SAME)
            b[3].scale(a)
        self._nest().convert("aij", out=J)
        self._set_up_solver(J, P)

    def _set_up_solver(self, J, P) -> None:
        """Set the step solver up (factorize) for the Jacobian just formed, with the run's
        options in the database: PETSc reads some only then (PCFIELDSPLIT's sub-solvers,
        MUMPS' controls). The step's solve, which follows, finds it ready."""
        ksp = self.ts.getSNES().getKSP()
        ksp.setOperators(J, P)
        self.opts.set_up(ksp)

    # -- state ------------------------------------------------------------------------------
    def initial_state(self):
        ts = self.ts
        if self.form == "second-order":
            U, V = self.q0.copy(), self.v0.copy()
            if self.multipliers:  # lambda(t0) consistent with the initial state
                self.red.initial_multipliers(ts.getTime(), U, V)
            ts.setSolution2(U, V)
            return U
        X = self.J.createVecRight()
        xa, xb = X.getSubVector(self.is_a), X.getSubVector(self.is_b)
        self.q0.copy(xa)
        if self.vel is not None:
            self.w0.copy(xb)
        elif self.form == "first-order":
            self.v0.copy(xb)
        elif self.p0 is not None:
            self.p0.copy(xb)
        else:  # p0 = M v0 + G_p q0 + pi_0
            s = self.sys(ts.getTime())
            s["M"].mult(self.v0, xb)
            s["Gp"].multAdd(self.q0, xb, xb)
            xb.axpy(1.0, s["pi0"])
        X.restoreSubVector(self.is_a, xa)
        X.restoreSubVector(self.is_b, xb)
        ts.setSolution(X)
        return X

    def destroy(self) -> None:
        """Release the PETSc objects (collective) and the references to the run."""
        snes = self.ts.getSNES()
        if snes.getType() == PETSc.SNES.Type.PYTHON:
            snes.setPythonContext(None)
        self.ts.destroy()
        for k in ("_mksp",):
            obj = getattr(self, k, None)
            if obj is not None:
                obj.destroy()
                setattr(self, k, None)
        self.sys = None

    def _mass_solve(self, s, b, x, key: str = "M") -> None:
        """x = M^-1 b with the reduced mass ``s[key]`` (factorized once per matrix
        version)."""
        if getattr(self, "_mksp", None) is None:
            self._mksp = PETSc.KSP().create(self.comm)
            direct_lu(self._mksp)
        if getattr(self, "_mversion", None) != s["_version"]:
            self._mksp.setOperators(s[key])
            self._mversion = s["_version"]
        self._mksp.solve(b, x)

    def constraint_forces(self, t, q, v, out):
        """The full constraint-force vector at the current state (for reactions)."""
        model, red = self.model, self.red
        if self.multipliers:
            return red.constraint_forces(q, out)
        s = self.sys(t)
        if getattr(self, "_acc", None) is None:
            self._acc = q.duplicate()
            self._rhs = q.duplicate()
            self._fu = model.space.create_vec()
            self._fv = model.space.create_vec()
            self._fa = model.space.create_vec()
        a, rhs = self._acc, self._rhs
        if self.vel is not None:  # M_w w' = f_w - C_w w - K_w q, q'' = A_n w' + A_n' w + a_n'
            wd = s["fw"].copy(getattr(self, "_wd", None))
            self._wd = wd
            if getattr(self, "_wtmp", None) is None:
                self._wtmp = wd.duplicate()
                self._wacc = wd.duplicate()
            s["Cw"].mult(self.w, self._wtmp)
            wd.axpy(-1.0, self._wtmp)
            s["Kw"].mult(q, self._wtmp)
            wd.axpy(-1.0, self._wtmp)
            self._mass_solve(s, wd, self._wacc, key="Mw")
            self.vel.acceleration(t, self.w, self._wacc, a)
        else:
            s["f"].copy(rhs)  # M q'' = f - C q' - K q
            s["C"].mult(v, self.work)
            rhs.axpy(-1.0, self.work)
            s["K"].mult(q, self.work)
            rhs.axpy(-1.0, self.work)
            self._mass_solve(s, rhs, a)
        red.expand(q, out=self._fu)
        red.expand_rate(q, v, out=self._fv)
        red.expand_acceleration(q, v, a, out=self._fa)
        return model.constraint_forces(t, self._fu, self._fv, self._fa, out=out)

    def q_and_v(self, t, need_v: bool = True):
        """Reduced displacement and velocity at the current TS state (in reused vectors; the
        velocity of Hamilton's form, which needs a mass solve, only when ``need_v``)."""
        ts = self.ts
        q, b = self.q, self.v
        if self.form == "second-order":
            U, V = ts.getSolution2()
            U.copy(q)
            V.copy(b)
            return q, b
        X = ts.getSolution()
        xa, xb = X.getSubVector(self.is_a), X.getSubVector(self.is_b)
        xa.copy(q)
        xb.copy(b if self.vel is None else self.w)
        X.restoreSubVector(self.is_a, xa)
        X.restoreSubVector(self.is_b, xb)
        if self.vel is not None:  # v = A_n w + a_n
            self.vel.velocity(t, self.w, b)
            return q, b
        if self.form == "first-order" or not need_v:
            return q, b
        # Hamilton: M v = p - G_p q - pi_0
        s = self.sys(t)
        s["Gp"].mult(q, self.work)
        b.axpy(-1.0, self.work)
        b.axpy(-1.0, s["pi0"])
        self._mass_solve(s, b, self.work2)
        self.work2.copy(b)
        return q, b


def integrate(model, t_end: float, dt: float, formulation: str = "second-order",
              t0: float = 0.0, u0=None, v0=None, p0=None, probes: Sequence = (),
              output: Optional[str] = None, output_every: int = 1,
              spectral_radius: Optional[float] = None,
              progress: bool = True, options: Optional[Dict[str, object]] = None,
              prefix: str = "mbs_", constraints: str = "maggi", reactions=False,
              energy: bool = True, callback=None) -> Result:
    """Integrate ``model`` from ``t0`` to ``t_end``.

    Args:
        model: a :class:`dolfinx_mbs.Model` (its constraints define the reduced coordinates).
        t_end: final time (s).
        dt: time step (s); the initial one when adaptivity is switched on by options.
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        t0: initial time.
        u0, v0: initial displacement and velocity (relative to the frame): None (zero), a Function
            per body, or a PETSc Vec in full or reduced layout.
        p0: initial generalized momentum (Hamilton's form only; replaces v0), as u0.
        probes: points of the first body, or (body, point) pairs, to record u at.
        output: file stem: ``<output>.csv`` gets time, probes and energies row by row, and
            ``<output>_<body>.bp`` (VTX; ``.xdmf`` on DOLFINx 0.5, see
            :class:`dolfinx_mbs.io.FieldFile`) the displacement (body frame) and the global motion.
        output_every: write the fields every this many steps (the CSV gets every step).
        spectral_radius: generalized-alpha's high-frequency spectral radius (second-order only).
        progress: show a progress bar (rank 0) when tqdm is available.
        options: PETSc options for this run, without the prefix, e.g.
            ``{"ts_type": "bdf", "ts_adapt_type": "basic"}``; they override the options
            database, and are in it only while the run's solvers read it (when they are set
            up), never while a callback runs. Options PETSc reads at the end of a solve (the
            ``*_view`` family) have to go in the database.
        prefix: PETSc options prefix of the TS.
        constraints: ``"maggi"`` (reduced coordinates, default) or ``"multipliers"`` (the
            saddle-point system of :mod:`dolfinx_mbs.multipliers`; second-order only), for
            comparison.
        reactions: True (every constraint) or a list of constraints whose resultant forces
            are recorded at every step (``Result.reactions``, also in the CSV).
        energy: record the energies (three mat-vecs per step); False leaves
            ``Result.energy`` empty.
        callback: ``callback(t, u, v)``, called at every output time with the full
            displacement and velocity (PETSc Vecs in the full layout, valid during the call),
            collectively on every rank.

    Returns:
        A :class:`Result`; each body's ``u`` holds the final displacement.

    Raises:
        ValueError: bad arguments (on every rank).
        RuntimeError: a step failed; the message gives the time and PETSc's reason.
    """
    # numpy scalars too (a float32 t_end from a parameter array is a time like any other)
    t_end, dt, t0 = (checks.real(v, n) for n, v in (("t_end", t_end), ("dt", dt), ("t0", t0)))
    if dt <= 0.0:
        raise ValueError(f"dt must be positive, got {dt!r}")
    if t_end <= t0:
        raise ValueError(f"t_end must exceed t0 ({t0}), got {t_end!r}")
    if spectral_radius is not None:
        if formulation != "second-order":
            raise ValueError("spectral_radius applies to the second-order formulation only")
        if not 0.0 <= spectral_radius <= 1.0:
            raise ValueError(f"spectral_radius must lie in [0, 1], got {spectral_radius!r}")
        options = dict(options or {}, ts_alpha_radius=spectral_radius)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable (t, u, v) or None, got {callback!r}")
    if p0 is not None and formulation != "hamiltonian":
        raise ValueError("p0 (initial momentum) applies to the hamiltonian formulation only")
    return _run(model, t_end, dt, formulation, t0, u0, v0, p0, probes, output, output_every,
                progress, _run_options(prefix, formulation, constraints, options), constraints,
                reactions, energy, callback)


def _run_options(prefix: str, formulation: str, constraints: str,
                 options: Optional[Dict[str, object]] = None) -> SolverOptions:
    """The options of one :func:`integrate` run: the package's defaults that exist only as
    PETSc options (each unless the database has it), overridden by the run's ``options``.

    Args:
        prefix: the TS's options prefix.
        formulation: one of :data:`FORMULATIONS`.
        constraints: ``"maggi"`` or ``"multipliers"``.
        options: the caller's options for this run, without the prefix.
    """
    defaults = dict(_DEFAULT_OPTIONS)
    if formulation != "second-order":  # the Schur complement solvers (see _Integrator)
        defaults.update(_SCHUR_OPTIONS)
    if constraints == "multipliers" or formulation != "second-order":
        # room for MUMPS's pivoting: the saddle point, and the 2n systems whose blocks differ
        # in scale by many orders (a I beside K) need more than its default estimate
        defaults["mat_mumps_icntl_14"] = 200
    return SolverOptions(prefix, defaults, options)


def _run(model, t_end, dt, formulation, t0, u0, v0, p0, probes, output, output_every, progress,
         opts, constraints="maggi", reactions=False, energy=True, callback=None) -> Result:
    it = _Integrator(model, formulation, t0, dt, u0, v0, opts, p0, constraints)
    if reactions is True:
        rcons = list(model.constraints)
    elif reactions:
        rcons = list(reactions)
        for c in rcons:
            if not any(c is k for k in model.constraints):
                raise ValueError(f"reactions: {c!r} is not a constraint of this model")
    else:
        rcons = []
    rnames = [c.name for c in rcons]
    if len(set(rnames)) != len(rnames):
        raise ValueError("reactions: the constraints must have distinct names (pass name=)")
    rhist = {n: [] for n in rnames}
    fc = model.space.create_vec() if rcons else None
    full_v = model.space.create_vec() if callback is not None else None
    ts = it.ts
    n_steps = int(round((t_end - t0) / dt))
    ts.setMaxTime(t_end)
    ts.setMaxSteps(10 * n_steps + 10)
    opts.set_from_options(ts)
    if formulation == "second-order" and constraints == "maggi" and \
            ts.getSNES().getKSP().getPC().getType() == PETSc.PC.Type.GAMG:
        it.J.setNearNullSpace(model.near_nullspace())  # rigid-body modes for multigrid
    x0 = it.initial_state()

    pr = Probes(model.bodies, list(probes)) if probes else None
    times, values = [], []
    energies = {"kinetic": [], "elastic": [], "potential": [], "jacobi": [], "work": []} \
        if energy else {}
    work_acc = [0.0, 0.0]  # accumulated work, last load power
    writer = fields = None
    if not isinstance(output_every, int) or output_every < 1:
        raise ValueError(f"output_every must be a positive integer, got {output_every!r}")
    if output is not None:
        gd = [c.body_b.gdim if hasattr(c, "body_b") else c.body.gdim for c in rcons]
        cols = ["t"] + (probe_columns(pr.n, pr.dim) if pr else []) + list(energies) + \
            [f"{n}:F{'xyz'[i]}" for n, g in zip(rnames, gd) for i in range(g)]
        writer = TimeSeriesWriter(output + ".csv", cols, model.comm)
        fields = MotionWriter(model.bodies, output)
    bar = None
    if progress and model.comm.rank == 0 and n_steps >= 100:
        try:
            from tqdm import tqdm

            bar = tqdm(total=n_steps, desc=f"{formulation} ({ts.getType()})", leave=False)
        except ImportError:  # pragma: no cover
            bar = None
    failure = []

    def monitor(ts_, step, t, X):
        q, v = it.q_and_v(t, need_v=energy or bool(rcons) or callback is not None)
        if energy:
            s = it.sys(t)
            s["M"].mult(v, it.work)
            kin = 0.5 * v.dot(it.work)
            s["Kel"].mult(q, it.work)
            ela = 0.5 * q.dot(it.work)
            s.get("Kpot", s["K"]).mult(q, it.work2)
            pot = 0.5 * q.dot(it.work2)
            if it.nonlinear:  # St Venant-Kirchhoff: the strain energy's nonlinear part
                extra = model.nonlinear_energy(q)
                ela += extra
                pot += extra
            jac = kin + pot - q.dot(s["f"])
            # work of the loads of the second-order form, trapezoidal in time
            fv = v.dot(s["f"])
            if times:
                work_acc[0] += 0.5 * (fv + work_acc[1]) * (t - times[-1])
            work_acc[1] = fv
            check = (kin, ela)
        else:
            check = (q.norm(PETSc.NormType.NORM_INFINITY),)
        if not all(math.isfinite(x) for x in check):
            failure.append(f"the solution is not finite at t={t:g} (step {step})")
            raise FloatingPointError(failure[-1])
        it.red.expand(q, out=it.full)
        model.space.scatter(it.full, model.functions())
        if callback is not None:
            if it.multipliers:
                it.red.expand(v, out=full_v)
            else:
                it.red.expand_rate(q, v, out=full_v)
            callback(t, it.full, full_v)
        row = [t]
        if pr is not None:
            pv = pr.evaluate()
            values.append(pv)
            row += pv.reshape(-1).tolist()
        times.append(t)
        if energy:
            for k, x in (("kinetic", kin), ("elastic", ela), ("potential", pot), ("jacobi", jac),
                         ("work", work_acc[0])):
                energies[k].append(x)
            row += [kin, ela, pot, jac, work_acc[0]]
        if rcons:
            forces = it.constraint_forces(t, q, v, fc)
            for name, val in model.reactions(forces, t, rcons).items():
                rhist[name].append(val)
                row += val.tolist()
        if writer is not None:
            writer.write(row)
        if fields is not None and step % output_every == 0:
            fields.write(t)
        if bar is not None and step > 0:
            bar.update(1)

    ts.setMonitor(monitor)
    try:
        ts.solve(x0)
    except (PETSc.Error, FloatingPointError) as e:
        # PETSc >= 3.19 raises out of TSSolve where 3.18 returned a reason: name the solvers'
        # reasons either way
        msg = failure[0] if failure else f"{str(e).splitlines()[0]} ({solver_reasons(ts)})"
        raise RuntimeError(f"time integration failed ({formulation}, {ts.getType()}) at "
                           f"t={ts.getTime():g}: {msg}") from None
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
        if fields is not None:
            fields.close()
        reason, t_fail = ts.getConvergedReason(), ts.getTime()
        ts_type, steps = ts.getType(), ts.getStepNumber()
        # the TS holds the monitor, which holds this run's histories: break the cycle
        ts.cancelMonitor()
        it.destroy()
    if reason < 0:
        raise RuntimeError(f"time integration diverged at t={t_fail:g}: TS "
                           f"{reason_name(PETSc.TS.ConvergedReason, reason)}")
    dim = pr.dim if pr else model.bodies[0].gdim
    probes_arr = np.array(values) if values else np.zeros((len(times), 0, dim))
    return Result(times=np.array(times), probes=probes_arr,
                  energy={k: np.array(v) for k, v in energies.items()},
                  formulation=formulation, ts_type=ts_type, steps=steps,
                  reactions={k: np.array(v) for k, v in rhist.items()})
