"""The TS backend's stepper of a model with computed frames.

:class:`CoupledStepper` implements :class:`~dolfinx_mbs.integrate.stepper.Stepper` on the
coupled equations (:class:`~dolfinx_mbs.integrate.ts.coupled.CoupledProblem`: the elastic
coordinates and rates, the frames' coordinates and speeds, the joints' multipliers in one TS
vector, stepped by Newton's method on the bordered system). The driver
(:mod:`dolfinx_mbs.integrate.driver`) owns what the run records, its checkpoints, its signals
and its errors' words, as for a run of prescribed frames; the observers of a coupled run are
:mod:`dolfinx_mbs.integrate.coupled`'s.

The time loop is PETSc's, as :class:`~dolfinx_mbs.integrate.ts.stepper.TSStepper`'s: one
``TSSolve`` whose monitor is the driver's boundary. Fixed steps (``ts_adapt_type none``, the
default here: TSBDF would adapt its step) end at the sum of whole steps where that is
``t_end`` to round-off, so that a run to a checkpoint and a longer run take the same steps up
to it. A checkpoint holds the elastic coordinates and rates as a run of prescribed frames
writes them (none without elastic bodies) and, in ``latest.json``, the frame unknowns with
what they must fit (:meth:`CoupledStepper.extra`,
:func:`~dolfinx_mbs.integrate.checkpoint.coupled_extra`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Tuple

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate.stepper import Boundary, CoupledRecords, Needs, RunSpec, State
from dolfinx_mbs.integrate.ts.coupled import CoupledProblem
from dolfinx_mbs.integrate.ts.stepper import TSLoop
from dolfinx_mbs.petsc_options import SolverOptions

if TYPE_CHECKING:
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["CoupledStepper"]

log = logging.getLogger(__name__)

#: the TS types a coupled run restarts from the state alone
#: (:data:`~dolfinx_mbs.integrate.checkpoint.ONE_STEP` and
#: :data:`~dolfinx_mbs.integrate.checkpoint.RESTARTED`)
RESTARTS = checkpoint.ONE_STEP + checkpoint.RESTARTED


class CoupledStepper(CoupledRecords, TSLoop):
    """A run of a model with computed frames, stepped by PETSc TS (see the module docstring).

    Args:
        system: the coupled system.
        run: the run (:class:`~dolfinx_mbs.integrate.stepper.RunSpec`; ``formulation``
            one of :attr:`CoupledSystem.formulations`).
        restart: the run continues from a checkpoint (its state comes from
            :meth:`resume`, not from :meth:`initial`).
        stem: the run's ``output`` (the errors about checkpoints name it).
    """

    def __init__(self, system: CoupledSystem, run: RunSpec, restart: bool = False,
                 stem: str | None = None) -> None:
        self.system, self.formulation, self.restart = system, run.formulation, restart
        #: the system whose unknowns a checkpoint names (none without elastic bodies: the
        #: whole state is then the frame unknowns of ``latest.json``)
        self.named = system if system.parts else None
        # fixed steps unless the options say otherwise (TSBDF would adapt its step by default)
        opts = SolverOptions(run.prefix, {"ts_adapt_type": "none"}, run.options)
        ts = self.ts = PETSc.TS().create(system.comm)
        ts.setOptionsPrefix(run.prefix)
        ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
        self.problem = CoupledProblem(system, ts, opts, run.formulation, run.spectral_radius)
        self.q0 = self.v0 = self.x0 = None
        self._state: tuple = ()
        try:
            self.set_steps(run, opts)
            if run.checkpoints and not restart:
                # the type a restart would take (options may change it): refused before any
                # step
                checkpoint.check_type(ts, str(stem), RESTARTS, "checkpoints of")
        except BaseException:
            self.destroy()
            raise
        self.method = self.scheme = ts.getType()

    # --- the run ---------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The TS's solution at ``t0``: the elastic state and the frame unknowns that fit it
        (:meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.initial_unknowns`), unless the run
        restarts.

        Args:
            t0: the initial time (s).
            q0: the reduced elastic displacement.
            v0: the reduced elastic velocity.
            p0: unused (None).
        """
        self.q0, self.v0 = q0, v0
        if not self.restart:
            self._start(self.system.initial_unknowns(q0, v0, t0))

    def _start(self, f0: np.ndarray) -> None:
        self.x0 = self.problem.initial_state(self.q0, self.v0, f0)
        self.problem.forget_stage()
        self.problem.start(self.ts.getTime(), self.x0)  # Hamilton's: the state's momenta

    def resume(self, ckpt: checkpoint.Checkpoint, stem: str, t_end: float) -> None:
        """The checkpoint's state, time, step number and step size into the TS.

        Args:
            ckpt: the checkpoint read (checked to be one of this model).
            stem: the checkpoints' file stem.
            t_end: the run's final time (s).
        """
        f0 = checkpoint.frame_unknowns(self.system, ckpt, stem)
        checkpoint.resume_ts(self.ts, [self.q0, self.v0] if self.system.parts else [], ckpt,
                             stem, t_end, RESTARTS)
        self.resume_steps(ckpt, t_end)
        self._start(f0)

    def snapshot(self) -> Tuple[int, float, float, list]:
        """The TS's step number, time, next step size and the elastic coordinates and rates
        (none without elastic bodies); the frame unknowns are :meth:`extra`'s."""
        ts = self.ts
        q, v, _ = self._state
        return ts.getStepNumber(), ts.getTime(), ts.getTimeStep(), \
            [q, v] if self.system.parts else []

    def extra(self) -> checkpoint.CoupledUnknowns:
        """The frame unknowns at the boundary (the joints' multipliers as the observers read
        them), with what a restart checks they fit."""
        return checkpoint.coupled_extra(self.system, self.problem.observed(self._state[2]))

    def checkpointed(self) -> None:
        """A checkpoint was written and the run goes on as a restart from it would.

        The scheme starts again from the state (BDF2 with half a step of backward Euler,
        generalized-alpha with its estimate of the rates); Hamilton's form takes the momenta
        carried from the state, as a restart takes them (they are the step end's velocities'
        to round-off). The joints' multipliers of the solution become those the checkpoint
        keeps (:meth:`extra`), as a restart reads them.
        """
        self.problem.adopt_stage()
        self.ts.restartStep()
        self.problem.start(self.ts.getTime(), self.ts.getSolution())

    def prepare(self, needs: Needs) -> None:
        """Nothing to prepare: the state is read back at each boundary.

        Args:
            needs: what the observers read.
        """

    def march(self, at: Boundary) -> None:
        """Step the run by one ``TSSolve``, ``at`` its monitor (:meth:`TSLoop.solve`); at
        the end the frames hold their final state
        (:meth:`~dolfinx_mbs.frames.ComputedFrame.set_state`).

        Args:
            at: the driver's side of the seam.
        """
        self.solve(at, self.x0)
        s = self.system
        _, _, f = self._split()
        for fr, zs, ws in zip(s.frames, s.zslice, s.wslice):
            fr.set_state(self.time, f[zs], f[ws])

    def _split(self) -> tuple:
        self._drop()
        self._state = self.problem.state(self.ts.getSolution())
        return self._state

    def _drop(self) -> None:
        for x in self._state[:2]:
            x.destroy()
        self._state = ()

    # --- what the observers ask --------------------------------------------------------------
    def state(self, t: float, need_v: bool) -> State:
        """The TS's solution at ``t``: the elastic q and v and the frame unknowns (the joints'
        multipliers of the step's intermediate time where the scheme solves them there:
        :meth:`~dolfinx_mbs.integrate.ts.coupled.CoupledProblem.observed`, which a
        checkpoint keeps too, :meth:`extra`).

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read (it is always there).

        Returns:
            The state (valid until the next boundary).
        """
        q, v, f = self._split()
        return State(q, v, frames=self.problem.observed(f))

    def destroy(self) -> None:
        """Destroy the state read last, the problem and the TS (collective)."""
        self._drop()
        if self.x0 is not None:
            self.x0.destroy()
        self.ts.cancelMonitor()
        self.problem.destroy()
        self.ts.destroy()
