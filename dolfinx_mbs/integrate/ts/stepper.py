"""The TS backend's stepper: a PETSc TS on a formulation's TS problem.

:class:`TSStepper` implements :class:`~dolfinx_mbs.integrate.stepper.Stepper` on one of the
formulations' TS problems (:mod:`dolfinx_mbs.integrate.ts.second_order`,
:mod:`dolfinx_mbs.integrate.ts.first_order`).

The time loop is PETSc's: :meth:`TSStepper.march` is one ``TSSolve`` whose monitor is the
driver's boundary (:mod:`dolfinx_mbs.integrate.driver`), so the observers, the checkpoints and
the signals are seen at PETSc's step boundaries; fixed steps end at the sum of the whole steps
where that is ``t_end`` to round-off (:func:`end_at`), else the last step is matched to
``t_end`` as PETSc does (``TS_EXACTFINALTIME_MATCHSTEP``). The stepper is the only backend
that writes checkpoints and restarts from them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Sequence, Tuple, Type, cast

from petsc4py import PETSc

from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate.schemes import grid_end
from dolfinx_mbs.integrate.step_solvers import (
    attach_near_nullspace,
    option,
    run_options,
    small_lu,
)
from dolfinx_mbs.integrate.stepper import Boundary, Needs, RunSpec, State
from dolfinx_mbs.integrate.ts.first_order import (
    FirstOrderProblem,
    HamiltonProblem,
    VelocityRowsProblem,
)
from dolfinx_mbs.integrate.ts.second_order import SecondOrderProblem, TSProblem
from dolfinx_mbs.petsc_options import SolverOptions, error_words, reason_name, solver_reasons

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.integrate.observers import Energies, Observer
    from dolfinx_mbs.systems.velocity import VelocitySystem

__all__ = ["TSLoop", "TSStepper", "make_problem", "end_at"]

log = logging.getLogger(__name__)


def make_problem(system: RunSystem, formulation: str, ts: PETSc.TS, opts: SolverOptions,
                 t0: float) -> TSProblem:
    """The TS problem of ``formulation`` on ``system``, set on ``ts``.

    Args:
        system: the run's typed system.
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        ts: the run's TS.
        opts: the run's solver options.
        t0: the initial time (s).

    Returns:
        The problem (velocity rows' wherever the system has them).
    """
    if hasattr(system, "basis"):  # velocity rows: only a VelocitySystem has a basis
        return VelocityRowsProblem(cast("VelocitySystem", system), ts, opts, t0)
    cls = {"second-order": SecondOrderProblem, "first-order": FirstOrderProblem,
           "hamiltonian": HamiltonProblem}[formulation]
    return cls(system, ts, opts, t0)


def end_at(ts: PETSc.TS, t0: float, t_end: float, dt: float) -> None:
    """End ``ts``, stepping by ``dt`` from ``t0``, at ``t_end``.

    By whole steps where they end there to round-off
    (:func:`dolfinx_mbs.integrate.schemes.grid_end`), else by a last step matched to it.

    Args:
        ts: the run's TS.
        t0: the run's initial time (s).
        t_end: the final time asked (s).
        dt: the step (s).
    """
    end = grid_end(t0, t_end, dt)
    if end is None:
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        ts.setMaxTime(t_end)
    else:  # no step adjusted: the run stops at the sum of its steps
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.STEPOVER)
        ts.setMaxTime(end)


class TSLoop:
    """PETSc's time loop, as the TS backend's steppers share it: fixed steps of ``dt`` to
    ``t_end`` (or PETSc's adaptivity when the options ask for it), one ``TSSolve`` with the
    driver's boundary as its monitor, PETSc's words for a failed step.

    Attributes:
        ts: the run's TS.
        fixed: fixed steps of ``dt`` (no adaptivity asked): whole steps where they end at
            ``t_end``.
        n_steps: the steps the run is expected to take.
        steps: the steps taken.
        time: the time reached.
    """

    path = "ts"
    checkpoints = True
    energies_observer: Type[Energies] | None = None
    probes_observer: Callable[[Sequence, Sequence], Observer] | None = None
    ts: PETSc.TS
    dt: float

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """None: PETSc TS steps every run (a coupled run's system too).

        Args:
            system: the run's system.
            run: the run.

        Returns:
            None.
        """
        return None

    def set_steps(self, run: RunSpec, opts: SolverOptions) -> None:
        """The run's time, step and end into the TS, then the options.

        Args:
            run: the run.
            opts: the run's solver options (``ts_adapt_type none`` for fixed steps).
        """
        ts = self.ts
        ts.setTime(run.t0)
        ts.setTimeStep(run.dt)
        self.dt = run.dt
        self.n_steps = int(round((run.t_end - run.t0) / run.dt))
        self.fixed = option(opts, "ts_adapt_type") == "none"
        if self.fixed:
            end_at(ts, run.t0, run.t_end, run.dt)
        else:
            ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
            ts.setMaxTime(run.t_end)
        ts.setMaxSteps(10 * self.n_steps + 10)
        opts.set_from_options(ts)
        self.steps, self.time = 0, run.t0

    def resume_steps(self, ckpt: checkpoint.Checkpoint, t_end: float) -> None:
        """After a checkpoint's state went into the TS: the whole steps from the run's own
        start, the steps left.

        Args:
            ckpt: the checkpoint read.
            t_end: the run's final time (s).
        """
        if self.fixed:
            end_at(self.ts, ckpt.t0, t_end, self.dt)
        self.n_steps = int(round((t_end - ckpt.t) / ckpt.dt))
        self.ts.setMaxSteps(ckpt.index + 10 * self.n_steps + 10)

    def solve(self, at: Boundary, x0: PETSc.Vec) -> None:
        """One ``TSSolve`` from ``x0``, ``at`` its monitor.

        Args:
            at: the driver's side of the seam.
            x0: the initial state.

        Raises:
            RuntimeError: the TS stopped on a negative reason (PETSc < 3.19 returns it).
        """
        ts = self.ts
        ts.setMonitor(lambda ts_, index, t, X: at(index, t))
        try:
            ts.solve(x0)
        finally:
            self.steps, self.time = ts.getStepNumber(), ts.getTime()
        reason = ts.getConvergedReason()
        if reason < 0:
            raise RuntimeError(f"time integration diverged at t={self.time:g}: TS "
                               f"{reason_name(PETSc.TS.ConvergedReason, reason)}")

    def failure(self, error: BaseException) -> str:
        """PETSc's words and the solvers' reasons.

        PETSc >= 3.19 raises out of TSSolve where 3.18 returned a reason.

        Args:
            error: what the step raised.

        Returns:
            PETSc's words and the solvers' reasons.
        """
        return f"{error_words(error)} ({solver_reasons(self.ts)})"


class TSStepper(TSLoop):
    """A run stepped by PETSc TS (see the module docstring).

    Args:
        system: the run's typed system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`).
    """

    def __init__(self, system: RunSystem, run: RunSpec) -> None:
        """Make the TS and the problem, set from the run's options (see the class)."""
        self.system, self.formulation = system, run.formulation
        #: the system whose unknowns a checkpoint names
        self.named = system
        log.info("integrate: ts path (PETSc TS), %s, %d unknowns", run.formulation,
                 system.n_reduced)
        kind = "multipliers" if system.has_multipliers else "maggi"
        opts = run_options(run.prefix, run.formulation, kind, run.options,
                           small_lu(system, run.prefix, run.options))
        ts = self.ts = PETSc.TS().create(system.comm)
        ts.setOptionsPrefix(opts.prefix)
        # not ProblemType.LINEAR: PETSc then keeps the first Jacobian, but the shift changes
        # (generalized-alpha restarts with half a step) and so do frame-dependent operators
        ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
        self.problem = make_problem(system, run.formulation, ts, opts, run.t0)
        try:
            self.set_steps(run, opts)
            # rigid-body modes for GAMG
            attach_near_nullspace(system, self.problem, run.formulation, ts)
        except BaseException:
            self.destroy()
            raise
        self.method = self.scheme = ts.getType()
        self.x0 = None

    # --- the run ---------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The TS's solution at ``t0`` (multipliers made consistent where there are).

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, which replaces v0 when given, or None.
        """
        self.x0 = self.problem.initial_state(t0, q0, v0, p0)

    def resume(self, ckpt: checkpoint.Checkpoint, stem: str, t_end: float) -> None:
        """The checkpoint's state, time, step number and step size into the TS.

        Args:
            ckpt: the checkpoint read.
            stem: the checkpoints' file stem.
            t_end: the run's final time (s).
        """
        checkpoint.resume_ts(self.ts, self._solution_vecs(), ckpt, stem, t_end)
        self.resume_steps(ckpt, t_end)

    def snapshot(self) -> Tuple[int, float, float, list]:
        """The TS's step number, time, next step size and solution vectors."""
        ts = self.ts
        return ts.getStepNumber(), ts.getTime(), ts.getTimeStep(), self._solution_vecs()

    def extra(self) -> checkpoint.CoupledUnknowns | None:
        """None: the TS's vectors are the whole state."""
        return None

    def checkpointed(self) -> None:
        """A checkpoint was written and the run goes on: the next step restarts the scheme.

        PETSc's schemes start from the state alone: TSALPHA2 estimates the acceleration by
        two half steps of backward Euler, the theta methods the rate from the equations. A
        run restarted from the checkpoint does that there; so does the run that wrote it,
        whose steps are then the restarted run's (at TSALPHA2's spectral radius 1 the
        estimate changes the steps by round-off only, which a long run accumulates).
        """
        self.ts.restartStep()

    def _solution_vecs(self) -> list:
        """The TS's solution vectors: (U, V) for the second-order form, X else."""
        if isinstance(self.problem, SecondOrderProblem):
            return list(self.ts.getSolution2())
        return [self.ts.getSolution()]

    def prepare(self, needs: Needs) -> None:
        """Nothing to prepare: the problem reads back what is asked at each state.

        Args:
            needs: what the observers read.
        """

    def march(self, at: Boundary) -> None:
        """Step the run by one ``TSSolve``, ``at`` its monitor (:meth:`TSLoop.solve`).

        Args:
            at: the driver's side of the seam.
        """
        self.solve(at, self.x0)

    # --- what the observers ask --------------------------------------------------------------
    def state(self, t: float, need_v: bool) -> State:
        """The TS's solution at ``t`` as reduced q and v (and Hamilton's M v).

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read.

        Returns:
            The state (vectors reused).
        """
        q, v = self.problem.state(t, need_v=need_v)
        return State(q, v, self.problem.mass_velocity)

    def record(self, t: float) -> Any:
        """The system's record at ``t``.

        Args:
            t: the time (s).

        Returns:
            ``system.at(t)``.
        """
        return self.system.at(t)

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q): :meth:`TSProblem.energy_products`.

        Args:
            s: the record.
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v where the caller has it, or None.

        Returns:
            (M v, K_el q, K_pot q).
        """
        return self.problem.energy_products(s, q, v, Mv)

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Q'' at (q, v): :meth:`TSProblem.acceleration`.

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector to fill.

        Returns:
            ``out``.
        """
        return self.problem.acceleration(t, q, v, out)

    def destroy(self) -> None:
        """Destroy the problem and the TS.

        Break the TS's hold on the monitor (which holds the run's histories), destroy the
        problem and the TS (collective).
        """
        self.ts.cancelMonitor()
        self.problem.destroy()
