"""The residual and Jacobian of a formulation, as PETSc TS callbacks on a typed system.

* :class:`TSProblem`: what every formulation shares: the TS and its solver set-up from the run's
  options, the initial state, and the reduced displacement and velocity read back from the
  TS's solution for the observers;
* :class:`SecondOrderProblem`: M q'' + C q' + K q (+ n(q)) = f as an I2 function (TSALPHA2);
* :func:`second_order_residual` and :class:`LinearStep`, the pieces a user loop can reuse.

The forms on 2n unknowns (first-order, Hamilton, velocity rows) are in
:mod:`dolfinx_mbs.integrate.ts.first_order`; :func:`dolfinx_mbs.integrate.integrate` picks one.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Tuple, cast

from petsc4py import PETSc

from dolfinx_mbs.integrate.initial import reduced_initial
from dolfinx_mbs.integrate.state_products import (
    StateProducts,
    apply_blocks,
    second_order_residual,
)
from dolfinx_mbs.integrate.step_solvers import cheapest_lu, multigrid, small_lu
from dolfinx_mbs.petsc_options import SAME, SUBSET, converged, factorize, reason_name

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.petsc_options import SolverOptions
    from dolfinx_mbs.systems.multipliers import SaddlePoint
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["TSProblem", "SecondOrderProblem", "LinearStep"]

log = logging.getLogger(__name__)


class LinearStep:
    """A SNES for equations linear in the unknown: x <- x - J^-1 F(x), once. Exact for the
    linear equations of motion, with one residual evaluation per step where Newton needs two.

    The TS still sees a function call at the solution: its SNES callback updates the method's
    own state there (TSALPHA2 forms V and A of the step from it); the problem's residual is
    skipped in that call, as no one reads it.

    Args:
        problem: the run's problem (its residual skipped in the call at the solution).
    """

    def __init__(self, problem: TSProblem) -> None:
        self.problem = problem
        self.f: PETSc.Vec | None = None

    def setUp(self, snes: PETSc.SNES) -> None:
        """Nothing to set up (petsc4py's callback): the vectors are made at the first solve.

        Args:
            snes: the SNES.
        """

    def solve(self, snes: PETSc.SNES, b: PETSc.Vec | None, x: PETSc.Vec) -> None:
        """The step's one linear solve, x <- x - J^-1 F(x) (petsc4py's callback).

        Args:
            snes: the SNES.
            b: its right-hand side (subtracted by SNESComputeFunction).
            x: the initial guess, then the solution.
        """
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
        if not converged(ksp) or not math.isfinite(dx.norm()):
            snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_LINEAR_SOLVE)
            return
        x.axpy(-1.0, dx)
        self.problem.skip_residual = True
        try:
            snes.computeFunction(x, f)
        finally:
            self.problem.skip_residual = False
        snes.setIterationNumber(1)
        snes.setConvergedReason(PETSc.SNES.ConvergedReason.CONVERGED_ITS)


class TSProblem:
    """What the formulations share: the system, the TS's step solver, reduced work vectors,
    the initial reduced state, the mass solve of reactions.

    Args:
        system: the run's typed system.
        ts: the run's TS.
        opts: the run's solver options.
        t0: the initial time (s).
    """

    name = ""

    def __init__(self, system: RunSystem, ts: PETSc.TS, opts: SolverOptions,
                 t0: float) -> None:
        self.system = system
        self.ts = ts
        self.opts = opts
        self.comm = system.comm
        self.nonlinear = system.nonlinear
        #: the fluid-film bearings' nonlinear force (:mod:`dolfinx_mbs.systems.films`), or None
        self.films = getattr(system, "films", None)
        self.skip_residual: bool = False
        system.forget()  # the frames and loads as they are now, not as a former run saw them
        s = system.at(t0)
        self.n_local, self.n = s.M.getLocalSize()[0], s.M.getSize()[0]
        self.work, self.work2 = s.M.createVecLeft(), s.M.createVecLeft()
        self.q, self.v = s.M.createVecLeft(), s.M.createVecLeft()  # observer state, reused
        self._mksp: PETSc.KSP | None = None
        self._jkey: tuple | None = None
        self._ready = False
        #: M v of the last :meth:`state` where the form has it without a product, else None
        self.mass_velocity = None
        #: the step matrices are small enough for PETSc's own LU (:func:`small_lu`)
        self.small = small_lu(system, opts.prefix, opts.values)
        self._rhs: PETSc.Vec | None = None
        #: M q and K_s q of the last observed state (:mod:`dolfinx_mbs.integrate.state_products`)
        self.products = StateProducts()
        self._Mv: PETSc.Vec | None = None

    def initial(self, x: Any, name: str) -> PETSc.Vec:
        """A reduced vector from the user's initial value.

        Args:
            x: None (zero), a PETSc Vec in full or reduced layout, or per-body Functions
                (:func:`reduced_initial`).
            name: the argument, for the errors.

        Returns:
            A new reduced vector.
        """
        return reduced_initial(self.system, x, name)

    def set_up_snes(self) -> None:
        """One linear solve per step (:class:`LinearStep`), Newton for nonlinear strain."""
        snes = self.ts.getSNES()
        if self.nonlinear or self.films is not None:  # Newton: the tangent at every iteration
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=25)
            snes.setType(PETSc.SNES.Type.NEWTONLS)
        else:
            snes.setTolerances(rtol=1e-10, atol=1e-14, max_it=10)
            snes.setType(PETSc.SNES.Type.PYTHON)
            snes.setPythonContext(LinearStep(self))
        cheapest_lu(snes.getKSP(), self.small)

    def _unchanged(self, s: Any, *shifts: float) -> bool:
        """True when the Jacobian already holds these operators and shifts (steady frames and
        a fixed step): it is then left untouched, and so is its factorization."""
        # shifts compared to 12 digits: the step that lands on t_end differs from dt by round-off
        key = (s.version,) + tuple(float(f"{x:.12e}") for x in shifts)
        # a nonlinear tangent changes with the state: never the same
        same = key == self._jkey and not self.nonlinear and self.films is None
        self._jkey = key
        # PETSc would refactor on every Jacobian evaluation; keep the factorization instead
        self.ts.getSNES().getKSP().getPC().setReusePreconditioner(same)
        return same

    def _set_up_solver(self, J: PETSc.Mat, P: PETSc.Mat) -> None:
        """Set the step solver up (factorize) for the Jacobian just formed: the first time
        with the run's options in the database (PETSc reads some only at the first set-up,
        the symbolic factorization), later on its own (the pattern stays: numeric
        factorization only)."""
        ksp = self.ts.getSNES().getKSP()
        ksp.setOperators(J, P)
        if self._ready:
            factorize(ksp, options=self.opts)  # a failure: the step's solve reports it
        else:
            self.opts.set_up(ksp)
            self._ready = True

    def _nonlinear(self, t: float, q: PETSc.Vec, force: bool) -> Any:
        # nonlinear strain: a second-order system (records.check_choice refuses the others)
        system = cast("SecondOrderSystem", self.system)
        r, KN = system.nonlinear_reduced(t, q, force=force, tangent=not force)
        return r if force else KN

    #: the mass solve's relative tolerance when the run solves by multigrid (CG + Jacobi)
    MASS_RTOL = 1e-13

    def mass_solve(self, M: PETSc.Mat, b: PETSc.Vec, x: PETSc.Vec) -> None:
        """Solve x = M^-1 b.

        Factorized again only when M changed (PETSc follows the matrix's state: a constant
        mass matrix is factorized once per run); in a run that solves its steps by multigrid
        (:func:`dolfinx_mbs.integrate.step_solvers.multigrid`), where a factorization is what
        does not fit, by CG + Jacobi to :attr:`MASS_RTOL` (a mass matrix is well conditioned
        once scaled by its diagonal).

        Args:
            M: the mass matrix.
            b: the right-hand side.
            x: the solution.

        Raises:
            RuntimeError: the solve failed.
        """
        if self._mksp is None:
            self._mksp = PETSc.KSP().create(self.comm)
            if multigrid(self.opts):
                self._mksp.setType(PETSc.KSP.Type.CG)
                self._mksp.getPC().setType(PETSc.PC.Type.JACOBI)
                self._mksp.setTolerances(rtol=self.MASS_RTOL, atol=0.0, max_it=1000)
            else:
                cheapest_lu(self._mksp, self.small)
        self._mksp.setOperators(M)
        self._mksp.solve(b, x)
        if not converged(self._mksp):
            reason = reason_name(PETSc.KSP.ConvergedReason, self._mksp.getConvergedReason())
            raise RuntimeError(f"the mass matrix solve failed ({reason}): is the mass matrix "
                               "positive definite (densities, constraints)?")

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q) at the state (q, v) of the record ``s`` (vectors reused).

        In node-block form from the state's M q, M v (one pass over M) and K_s q, which the
        next residual at the same state reuses
        (:class:`~dolfinx_mbs.integrate.state_products.StateProducts`), else three products.

        Args:
            s: the state's record.
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v where the caller has it, or None.

        Returns:
            (M v, K_el q, K_pot q).
        """
        if getattr(s, "blocks", None) is not None:
            P = self.products.form(s, q, v if Mv is None else None)
            return (P.Mv if Mv is None else Mv,) + P.energies(s)
        if Mv is None:
            if self._Mv is None:
                self._Mv = q.duplicate()
            Mv = self._Mv
            s.M.mult(v, Mv)
        s.Kel.mult(q, self.work)
        s.Kpot.mult(q, self.work2)
        return Mv, self.work, self.work2

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec, out: PETSc.Vec) -> PETSc.Vec:
        """Q'' from the equations of motion at (q, q'): M q'' = f - C q' - K q.

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector to fill.

        Returns:
            ``out``.
        """
        s = self.system.at(t)
        if self._rhs is None:
            self._rhs = q.duplicate()
        rhs = self._rhs
        s.f.copy(rhs)
        s.C.mult(v, self.work)
        rhs.axpy(-1.0, self.work)
        s.K.mult(q, self.work)
        rhs.axpy(-1.0, self.work)
        self.mass_solve(s.M, rhs, out)
        return out

    def initial_state(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                      p0: PETSc.Vec | None = None
                      ) -> PETSc.Vec:  # pragma: no cover - the formulation's
        """The TS's solution at ``t0`` (set on the TS).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, or None.

        Returns:
            The solution vector.
        """
        raise NotImplementedError

    def state(self, t: float,
              need_v: bool = True) -> Tuple[PETSc.Vec, PETSc.Vec]:  # pragma: no cover
        """Reduced displacement and velocity at the TS's current solution (the formulation's).

        Args:
            t: the time just reached (s).
            need_v: whether v is read.

        Returns:
            (q, v).
        """
        raise NotImplementedError

    def destroy(self) -> None:
        """Release the PETSc objects (collective) and the references to the run."""
        snes = self.ts.getSNES()
        if snes.getType() == PETSc.SNES.Type.PYTHON:
            snes.setPythonContext(None)
        self.ts.destroy()
        if self._mksp is not None:
            self._mksp.destroy()
            self._mksp = None


class SecondOrderProblem(TSProblem):
    """M q'' + C q' + K q (+ n(q)) = f as TS I2 function/Jacobian (TSALPHA2).

    Args:
        system: the run's typed system.
        ts: the run's TS.
        opts: the run's solver options.
        t0: the initial time (s).
    """

    name = "second-order"

    def __init__(self, system: RunSystem, ts: PETSc.TS, opts: SolverOptions,
                 t0: float) -> None:
        super().__init__(system, ts, opts, t0)
        s = system.at(t0)
        ts.setType("alpha2")
        self.J = s.M.duplicate()
        self.F = s.M.createVecLeft()
        ts.setI2Function(self._function, self.F)
        ts.setI2Jacobian(self._jacobian, self.J, self.J)
        self.set_up_snes()

    def _function(self, ts: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, A: PETSc.Vec,
                  F: PETSc.Vec) -> None:
        if self.skip_residual:
            return
        s = self.system.at(t)
        kr = s.blocks
        if kr is not None and not any(b for *_, b in kr.blocks) and self.products.holds(s, U):
            # at the last observed state (PETSc's first guess): M (A + W_C V) + W_K M U + K_s U
            apply_blocks(kr.blocks, V, self.work, 2)
            self.work.axpy(1.0, A)
            s.M.mult(self.work, F)
            apply_blocks(kr.blocks, self.products.Mq, F, 3, add=True)
            F.axpy(1.0, self.products.Ksq)
            F.axpy(-1.0, s.f)
        else:
            second_order_residual(s, U, V, A, F, self.work)
        if self.nonlinear:
            F.axpy(1.0, self._nonlinear(t, U, True))
        if self.films is not None:
            F.axpy(1.0, self.films.residual(t, U, V))

    def _jacobian(self, ts: PETSc.TS, t: float, U: PETSc.Vec, V: PETSc.Vec, A: PETSc.Vec,
                  shift_v: float, shift_a: float, J: PETSc.Mat, P: PETSc.Mat) -> None:
        s = self.system.at(t)
        if self._unchanged(s, shift_v, shift_a):
            return
        s.K.copy(J, structure=SAME)
        J.axpy(shift_v, s.C, structure=SAME)
        J.axpy(shift_a, s.M, structure=SAME)
        if self.nonlinear:
            J.axpy(1.0, self._nonlinear(t, U, False), structure=SUBSET)
        if self.films is not None:
            self.films.add_tangent(J, t, U, V, shift_v)
        self._set_up_solver(J, P)

    def initial_state(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                      p0: PETSc.Vec | None = None) -> PETSc.Vec:
        """The TS's solution (U, V) at ``t0`` (multipliers made consistent where there are).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum (not this form's).

        Returns:
            U.
        """
        U, V = q0.copy(), v0.copy()
        if self.system.has_multipliers:  # lambda(t0) consistent with the state
            cast("SaddlePoint", self.system).initial_multipliers(t0, U, V)
        self.ts.setSolution2(U, V)
        return U

    def state(self, t: float, need_v: bool = True) -> Tuple[PETSc.Vec, PETSc.Vec]:
        """Reduced displacement and velocity at the TS's current solution (reused vectors).

        Args:
            t: the time just reached (s).
            need_v: whether v is read (it is at hand).

        Returns:
            (q, v).
        """
        U, V = self.ts.getSolution2()
        U.copy(self.q)
        V.copy(self.v)
        return self.q, self.v
