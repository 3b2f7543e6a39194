"""Time integration of the Maggi-reduced equations of motion with PETSc TS.

Three formulations (``docs/theory.md`` sections 2 and 4), each on a typed system
(:meth:`dolfinx_mbs.Model.system`, :mod:`dolfinx_mbs.systems`; q the independent coordinates);
their residuals and Jacobians are in :mod:`dolfinx_mbs.integrate.ts.second_order` and
:mod:`dolfinx_mbs.integrate.ts.first_order`, and what a run records
(energies, probes, reactions, CSV, field files, progress) are observers
(:mod:`dolfinx_mbs.integrate.observers`):

* ``"second-order"``: M q'' + C q' + K q = f, as an I2 function; TSALPHA2 (generalized-alpha)
  by default, spectral radius settable.
* ``"first-order"``: y = (q, v): q' - v = 0, M v' + C v + K q = f, for any implicit TS
  (default TSTHETA, theta = 1/2 with endpoint: Crank-Nicolson). With velocity constraints
  (:meth:`dolfinx_mbs.Model.constrain_velocity`) y = (q, w), w the independent velocities:
  q' - A_n w - a_n = 0, M_w w' + C_w w + K_w q = f_w (:mod:`dolfinx_mbs.systems.velocity`); the
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
go through their exact Schur complement on n unknowns (PCFIELDSPLIT, the eliminated block being
a I). With ``-mbs_pc_type gamg`` the second-order Jacobian, or the 2n forms' Schur complement
(then solved by GMRES, :mod:`dolfinx_mbs.integrate.step_solvers`), carries the bodies' rigid-body modes
as GAMG's near null space. For constraints that fix whole nodes the
second-order residual uses the node-block form of the inertia terms
(:func:`dolfinx_mbs.integrate.ts.second_order.second_order_residual`): two matrix products instead of
three.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Dict, Optional, Sequence

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.choice import choose
from dolfinx_mbs.integrate.dense import run as dense_run
from dolfinx_mbs.integrate.dense.exact import LoadBasis
from dolfinx_mbs.integrate.schemes import step_times
from dolfinx_mbs.integrate.sparse import alpha2 as linear_run
from dolfinx_mbs.integrate.sparse.midpoint import SparseMidpoint
from dolfinx_mbs.integrate.stability import MODES as STABILITY
from dolfinx_mbs.integrate.stability import Stability
from dolfinx_mbs.integrate.step_solvers import (
    attach_near_nullspace,
    multigrid,
    run_options,
    small_lu,
)
from dolfinx_mbs.integrate.ts.first_order import FirstOrderForm, HamiltonForm, VelocityForm
from dolfinx_mbs.integrate.ts.second_order import Form, SecondOrderForm
from dolfinx_mbs.petsc_options import SolverOptions, error_words, reason_name, solver_reasons

__all__ = ["integrate", "Result", "FORMULATIONS"]

log = logging.getLogger(__name__)

#: the formulations a run takes (``integrate(..., formulation=)``)
FORMULATIONS = ("second-order", "first-order", "hamiltonian")
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
        restarted_from: for a run with ``restart=True``, the checkpoint's time: the arrays
            then hold the history from that time on (its row first); the whole history is in
            ``<output>.csv``. None for a run from ``t0``.
        instabilities: the divergent states the run met
            (:class:`dolfinx_mbs.integrate.stability.Instability`: time, count, growth rate, where).
        stepper: the path that stepped: ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"``
            (``ts_type`` is then the scheme's TS name, or ``"expm"``).
        frames: with computed frames, {name: history} of each one's coordinates, speeds and
            applied torque (:class:`dolfinx_mbs.integrate.coupled.FrameHistory`).
        momentum: with computed frames, ``linear`` and ``angular`` (about the global
            origin) momentum, (n_steps + 1, 3), global components.
        joints: with joints between computed frames and motors, {name: history} of each one's
            ``force`` (on its second body, global components) or ``torque`` (a motor's) and
            ``drift`` (the largest of its position rows at each time).
    """

    times: np.ndarray
    probes: np.ndarray
    energy: Dict[str, np.ndarray]
    formulation: str
    ts_type: str
    steps: int
    reactions: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    restarted_from: Optional[float] = None
    instabilities: list = dataclasses.field(default_factory=list)
    stepper: str = "ts"
    frames: dict = dataclasses.field(default_factory=dict)
    momentum: dict = dataclasses.field(default_factory=dict)
    joints: dict = dataclasses.field(default_factory=dict)


def integrate(system, t_end: float, dt: float, formulation: str = "second-order",
              t0: float = 0.0, u0=None, v0=None, p0=None, probes: Sequence = (),
              output: Optional[str] = None, output_every: int = 1,
              spectral_radius: Optional[float] = None,
              progress: bool = True, options: Optional[Dict[str, object]] = None,
              prefix: str = "mbs_", reactions=False,
              energy: bool = True, callback=None, checkpoint_every: Optional[int] = None,
              restart: bool = False, stability: str = "warn", stepper: str = "auto",
              load_degree: int = 2, load_frequencies: Sequence[float] = (),
              drives=None) -> Result:
    """Integrate ``system`` from ``t0`` to ``t_end``.

    Args:
        system: the typed system of ``formulation`` (``model.system(formulation,
            constraints)``; :meth:`dolfinx_mbs.Model.integrate` makes it).
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
        reactions: True (every constraint) or a list of constraints whose resultant forces
            are recorded at every step (``Result.reactions``, also in the CSV).
        energy: record the energies (2-3 mat-vecs a step, shared with the residual); False leaves
            ``Result.energy`` empty.
        callback: ``callback(t, u, v)``, called at every output time with the full
            displacement and velocity (PETSc Vecs in the full layout, valid during the call),
            collectively on every rank.
        checkpoint_every: write the state needed to continue every this many steps, and at
            the end, into ``<output>.ckpt`` (:mod:`dolfinx_mbs.integrate.checkpoint`); needs ``output``.
        restart: continue from the last checkpoint of ``output`` (same ranks, model and
            formulation; ``t0``, ``u0``, ``v0``, ``p0`` come from it and ``dt`` is its next
            step): the CSV and field files keep their rows up to the checkpoint's time and
            get the new ones appended; the result holds the history from the checkpoint on.
        stability: ``"warn"`` (default), ``"error"`` or ``"off"``: the frames' state is
            checked for divergence at the first step and whenever it changed (every tenth
            step or less often, at most about 50 checks a run; one factorization of the
            stiffness each, or, when the step solver is multigrid (``pc_type gamg``), the
            lowest eigenvalues by LOBPCG preconditioned with GAMG instead,
            :mod:`dolfinx_mbs.integrate.stability`); an unstable state gives an
            :class:`~dolfinx_mbs.integrate.stability.InstabilityWarning` (or raises
            :class:`~dolfinx_mbs.integrate.stability.InstabilityError`) naming the time, the growth
            rate and where the mode moves most, listed in ``Result.instabilities``.
        stepper: ``"ts"``: PETSc TS; ``"dense"``: the same schemes on the operators gathered
            densely on every rank (:mod:`dolfinx_mbs.integrate.dense.run`: TS's steps to round-off;
            linear systems, no multipliers, velocity rows or checkpoints); ``"exact"``: a
            constant frame state's exact solution at the steps (matrix exponential), whatever
            ``dt``; ``"linear"``: the TS path's steps (TSALPHA2, or Hamilton's implicit
            midpoint) on the sparse operators of a constant frame state without TS
            (:mod:`dolfinx_mbs.integrate.sparse.alpha2`, :mod:`dolfinx_mbs.integrate.sparse.midpoint`: one
            factorization, one pass over the mass a step; second-order and hamiltonian
            forms, no reactions or checkpoints; its step solver reads the ``ksp_``, ``pc_``
            and ``mat_`` options under ``prefix``, e.g. ``-mbs_pc_type gamg``); ``"auto"``:
            ``"dense"`` up to
            :data:`dolfinx_mbs.integrate.dense.operators.DENSE_MAX` unknowns (``DENSE_MAX_VARYING`` where frames
            change in time), ``"linear"`` above it where that applies, when no checkpoint and
            no PETSc option under ``prefix`` is given, or only the step solver's (then
            ``"linear"`` where it applies, whatever the size), else ``"ts"``. The log (INFO)
            says which.
        drives: a :class:`dolfinx_mbs.systems.drives.Drives` (``Model.integrate(...,
            drives=True)`` makes it): the force and torque that drive each prescribed frame,
            recorded at every step in ``Result.frames`` (``force``, ``torque``, global
            components, the torque about the frame's origin) and the CSV; on the TS path.
        load_degree, load_frequencies: the dense paths fit the loads of a constant frame
            state on polynomials of degree <= ``load_degree`` and the sines and cosines of
            these angular frequencies (rad/s): ``"exact"`` needs the fit (an error otherwise),
            ``"dense"`` assembles no load per step where it holds.

    SIGTERM and SIGINT during the run finish the step in progress, write a checkpoint (when
    ``checkpoint_every`` is given), close every file and raise SystemExit (SIGTERM) or
    KeyboardInterrupt (SIGINT) on every rank; the former handlers are restored after the run.

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
    if not isinstance(output_every, int) or output_every < 1:
        raise ValueError(f"output_every must be a positive integer, got {output_every!r}")
    if stability not in STABILITY:
        raise ValueError(f"stability must be one of {STABILITY}, got {stability!r}")
    ckpt = checkpoint.arguments(output, checkpoint_every, restart, formulation,
                                (u0, v0, p0), options, prefix)
    basis = LoadBasis(load_degree, load_frequencies)
    path = choose(system, formulation, stepper, options, prefix, reactions)
    if drives is not None and path != "ts":
        if stepper != "auto":
            raise ValueError(f"stepper={stepper!r}: the frames' drives (drives=True) are "
                             "recorded on the TS path only (stepper='ts' or 'auto')")
        path = "ts"
    if path != "ts" and (ckpt["every"] is not None or ckpt["restart"]):
        if stepper != "auto":
            raise ValueError(f"stepper={stepper!r}: checkpoints (checkpoint_every=, "
                             "restart=) are written by the TS path only (stepper='ts')")
        path = "ts"
    if formulation not in getattr(system, "formulations", ()):
        raise ValueError(f"formulation {formulation!r} does not apply to a "
                         f"{type(system).__name__} (it takes {system.formulations})")
    oargs = _observers_args(probes, output, output_every, progress, reactions, energy,
                            callback, stability)
    oargs["drives"] = drives
    oargs["multigrid"] = multigrid(SolverOptions(prefix, {}, options))
    if path == "linear":
        times, watch, scheme, steps = linear_run.run(
            system, t0, step_times(t0, t_end, dt), (u0, v0, p0), spectral_radius,
            lambda label, n: _observers(system, label, n, oargs), prefix, options,
            SparseMidpoint if formulation == "hamiltonian" else linear_run.SparseAlpha2)
        return _result(times, watch, system, formulation, scheme, steps, path)
    if path != "ts":
        times, watch, scheme, steps = dense_run.run(
            system, formulation, path, t0, t_end, dt, (u0, v0, p0), oargs,
            lambda label, n, energies, probes_: _observers(system, label, n, oargs,
                                                         energies=energies, probes=probes_),
            spectral_radius, basis)
        return _result(times, watch, system, formulation, scheme, steps, path)
    log.info("integrate: ts path (PETSc TS), %s, %d unknowns", formulation, system.n_reduced)
    kind = "multipliers" if system.has_multipliers else "maggi"
    opts = run_options(prefix, formulation, kind, options, small_lu(system, prefix, options))
    try:
        return _run(system, t_end, dt, formulation, t0, (u0, v0, p0), opts, oargs, ckpt)
    except checkpoint.Interrupted as e:
        raise e.exit() from None


FIRST, CSV_ORDER = obs.FIRST, obs.CSV_ORDER


def _observers_args(probes, output, output_every, progress, reactions, energy, callback,
                    stability):
    return dict(probes=probes, output=output, output_every=output_every, progress=progress,
                reactions=reactions, energy=energy, callback=callback, stability=stability)


def _observers(system, label, n_steps, a, resume=None, energies=None, probes=None):
    """The run's observers (:func:`dolfinx_mbs.integrate.observers.make_observers`), with the
    divergence check (not with nonlinear strain: its stiffness is the tangent about the run's
    state) and, with ``resume`` (a checkpoint), the files continued."""
    stab = None
    if a["stability"] != "off" and hasattr(system, "pencil") and not system.has_multipliers \
            and not system.nonlinear:
        stab = Stability(system, a["stability"], max(10, n_steps // 50),
                         multigrid=a.get("multigrid", False))
    return obs.make_observers(system, label, n_steps, a, resume, energies, probes, stab,
                              checkpoint.truncate_csv)


def _form(system, formulation: str, ts: PETSc.TS, opts, t0: float) -> Form:
    """The form of ``formulation`` on ``system``, set on ``ts``."""
    if hasattr(system, "basis"):
        return VelocityForm(system, ts, opts, t0)
    cls = {"second-order": SecondOrderForm, "first-order": FirstOrderForm,
           "hamiltonian": HamiltonForm}[formulation]
    return cls(system, ts, opts, t0)


def _run(system, t_end, dt, formulation, t0, initial, opts, oargs, ckpt) -> Result:
    ts = PETSc.TS().create(system.comm)
    ts.setOptionsPrefix(opts.prefix)
    # not ProblemType.LINEAR: PETSc then keeps the first Jacobian, but the shift changes
    # (generalized-alpha restarts with half a step) and so do frame-dependent operators
    ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
    form = _form(system, formulation, ts, opts, t0)
    try:
        u0, v0, p0 = initial
        q0, v0 = form.initial(u0, "u0"), form.initial(v0, "v0")
        p0 = None if p0 is None else form.initial(p0, "p0")
        ts.setTime(t0)
        ts.setTimeStep(dt)
        ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
        n_steps = int(round((t_end - t0) / dt))
        ts.setMaxTime(t_end)
        ts.setMaxSteps(10 * n_steps + 10)
        opts.set_from_options(ts)
        attach_near_nullspace(system, form, formulation, ts)  # rigid-body modes for GAMG
        x0 = form.initial_state(t0, q0, v0, p0)
        resume = None
        if ckpt["restart"]:
            resume = checkpoint.load(system.comm, oargs["output"], formulation)
            checkpoint.resume_ts(ts, _solution_vecs(form), resume, oargs["output"], t_end)
            n_steps = int(round((t_end - resume.t) / resume.dt))
            ts.setMaxSteps(resume.index + 10 * n_steps + 10)
        writer = None if ckpt["every"] is None else checkpoint.Writer(
            system.comm, oargs["output"], ckpt["every"], formulation,
            t0 if resume is None else resume.t0)
        watch = _observers(system, f"{formulation} ({ts.getType()})", n_steps, oargs, resume)
    except BaseException:
        form.destroy()
        raise
    need_v = any(o.needs_velocity for o in watch.values())
    full = system.space.create_vec()
    funcs = [b.u for b in system.bodies]
    times = []

    def monitor(ts_, index, t, X):
        # a restart's first state is the checkpoint's: its row and fields are in the files
        again = resume is not None and index == resume.index
        q, v = form.state(t, need_v=need_v)
        step = obs.Step(index=index, t=t, q=q, v=v, u=full, form=form,
                        Mv=form.mass_velocity if need_v else None)
        values = {k: watch[k].observe(step) for k in FIRST if k in watch}
        system.expand(q, out=full)  # the bodies' u at t: what the observers below read
        system.space.scatter(full, funcs)
        for name, o in watch.items():
            if name == "csv":
                if not again:
                    o.write(t, [x for k in CSV_ORDER for x in values.get(k, ())])
            elif name not in FIRST and not (again and name == "fields"):
                values[name] = o.observe(step)
        times.append(t)
        stop = signals.requested()
        if writer is not None and not again and (writer.due(index) or stop):
            _write_checkpoint(writer, ts_, form, watch)
        if stop:
            raise checkpoint.Interrupted(stop, t, writer and writer.last)

    ts.setMonitor(monitor)
    signals = checkpoint.Signals(system.comm)
    try:
        with signals:
            ts.solve(x0)
        if writer is not None and ts.getStepNumber() % writer.every:  # the final state
            _write_checkpoint(writer, ts, form, watch)
    except (PETSc.Error, FloatingPointError) as e:
        user = e.__cause__
        if user is not None and not isinstance(user, (PETSc.Error, FloatingPointError)):
            # an error raised in a callback (the user's load or motion function, a check):
            # petsc4py passes it on as the cause of error 101; raise it as it was
            # without the frames it came through (they hold this run's PETSc objects, whose
            # destruction below is collective); checks.collective notes the original traceback
            user.__context__ = user.__cause__ = None
            raise user.with_traceback(None) from None
        # PETSc >= 3.19 raises out of TSSolve where 3.18 returned a reason: name the solvers'
        # reasons either way
        msg = watch["finite"].failure or f"{error_words(e)} ({solver_reasons(ts)})"
        raise RuntimeError(f"time integration failed ({formulation}, {ts.getType()}) at "
                           f"t={ts.getTime():g}: {msg}") from None
    finally:
        for o in watch.values():
            o.close()
        reason, t_fail = ts.getConvergedReason(), ts.getTime()
        ts_type, steps = ts.getType(), ts.getStepNumber()
        # the TS holds the monitor, which holds this run's histories: break the cycle
        ts.cancelMonitor()
        form.destroy()
        full.destroy()
    if reason < 0:
        raise RuntimeError(f"time integration diverged at t={t_fail:g}: TS "
                           f"{reason_name(PETSc.TS.ConvergedReason, reason)}")
    return _result(times, watch, system, formulation, ts_type, steps, "ts",
                   None if resume is None else resume.t)


def _result(times, watch, system, formulation, ts_type, steps, stepper,
            restarted_from=None) -> Result:
    pr = watch.get("probes")
    dim = pr.probes.dim if pr else system.bodies[0].gdim
    probes_arr = np.array(pr.values) if pr and pr.values else np.zeros((len(times), 0, dim))
    energy = watch["energy"].history if "energy" in watch else {}
    rhist = watch["reactions"].history if "reactions" in watch else {}
    frames = {}
    if "drives" in watch:
        from dolfinx_mbs.integrate.coupled import FrameHistory
        frames = {k: FrameHistory(v) for k, v in watch["drives"].history.items()}
    return Result(times=np.array(times), probes=probes_arr,
                  energy={k: np.array(v) for k, v in energy.items()},
                  formulation=formulation, ts_type=ts_type, steps=steps,
                  reactions={k: np.array(v) for k, v in rhist.items()}, frames=frames,
                  restarted_from=restarted_from,
                  instabilities=watch["stability"].found if "stability" in watch else [],
                  stepper=stepper)


def _solution_vecs(form) -> list:
    """The TS's solution vectors of ``form``: (U, V) for the second-order form, X else."""
    if isinstance(form, SecondOrderForm):
        return list(form.ts.getSolution2())
    return [form.ts.getSolution()]


def _write_checkpoint(writer, ts, form, watch) -> None:
    acc = {"energy": watch["energy"].accumulators()} if "energy" in watch else {}
    writer.write(ts.getStepNumber(), ts.getTime(), ts.getTimeStep(), _solution_vecs(form), {},
                 acc)
