"""Frames whose motion is computed, in time: the coupled equations as PETSc TS callbacks.

The unknowns y = (q, v, f) of a :class:`~dolfinx_mbs.systems.coupled.CoupledSystem` (reduced
elastic coordinates and rates, distributed; the frames' coordinates and speeds f, held by rank
0 and read by all) step as one implicit first-order system F(t, y, y') = 0 with PETSc TS:
``"hamiltonian"`` by the implicit midpoint rule on Hamilton's form (below), ``"second-order"`` by
generalized-alpha for first-order systems (TSALPHA, spectral radius
``spectral_radius``, default 1: second order, no numerical damping; at radius 1 it is the
implicit midpoint rule, which keeps a free frame's unit quaternion and the quadratic
invariants of a rigid body), ``"first-order"`` by BDF2 (TSBDF: second order, dissipative, the
residual met at each step's end, so that the linear momentum of a free frame, a linear
function of the unknowns, is the bodies' momentum at every step), and any implicit TS type by
options (``-mbs_ts_type``; TSTHETA's Crank-Nicolson form takes the mass matrix as constant,
which the frames' rows are not: first order here).

Each step is solved by Newton's method on the exact residual with the exact Jacobian of the
step's first iterate (:class:`BorderedNewton`): the elastic block S = s^2 M_r + s C_r + K_r at
that iterate's frame state, factorized (the run's ``ksp_``/``pc_`` options: a direct solver by
default), bordered by the frame unknowns' columns B, rows C and block D, and solved through the
Schur complement on the frame unknowns (one solve with m right-hand sides with S's
factorization for m frame unknowns, then one per iteration). The Jacobian is kept while an
iteration reduces the residual at least tenfold (within a step the frame state changes little)
and formed again at the current iterate where it does not: a step then costs one
factorization, as a step of a prescribed frame whose state changes does. Hamilton's form
(Newton's method, quadratic) forms it at every iterate until an update moves no block by more
than :data:`KEEP` of it, and keeps it for the polish after that.

A free frame's quaternion is not normalized between steps (that would restart a multistep or
generalized-alpha scheme): its kinematics keep |q| exactly, the schemes to their order, and the
rotation is formed from q / |q|.

Hamilton's form (``"hamiltonian"``, :mod:`dolfinx_mbs.systems.coupled_hamilton`): the TS vector
stays (q, v, f) and the momenta (the reduced elastic momenta p, a hinge's momenta pi_j, a free
frame's global linear and angular momentum) are carried from step to step by the problem
itself: each step solves (2 / h) (Pi(y_m) - p0) + K(y_m) = 0 at the midpoint y_m (TSTHETA's
midpoint form), then p1 = 2 Pi(y_m) - p0. This is the implicit midpoint rule on (q, p, z, pi),
with v_m, w_m the velocities of the midpoint momenta. The TS's step end velocities 2 v_m - v0
would carry an O(dt^2) error of their own: after each step they are replaced by the
velocities of the momenta p1 at the step end's coordinates (the reduced mass matrix factored
once, the frames' speeds by a bordered solve:
:meth:`~dolfinx_mbs.systems.coupled_hamilton.HamiltonForm.velocities`), which changes no step
(the residual reads the midpoint's velocities, and of the step's start only its coordinates
and, for a free frame's translation, its linear momentum, which is p1's either way): the
states recorded at the step ends then have the momenta carried, as the midpoints
(``Result.midpoints``) do. Serially this costs a tenth more per step on the free elastic body
of the tests (2 M_r solves and 2 evaluations of the momenta per frame speed).

Why the momenta are not TS unknowns: the index-1 form with p and the relations p = Pi(y) as
rows has the same solution, and the relations would double the elastic block. The Newton step
solves with this residual's exact Jacobian, formed at every iterate: the second-order form's
bordered pieces with the derivatives of (2 / h) Pi(y) - Pi'(y, y') added to the momentum rows
(:meth:`~dolfinx_mbs.systems.coupled_hamilton.HamiltonForm.correct`), the elastic block
without the angular acceleration's coupling and M omega x on the column of the rates.
Newton's method then converges quadratically: two iterations a step to the default
tolerances on the free elastic body and the hub-beam of the tests (the second-order form's
Jacobian, which lacks the momenta's dependence on the coordinates and a free frame's rotation
of its global momenta, O(dt) relative terms, took 5 to 6 on the free body, 3 to 4 on the
hub-beam). The Jacobian kept over a step's iterations (as the other forms keep it while it
contracts the residual tenfold) would take 5 on the free body: the step's first iterate is
too far from its solution for a chord iteration to contract as fast.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
from petsc4py import PETSc

from dolfinx_mbs import compat
from dolfinx_mbs.integrate.step_solvers import cheapest_lu, small_lu
from dolfinx_mbs.petsc_options import factorize
from dolfinx_mbs.systems.coupled_hamilton import HamiltonForm

if TYPE_CHECKING:
    from dolfinx_mbs.petsc_options import SolverOptions
    from dolfinx_mbs.systems.coupled import CoupledSystem, FrameDerivatives
    from dolfinx_mbs.systems.records import SecondOrder

__all__ = ["CoupledProblem", "BorderedNewton"]


log = logging.getLogger(__name__)

#: an update below this fraction of the unknowns' block is round-off
ROUNDOFF = 1e-12
#: an exact Newton step that leaves the residual as it was, with an update below this fraction
#: of the unknowns' block, is at the round-off plateau (the elastic block's condition number
#: times the unit round-off: a slender beam's axial stiffness against its bending)
PLATEAU = 1e-4
#: a kept Jacobian is formed again when an iteration reduces the residual by less than this
SLOW = 0.1
#: Newton's method (:attr:`CoupledProblem.exact`) keeps its Jacobian for the next iteration
#: when the last update moved no block by more than this fraction of it: the Jacobian then
#: hardly changed, and the kept one contracts the residual about as much as a new one would
KEEP = 1e-2


class BorderedNewton:
    """The SNES step of :class:`CoupledProblem`: Newton's method on the bordered Jacobian.

    Converged when the residual fell below ``rtol`` of its first value (or ``atol``), or when
    in each block of the update (the elastic coordinates, each frame unknown; the elastic
    rates follow the coordinates by a linear row) the error it leaves, about a_k^2 / a_(k-1)
    for updates a_k of a contracting iteration, is below ``stol`` of the block (or of its first
    update, the step's own increment), or the update is below :data:`ROUNDOFF` of the block
    itself, or when an exact Newton step (its Jacobian formed at its iterate) did not halve
    the residual and moved no block by more than :data:`PLATEAU` of it or of its first update
    (the round-off plateau). A frame unknown's update below :data:`ROUNDOFF` of the largest
    frame unknown passes either test (an unknown that stays zero, a rigid body's relative
    momentum, has no scale of its own); at most ``max_it`` iterations (the SNES's tolerances).

    Args:
        problem: the coupled problem.
    """

    def __init__(self, problem: CoupledProblem) -> None:
        self.problem = problem

    def setUp(self, snes: PETSc.SNES) -> None:
        """Nothing to set up (petsc4py's callback).

        Args:
            snes: the SNES.
        """

    def solve(self, snes: PETSc.SNES, b: PETSc.Vec | None, x: PETSc.Vec) -> None:
        """The step's Newton iterations by bordered solves (petsc4py's callback).

        Args:
            snes: the SNES (its tolerances read, its reason set).
            b: its right-hand side (unused: the residual is the problem's).
            x: the initial guess, then the solution.
        """
        pr = self.problem
        F = pr.F_work
        rtol, atol, stol, max_it = snes.getTolerances()
        first = fprev = None
        sizes = scale = last = ()
        fresh = False      # the last update came from a Jacobian formed at its iterate
        for it in range(max_it + 1):
            snes.computeFunction(x, F)
            fnorm = F.norm()
            log.debug("Newton %d: |F| %.3e, block updates %s", it, fnorm,
                      " ".join(f"{a:.1e}" for a in sizes))
            if not math.isfinite(fnorm):
                snes.setConvergedReason(compat.SNES_DIVERGED_NAN)
                return
            if it == 0:
                f0 = fnorm
            done = fnorm <= atol or (it > 0 and fnorm <= rtol * f0)
            if not done and it > 1 and fresh and fprev is not None and fnorm > 0.5 * fprev:
                # an exact Newton step that did not reduce the residual: the round-off
                # plateau, if the update was small against the unknowns
                # (of the unknowns, or of the step's first update where they pass zero)
                floor = ROUNDOFF * max(scale[2:], default=0.0)
                assert first is not None  # (kept at the first update)
                done = all(a <= PLATEAU * max(b, c) or (k > 1 and a <= floor)
                           for k, (a, b, c) in enumerate(zip(sizes, first, scale))
                           if k not in pr.follow)
            if done:
                snes.setIterationNumber(it)
                snes.setConvergedReason(PETSc.SNES.ConvergedReason.CONVERGED_FNORM_RELATIVE)
                return
            if it == max_it:
                break
            # the Jacobian at the step's first iterate, kept while it contracts the residual
            # fast (a modified Newton step costs one solve); formed again where it does not
            fresh = it == 0 or (fprev is not None and fnorm > SLOW * fprev) or (
                pr.exact and not self._small(sizes, scale))
            if fresh:
                J, P, _ = snes.getJacobian()
                snes.computeJacobian(x, J, P)
                if not pr.linearize():
                    snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_LINEAR_SOLVE)
                    return
            fprev = fnorm
            dx = pr.solve_bordered(F)
            if dx is None or not math.isfinite(dx.norm()):
                snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_LINEAR_SOLVE)
                return
            x.axpy(-1.0, dx)
            last, sizes, scale = sizes, pr.block_norms(dx), pr.block_norms(x)
            if first is None:
                first = sizes
                continue
            # the error left after an update of a contracting iteration is about a^2 / a_prev
            # (quadratic or, with a kept Jacobian, linear convergence alike): done when that
            # is below stol of the unknowns (or of the step's first update) in every block but
            # the blocks that follow the others (:attr:`CoupledProblem.follow`)
            floor = ROUNDOFF * max(scale[2:], default=0.0)
            if all(a <= ROUNDOFF * c or a * a <= stol * max(b, c) * p or (k > 1 and a <= floor)
                   for k, (a, b, c, p) in enumerate(zip(sizes, first, scale, last))
                   if k not in pr.follow):
                pr.skip_residual = True   # the TS forms its stage values in this call
                try:
                    snes.computeFunction(x, F)
                finally:
                    pr.skip_residual = False
                snes.setIterationNumber(it + 1)
                snes.setConvergedReason(PETSc.SNES.ConvergedReason.CONVERGED_SNORM_RELATIVE)
                return
        snes.setIterationNumber(max_it)
        snes.setConvergedReason(PETSc.SNES.ConvergedReason.DIVERGED_MAX_IT)

    def _small(self, sizes: tuple, scale: tuple) -> bool:
        """Whether the update ``sizes`` is below :data:`KEEP` of the unknowns ``scale`` in
        every block that does not follow the others (a frame unknown below
        :data:`ROUNDOFF` of the largest passes)."""
        floor = ROUNDOFF * max(scale[2:], default=0.0)
        return all(a <= KEEP * c or (k > 1 and a <= floor)
                   for k, (a, c) in enumerate(zip(sizes, scale)) if k not in self.problem.follow)


class _NoProduct:
    """The Python context of the Jacobian's stand-in: it is never applied."""

    def mult(self, mat: PETSc.Mat, x: PETSc.Vec,
             y: PETSc.Vec) -> None:  # pragma: no cover - guards a misuse
        raise NotImplementedError("the coupled Jacobian is solved by its bordered blocks")


class CoupledProblem:
    """The TS callbacks of a coupled system and the bordered solve of its Newton steps.

    Args:
        system: the :class:`~dolfinx_mbs.systems.coupled.CoupledSystem`.
        ts: the PETSc TS (created by the caller; its type is set here).
        opts: the run's :class:`~dolfinx_mbs.petsc_options.SolverOptions`.
        formulation: ``"second-order"`` (TSALPHA), ``"first-order"`` (BDF2) or
            ``"hamiltonian"`` (TSTHETA's midpoint form on Hamilton's form).
        radius: generalized-alpha's spectral radius (None: 1).
    """

    def __init__(self, system: CoupledSystem, ts: PETSc.TS, opts: SolverOptions,
                 formulation: str, radius: float | None = None) -> None:
        self.system = s = system
        self.ts, self.opts, self.comm = ts, opts, system.comm
        self.n_local = s.create_reduced_vec().getLocalSize()
        self.m = s.m
        #: the blocks of :meth:`block_norms` left out of the convergence tests: the elastic
        #: rates (v = s q + c follows the coordinates by a linear row) and the joints'
        #: stabilizing multipliers mu (they vanish with the drift: zero but for round-off,
        #: which no relative test can meet)
        js = s.jointset
        self.follow = {1} | {2 + self.m - js.n_position + k for k in range(js.n_position)}
        self.owner = self.comm.rank == 0
        nf = self.m if self.owner else 0
        self.layout = (2 * self.n_local + nf, PETSc.DECIDE)
        r0 = self.comm.exscan(2 * self.n_local + nf) or 0
        self.is_q = PETSc.IS().createStride(self.n_local, r0, 1, comm=self.comm)
        self.is_v = PETSc.IS().createStride(self.n_local, r0 + self.n_local, 1, comm=self.comm)
        self.F = PETSc.Vec().createMPI(self.layout, comm=self.comm)
        self.F_work = self.F.duplicate()
        self.dx = self.F.duplicate()
        #: Hamilton's form: its momentum rows and the momenta carried between steps
        self.ham: HamiltonForm | None = None
        #: the state at the step's start (Hamilton's form, and the joints' multipliers)
        self.X0: PETSc.Vec | None = None
        #: the joints' block at the last step's intermediate time (:meth:`observed`)
        self.stage_joints: np.ndarray | None = None
        self._adopt = False
        #: the Jacobian formed at every iterate (Newton's method, not the kept Jacobian's
        #: modified one) until the updates are below :data:`KEEP` of the unknowns: Hamilton's
        #: form, whose steps converge quadratically so
        self.exact = formulation == "hamiltonian"
        if formulation == "hamiltonian":
            # TSTHETA at theta 1/2 in its midpoint form: one stage per step, y_m = (y0 + y1) / 2
            # (the Newton unknown) with y' = (y1 - y0) / h and the shift 2 / h, which is what
            # the momenta carried from step to step need. TSALPHA at radius 1 is the same rule
            # in its steps, but with it the first step's Newton iteration stalled (measured)
            self.ham = HamiltonForm(s)
            self.p0 = s.create_reduced_vec()
            self.pi0 = np.zeros(self.m)
            self.X0 = self.F.duplicate()
            self.t0 = 0.0
            self.midpoint_hooks: list = []
            self.ksp_mass: PETSc.KSP | None = None
            ts.setType(PETSc.TS.Type.THETA)
            ts.setTheta(0.5)
            ts.setThetaEndpoint(False)
            ts.setPreStep(self._pre_step)
            ts.setPostStep(self._post_step)
        elif formulation == "second-order":
            ts.setType(PETSc.TS.Type.ALPHA)
            ts.setAlphaRadius(1.0 if radius is None else float(radius))
            if js.n_unknowns:   # the joints' multipliers kept at the intermediate time
                self.X0 = self.F.duplicate()
                ts.setPreStep(self._pre_step)
                ts.setPostStep(self._post_step)
        else:
            # not TSTHETA's Crank-Nicolson: its endpoint form takes the mass matrix as
            # constant, and the frames' rows have one that moves with the state (first order
            # here); BDF2 evaluates the whole residual at the step's end
            ts.setType(PETSc.TS.Type.BDF)   # fixed steps: the run's defaults (integrate)
        ts.setIFunction(self._function, self.F)
        n = self.F.getSize()
        # the Jacobian's stand-in for PETSc (the Newton step solves the bordered system itself)
        self.J = PETSc.Mat().createPython((self.layout, (self.layout[0], n)),
                                          context=_NoProduct(), comm=self.comm)
        self.J.setUp()
        ts.setIJacobian(self._jacobian, self.J, self.J)
        snes = ts.getSNES()
        snes.setType(PETSc.SNES.Type.PYTHON)
        snes.setPythonContext(BorderedNewton(self))
        snes.setTolerances(rtol=1e-11, atol=1e-300, stol=1e-9, max_it=25)
        self.ksp = PETSc.KSP().create(self.comm)
        self.ksp.setOptionsPrefix(opts.prefix)
        # PETSc's own LU for small elastic blocks, as the prescribed frames' steps have it
        cheapest_lu(self.ksp, bool(s.parts) and small_lu(s, opts.prefix, opts.values))
        self._ready = False
        self.S: PETSc.Mat | None = None
        #: S^-1 of the border columns (local rows by columns) and the dense blocks that
        #: carry them to the factored elastic block and back (:meth:`_S_solve_columns`)
        self._Xa = np.zeros((0, 0))
        self._Bm: PETSc.Mat | None = None
        self._Xm: PETSc.Mat | None = None
        self._lu: tuple | None = None
        self.rec: SecondOrder | None = None  # the elastic block's record
        self.der: FrameDerivatives | None = None
        self.shift: float | None = None
        q = s.create_reduced_vec()
        self.work = [q.duplicate() for _ in range(7)]   # [6]: a border column's S^-1

    # -- layout ------------------------------------------------------------------------------
    def split(self, X: PETSc.Vec, *more: PETSc.Vec) -> tuple:
        """(q, v) as sub-vectors of ``X`` (restore with :meth:`restore`) and f (replicated).

        Args:
            X: a TS vector.
            *more: other TS vectors, whose f are given too (one broadcast for all).

        Returns:
            (q, v, f, f of each of ``more``...).
        """
        q, v = X.getSubVector(self.is_q), X.getSubVector(self.is_v)
        n = 2 * self.n_local
        fs = np.empty((1 + len(more), self.m))
        if self.owner:
            for k, V in enumerate((X,) + more):
                fs[k] = V.getArray(readonly=True)[n:]
        if self.comm.size > 1:
            self.comm.Bcast(fs, root=0)
        return (q, v) + tuple(fs)

    def restore(self, X: PETSc.Vec, q: PETSc.Vec, v: PETSc.Vec) -> None:
        """Give back the sub-vectors of :meth:`split`.

        Args:
            X: the TS vector split.
            q: its q sub-vector.
            v: its v sub-vector.
        """
        X.restoreSubVector(self.is_q, q)
        X.restoreSubVector(self.is_v, v)

    def join(self, q: PETSc.Vec, v: PETSc.Vec, f: np.ndarray, out: PETSc.Vec) -> PETSc.Vec:
        """(q, v, f) into one TS vector ``out``.

        Args:
            q: the reduced coordinates.
            v: their rates.
            f: the frame unknowns (replicated).
            out: the TS vector to fill.

        Returns:
            ``out``.
        """
        a = out.getArray()
        n = self.n_local
        a[:n] = q.getArray(readonly=True)
        a[n:2 * n] = v.getArray(readonly=True)
        if self.owner:
            a[2 * n:] = f
        return out

    # -- TS callbacks ---------------------------------------------------------------------------
    #: set by the Newton step for its last call (the TS's own bookkeeping, no residual read)
    skip_residual = False

    def _function(self, ts: PETSc.TS, t: float, X: PETSc.Vec, Xdot: PETSc.Vec,
                  F: PETSc.Vec) -> None:
        if self.skip_residual:
            return
        q, v, f, fd = self.split(X, Xdot)
        qd, vd = Xdot.getSubVector(self.is_q), Xdot.getSubVector(self.is_v)
        Fq, Fv = F.getSubVector(self.is_q), F.getSubVector(self.is_v)
        try:
            qd.copy(Fq)
            Fq.axpy(-1.0, v)
            if self.ham is not None:
                Ff = self.ham.residual(t, q, v, vd, f, fd, Fv, 2.0 / ts.getTimeStep(),
                                       self.p0, self.pi0)
            else:
                Ff, _ = self.system.evaluate(t, q, v, vd, f, fd, Fv)
            self.system.jointset.q_correction(f, Fq)   # q' - v + g_q^T mu (joints at nodes)
            self.system.set_unknowns(f, fd, q)
        finally:
            F.restoreSubVector(self.is_q, Fq)
            F.restoreSubVector(self.is_v, Fv)
            self.restore(X, q, v)
            self.restore(Xdot, qd, vd)
        if self.owner:
            F.array[2 * self.n_local:] = Ff

    # -- Hamilton's form: the momenta between steps ------------------------------------------
    def start(self, t0: float, X0: PETSc.Vec) -> None:
        """Hamilton's form: the momenta of the initial state (collective; nothing otherwise).

        Args:
            t0: the initial time (s).
            X0: the initial TS vector.
        """
        if self.ham is None:
            return
        q, v, f = self.state(X0)
        self.pi0 = self.ham.momenta(t0, q, v, f, self.p0)
        q.destroy()
        v.destroy()

    def multiplier_lag(self) -> float:
        """Where in the step the state's joint multipliers belong, as the fraction of the step
        before its end.

        The schemes that solve the rows at an intermediate time t0 + a h (TSALPHA: a =
        alpha_f; the midpoint rule: a = 1/2) find the joints' multipliers there; their
        step-end values 2 lam_m - lam_0 (a = 1/2) would oscillate from step to step about
        the force without approaching it, so the observers read the intermediate values
        (:meth:`observed`; the next step's rows read only its own intermediate values).
        BDF solves the rows at the step's end: 0.

        Returns:
            1 - a, or 0.
        """
        ts = self.ts
        kind = ts.getType()
        if kind == PETSc.TS.Type.ALPHA:
            return 1.0 - float(ts.getAlphaParams()[1])
        if kind == PETSc.TS.Type.THETA and not ts.getThetaEndpoint():
            return 1.0 - float(ts.getTheta())
        return 0.0

    def _keep_intermediate_multipliers(self, X1: PETSc.Vec) -> None:
        """Keep the joints' block of the step's intermediate time (:meth:`multiplier_lag`)
        from the step's start :attr:`X0` and its end ``X1``, for :meth:`observed`.

        The TS's solution is left as it is: a post-step that changes it makes PETSc restart
        the scheme at the next step (``TSPostStep`` compares the solution's state), which for
        TSALPHA means two backward-Euler half steps and a new initial rate at every step
        (three solves a step, and first order in dt at a spectral radius below 1, where the
        rate carried from step to step matters).
        """
        js = self.system.jointset
        lag = self.multiplier_lag()
        if not js.n_unknowns or lag == 0.0:
            return
        q, v, f1, f0 = self.split(X1, self.X0)
        self.restore(X1, q, v)
        b = self.m - js.n_unknowns
        self.stage_joints = f0[b:] + (1.0 - lag) * (f1[b:] - f0[b:])

    def observed(self, f: np.ndarray) -> np.ndarray:
        """The frame unknowns ``f`` of the step's end as the observers read them: the joints'
        block at the step's intermediate time where the scheme solves it there (kept by the
        last step, :meth:`_keep_intermediate_multipliers`; the state's own before the first
        step).

        Args:
            f: the frame unknowns of the TS's solution (replicated).

        Returns:
            ``f``, or a copy with the joints' block replaced.
        """
        if self.stage_joints is None:
            return f
        out = f.copy()
        out[self.m - len(self.stage_joints):] = self.stage_joints
        return out

    def adopt_stage(self) -> None:
        """Write the kept intermediate multipliers into the joints' block of the TS's
        solution before the next step (where the scheme restarts, at a checkpoint: the state
        a restart from it reads, :meth:`observed`'s). The write waits for the next step's
        start (:meth:`_pre_step`): the solution is read-only while the TS's monitor runs."""
        self._adopt = self.stage_joints is not None

    def forget_stage(self) -> None:
        """Forget the kept intermediate multipliers (a new start: :meth:`observed` gives the
        state's own until the next step)."""
        self.stage_joints = None
        self._adopt = False

    def _pre_step(self, ts: PETSc.TS) -> None:
        X = ts.getSolution()
        if self._adopt and self.stage_joints is not None:
            # the array taken on every rank: PETSc keeps the TS's Jacobian by the solution's
            # state, which a write on the owner alone would move on that rank alone
            a = X.getArray()
            if self.owner:
                a[len(a) - len(self.stage_joints):] = self.stage_joints
        self._adopt = False
        X.copy(self.X0)
        self.t0 = ts.getTime()

    def _post_step(self, ts: PETSc.TS) -> None:
        if self.ham is None:
            self._keep_intermediate_multipliers(ts.getSolution())
            return
        # the midpoint state's momenta p_m = (p0 + p1) / 2 give the step's end momenta
        assert self.X0 is not None  # (kept with the intermediate multipliers)
        Xm = self.X0.copy()
        Xm.axpy(1.0, ts.getSolution())
        Xm.scale(0.5)
        tm = 0.5 * (self.t0 + ts.getTime())
        q, v, f = self.state(Xm)
        pm = self.p0.duplicate()
        pim = self.ham.momenta(tm, q, v, f, pm)
        self.p0.scale(-1.0)
        self.p0.axpy(2.0, pm)
        self.pi0 = 2.0 * pim - self.pi0
        for hook in self.midpoint_hooks:
            hook(tm, q, v, f)
        for x in (Xm, q, v, pm):
            x.destroy()
        # the step's end velocities: those of the momenta (p1, pi1) at its coordinates (a
        # change of the solution that makes PETSc restart TSTHETA at the next step, which
        # changes nothing there: its predictor is the step's start), not
        # the TS's 2 v_m - v0 (which the next step does not read: its residual takes the
        # midpoint's velocities and the momenta carried, and a free frame's linear momentum
        # m v_O + pi, which is p1's either way)
        X1 = ts.getSolution()
        q, v, f = self.state(X1)
        try:
            f = self.ham.velocities(ts.getTime(), q, v, f, self.p0, self.pi0, self._mass_solve)
            self.join(q, v, f, X1)
        finally:
            q.destroy()
            v.destroy()
        self._keep_intermediate_multipliers(X1)

    def _mass_solve(self, b: PETSc.Vec, x: PETSc.Vec) -> None:
        """Solve M_r x = b (M_r: the elastic bodies' reduced mass matrix, factored once)."""
        if self.ksp_mass is None:
            last = self.system._last
            assert last is not None  # (the state of the last residual)
            M = self.system.elastic_base.at(self.t0, states=last["states"]).M
            self.ksp_mass = PETSc.KSP().create(self.comm)
            self.ksp_mass.setOptionsPrefix(self.opts.prefix + "mass_")
            cheapest_lu(self.ksp_mass, small_lu(self.system, self.opts.prefix,
                                                self.opts.values))
            self.ksp_mass.setOperators(M)
            self.ksp_mass.setFromOptions()
            factorize(self.ksp_mass, "the reduced mass matrix")
        self.ksp_mass.solve(b, x)
        if self.ksp_mass.getConvergedReason() <= 0:
            raise RuntimeError("Hamilton's form: the reduced mass matrix's solve failed "
                               f"(KSP reason {self.ksp_mass.getConvergedReason()})")

    def _jacobian(self, ts: PETSc.TS, t: float, X: PETSc.Vec, Xdot: PETSc.Vec, shift: float,
                  J: PETSc.Mat, P: PETSc.Mat) -> None:
        s = self.system
        self.shift = shift
        self.der = s.derivatives(t, shift, self.work[0])
        if self.ham is not None:
            self.ham.correct(t, shift, self.der, self.pi0)
        if not s.parts:
            return
        self.S, self.rec = s.elastic_block(
            t, shift, self.S, None if self.ham is None else self.ham.elastic_states())
        self.ksp.setOperators(self.S)
        if self._ready:
            factorize(self.ksp, options=self.opts)  # a failure: the step's solve reports it
        else:
            self.opts.set_up(self.ksp)
            self._ready = True

    # -- the step's linear solve --------------------------------------------------------------
    def _S_solve(self, b: PETSc.Vec, x: PETSc.Vec) -> bool:
        if b.norm(PETSc.NormType.NORM_INFINITY) == 0.0:
            # a frame unknown the elastic rows do not see (a hinge's angle without gravity)
            x.zeroEntries()
            return True
        self.ksp.solve(b, x)
        return bool(self.ksp.getConvergedReason() > 0)

    def _S_solve_columns(self, B: list) -> bool:
        """X = S^-1 [B_0 ... B_m-1] into :attr:`_Xa` (local rows by columns): on several
        ranks with the elastic block factored and more than two columns (a free frame's 13
        in 3D), one solve with the m right-hand sides (one exchange instead of m: a free
        body in Hamilton's form, 60 dofs on 2 ranks, 2.6 s where it was 3.8); a solve per
        column otherwise: iterative solvers; a hinge's two columns (the block solve was 8 %
        slower on 2 ranks, the hub-beam of ``bench/coupled.py``); and one rank, where it
        saved little and MUMPS's next numeric factorizations after it took longer (1.10 s
        against 0.84 s for 23 of them: the free box of ``bench/commits.py --free`` at 1e4
        dofs, second-order). False when a solve failed (a non-finite block solve shows in
        the Schur complement, on every rank).

        Args:
            B: the border columns (reduced vectors).

        Returns:
            Whether every solve succeeded.
        """
        m, n = len(B), self.work[0].getLocalSize()
        if not m:
            self._Xa = np.zeros((n, 0))
            return True
        if self.comm.size == 1 or m <= 2 or self.ksp.getPC().getType() not in (
                PETSc.PC.Type.LU, PETSc.PC.Type.CHOLESKY):
            self._Xa = np.empty((n, m))
            x = self.work[6]
            for j, b in enumerate(B):
                if not self._S_solve(b, x):
                    return False
                self._Xa[:, j] = x.getArray(readonly=True)
            return True
        if self._Bm is None or self._Bm.getSize()[1] != m:
            for M in (self._Bm, self._Xm):
                if M is not None:
                    M.destroy()
            N = self.work[0].getSize()
            self._Bm = PETSc.Mat().createDense(((n, N), (PETSc.DECIDE, m)), comm=self.comm)
            self._Bm.setUp()
            self._Xm = self._Bm.duplicate()
        Ba = self._Bm.getDenseArray()
        for j, b in enumerate(B):
            Ba[:, j] = b.getArray(readonly=True)
        self._Bm.assemble()
        assert self._Xm is not None  # (made with _Bm)
        compat.mat_solve(self.ksp, self._Bm, self._Xm)
        self._Xa = self._Xm.getDenseArray(readonly=True)
        return True

    def linearize(self) -> bool:
        """Prepare the bordered solve for the Jacobian of the last :meth:`_jacobian` call: the
        columns X_j = S^-1 B_j and the Schur complement on the frames' unknowns (its LU);
        False when a solve failed or that complement is singular."""
        d, m = self.der, self.m
        assert d is not None  # (formed by the last _jacobian)
        if self.system.parts:
            # the kinematic rows' border H (joints at nodes): dv = s dq + H df - r_q, so the
            # elastic rows see B + (C + s M) H and the frames' rows D + Cv . H
            self._HB = []
            if d.H is not None:
                rec, sft, tmp = self.rec, self.shift, self.work[5]
                assert rec is not None  # (the elastic block's, formed with d)
                for j in range(m):
                    if d.H[j].norm(PETSc.NormType.NORM_INFINITY) == 0.0:
                        self._HB.append(None)
                        continue
                    rec.C.multAdd(d.H[j], d.B[j], d.B[j])
                    rec.M.mult(d.H[j], tmp)
                    d.B[j].axpy(sft, tmp)
                    if self.ham is not None:
                        # Hamilton's elastic rows: their column of the rates is C + s M less
                        # M omega x (as on the right-hand side, solve_bordered)
                        self.ham.correct_rates(d.H[j], d.B[j])
                    self._HB.append(d.H[j])
                loc = np.array([[d.Cv[i].getArray(readonly=True) @ d.H[j].getArray(readonly=True)
                                 for j in range(m)] for i in range(m)]).reshape(m, m)
                d.D += self.comm.allreduce(loc)
            if not self._S_solve_columns(d.B):
                return False
            Ca = np.array([c.getArray(readonly=True) for c in d.C]).reshape(m, len(self._Xa))
            Sig = d.D - self.comm.allreduce(Ca @ self._Xa)
        else:
            Sig = d.D
        try:
            self._lu = scipy.linalg.lu_factor(Sig, check_finite=True)
        except (ValueError, np.linalg.LinAlgError):
            return False
        return bool(np.all(np.isfinite(self._lu[0])) and np.all(np.diag(self._lu[0]) != 0.0))

    def solve_bordered(self, F: PETSc.Vec) -> PETSc.Vec | None:
        """Solve dx = J^-1 F for the Jacobian of the last :meth:`linearize`.

        Args:
            F: the residual.

        Returns:
            dx (a vector kept by the problem), or None where the bordered solve failed.
        """
        d, rec, sft = self.der, self.rec, self.shift
        m = self.m
        rq, rv, rf = self.split(F)
        if not self.system.parts:  # rigid bodies only: the frames' block alone
            self.restore(F, rq, rv)
            df = scipy.linalg.lu_solve(self._lu, rf, check_finite=False)
            return self.join(self.work[3], self.work[4], df, self.dx)
        assert d is not None and rec is not None  # (formed by the last _jacobian)
        g1, tmp, y1 = self.work[1], self.work[2], self.work[3]
        rv.copy(g1)
        rec.C.multAdd(rq, g1, g1)
        rec.M.mult(rq, tmp)
        g1.axpy(sft, tmp)
        if self.ham is not None:
            self.ham.correct_rates(rq, g1)
        ok = self._S_solve(g1, y1)
        if not ok:
            self.restore(F, rq, rv)
            return None
        rqa, y1a = rq.getArray(readonly=True), y1.getArray(readonly=True)
        loc = np.array([d.Cv[i].getArray(readonly=True) @ rqa - d.C[i].getArray(readonly=True)
                        @ y1a for i in range(m)])
        g2 = rf + self._summed(loc)
        df = scipy.linalg.lu_solve(self._lu, g2, check_finite=False) if m else np.zeros(0)
        dq = y1
        if m:
            dq.getArray()[:] -= self._Xa @ df
        dv = self.work[4]
        dq.copy(dv)
        dv.scale(sft)
        dv.axpy(-1.0, rq)
        for j, Hj in enumerate(getattr(self, "_HB", ())):
            if Hj is not None and df[j] != 0.0:
                dv.axpy(float(df[j]), Hj)
        self.restore(F, rq, rv)
        return self.join(dq, dv, df, self.dx)

    def block_norms(self, dx: PETSc.Vec) -> tuple:
        """The norms of the update's blocks: elastic coordinates, their rates, each frame
        unknown (replicated; one reduction: the frame unknowns are rank 0's).

        Args:
            dx: the update (a TS vector).

        Returns:
            The blocks' norms.
        """
        n = self.n_local
        da = dx.getArray(readonly=True)
        loc = np.zeros(2 + self.m)
        loc[0], loc[1] = da[:n] @ da[:n], da[n:2 * n] @ da[n:2 * n]
        if self.owner:
            loc[2:] = np.abs(da[2 * n:])
        glob = self._summed(loc)
        return (math.sqrt(glob[0]), math.sqrt(glob[1])) + tuple(glob[2:])

    def _summed(self, loc: np.ndarray) -> np.ndarray:
        """``loc`` summed over the ranks (a buffer reduction, no pickling)."""
        if self.comm.size == 1:
            return loc
        out = np.empty_like(loc)
        self.comm.Allreduce(loc, out)
        return out

    # -- state -----------------------------------------------------------------------------
    def initial_state(self, q0: PETSc.Vec, v0: PETSc.Vec, f0: np.ndarray) -> PETSc.Vec:
        """The TS's initial vector.

        Args:
            q0: the elastic coordinates.
            v0: their rates.
            f0: the frame unknowns.

        Returns:
            The vector set as the TS's solution.
        """
        X = self.F.duplicate()
        self.join(q0, v0, f0, X)
        return X

    def state(self, X: PETSc.Vec) -> tuple:
        """(q, v, f) copies of a TS vector.

        Args:
            X: a TS vector.

        Returns:
            (q, v, f), copies.
        """
        q, v, f = self.split(X)
        qc, vc = q.copy(), v.copy()
        self.restore(X, q, v)
        return qc, vc, f

    def destroy(self) -> None:
        """Release the PETSc objects (collective)."""
        self.ts.getSNES().setPythonContext(None)
        extra = [self.X0]
        if self.ham is not None:
            self.ham.destroy()
            extra += [self.p0, self.ksp_mass]
        for o in [self.ksp, self.J, self.F, self.F_work, self.dx, self.is_q, self.is_v,
                  self.S, self._Bm, self._Xm] + self.work + extra:
            if o is not None:
                o.destroy()
