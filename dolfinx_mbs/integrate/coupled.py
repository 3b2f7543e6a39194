"""A run of a model with computed frames: PETSc TS on the coupled equations, and its records.

    r = model.integrate(t_end=2.0, dt=1e-3)          # a model with a Hinge, Free, RigidBody...
    r.frames["hub"].angle, r.frames["hub"].rate      # arrays over r.times
    r.energy["total"], r.momentum["angular"]

The run's callbacks and Newton solver are :class:`~dolfinx_mbs.integrate.ts.coupled.
CoupledProblem`; this module sets the TS up, records at every step (the frames' outputs,
probes, energies and momenta, the applied frame loads, a CSV row written as it comes) and turns
PETSc's failures into errors that say where.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate.motion_range import RotationRange, checked
from dolfinx_mbs.integrate.observers import FrameHistory
from dolfinx_mbs.integrate.step_solvers import option
from dolfinx_mbs.integrate.ts.coupled import CoupledProblem
from dolfinx_mbs.integrate.ts.stepper import end_at
from dolfinx_mbs.io.output import MotionWriter, Probes, TimeSeriesWriter, probe_columns
from dolfinx_mbs.petsc_options import SolverOptions, error_words, solver_reasons
from dolfinx_mbs.systems.coupled import CoupledSystem, FrameView, monitors

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.driver import Result

__all__ = ["FrameHistory", "integrate_coupled"]

log = logging.getLogger(__name__)


def _loads_moment(system: CoupledSystem, t: float, f: np.ndarray) -> list:
    """The applied loads' moment about each computed frame's origin (local components; about
    a hinge's axis for a hinge)."""
    out = []
    for i, (fr, zs, ws) in enumerate(zip(system.frames, system.zslice, system.wslice)):
        st = fr.state_at(t, f[zs], f[ws])
        view = FrameView(fr, f[zs], f[ws], st)
        M = np.zeros(3)
        with checks.collective(system.comm, f"the loads on frame {fr.name!r} at t={t:g}"):
            for ld in system.loads_on[i]:
                M += ld.evaluate(t, view, st)[1]
        axis = getattr(fr, "axis", None)
        out.append(float(M @ axis) if axis is not None else M)
    return out


def integrate_coupled(system: CoupledSystem, t_end: float, dt: float,
                      formulation: str | None = None, t0: float = 0.0, u0: Any = None,
                      v0: Any = None, probes: Sequence = (), output: str | None = None,
                      spectral_radius: float | None = None, progress: bool = True,
                      options: dict | None = None, prefix: str = "mbs_", energy: bool = True,
                      callback: Callable[[float, dict], object] | None = None,
                      output_every: int = 1, checkpoint_every: int | None = None,
                      restart: bool = False) -> Result:
    """Integrate a coupled system from ``t0`` to ``t_end`` with steps ``dt``.

    Args:
        system: the :class:`~dolfinx_mbs.systems.coupled.CoupledSystem`.
        t_end: final time (s).
        dt: the step (s).
        formulation: ``"second-order"`` (generalized-alpha) or ``"first-order"`` (BDF2),
            both second order in dt (:mod:`dolfinx_mbs.integrate.ts.coupled`); the TS type
            may be changed by options. None: ``"first-order"`` with joints or driven motors
            (BDF2 solves their rows at the step's end, so the joints stay closed to round-off;
            generalized-alpha solves them at its intermediate time and the step's end misses
            them by O(dt^2), see ``Result.joints[name].drift``), else ``"second-order"``.
            ``"hamiltonian"``: the implicit midpoint rule on Hamilton's form (momenta of the
            elastic bodies and the frames, :mod:`dolfinx_mbs.systems.coupled_hamilton`):
            where no load acts, the momenta at the steps' midpoints (``Result.midpoints``)
            and at their ends (the step ends' velocities are those of the momenta carried)
            keep a free frame's linear and angular momentum (global) to round-off; Newton's
            method with the exact Jacobian; no joints, springs or motors yet, Hinge and Free
            frames. Its checkpoints hold the state alone: the momenta carried are the step
            end's velocities' (to round-off), and the run takes them from the state at each
            checkpoint as a restart does.
        t0: initial time (s).
        u0: initial elastic displacement (None: zero; a PETSc Vec in the reduced or full
            layout, or a Function per body).
        v0: initial elastic velocity (as ``u0``).
        probes: points of the first body, or (body, point) pairs (body coordinates).
        output: file stem: ``<output>.csv`` gets a row per step as it is computed, and
            ``<output>_<body>.bp`` (``.xdmf`` on DOLFINx 0.5) each elastic body's displacement
            ``u`` (frame components) and its global ``motion`` every ``output_every`` steps
            (:class:`~dolfinx_mbs.io.MotionWriter`).
        spectral_radius: generalized-alpha's high-frequency spectral radius in [0, 1].
        progress: a progress bar on rank 0 (tqdm, when installed).
        options: PETSc options for the run (without the prefix).
        prefix: the TS's options prefix.
        energy: record energies and momenta.
        callback: ``callback(t, frames)`` at every step (``frames``: the frames' outputs).
        output_every: the steps between two field outputs (with ``output``).
        checkpoint_every: write the state needed to continue every this many steps, and at
            the end, into ``<output>.ckpt`` (:mod:`dolfinx_mbs.integrate.checkpoint`): the
            elastic coordinates and rates as a run of prescribed frames writes them, the frame
            unknowns (the frames' coordinates and speeds, the joints' multipliers) and the
            loads' work in ``latest.json``; needs ``output``. At each checkpoint the scheme
            starts again from the state (BDF2 with half a step of backward Euler,
            generalized-alpha with its estimate of the rates) as a restart from it does.
        restart: continue from the last checkpoint of ``output`` (same model and formulation;
            ``t0``, ``u0``, ``v0`` come from it and ``dt`` is its next step), on the ranks that
            wrote it or on another number of ranks (the elastic unknowns redistributed by
            name, not under DOLFINx 0.5); generalized-alpha only at spectral radius 1: the
            CSV and field files keep their rows up to the checkpoint's time and get the new
            ones appended; the result's histories start at the checkpoint
            (``Result.restarted_from``).

    SIGTERM and SIGINT during the run finish the step in progress, write a checkpoint (with
    ``checkpoint_every``), close every file and raise SystemExit (SIGTERM) or
    KeyboardInterrupt (SIGINT) on every rank.

    Returns:
        A :class:`~dolfinx_mbs.integrate.Result` with ``frames`` ({name:
        :class:`FrameHistory`}) and, with ``energy``, ``energy`` (``kinetic``, ``elastic``,
        ``gravity``, ``total``, ``work``: the applied frame loads' work) and ``momentum``
        (``linear``, ``angular``: (n, 3), global components); ``rotation``: each elastic
        body's largest rotation relative to its frame (rad), with a
        :class:`~dolfinx_mbs.integrate.motion_range.SmallDisplacementWarning` past 0.1 rad for
        a body of linear strain (:mod:`dolfinx_mbs.integrate.motion_range`).

    Raises:
        ValueError: bad arguments, or a checkpoint of another model (on every rank).
        FileNotFoundError: ``restart`` without a checkpoint (on every rank).
        RuntimeError: a step failed (the time and Newton's reason are named).
    """
    try:
        return _integrate(system, t_end, dt, formulation, t0, u0, v0, probes, output,
                          spectral_radius, progress, options, prefix, energy, callback,
                          output_every, checkpoint_every, restart)
    except checkpoint.Interrupted as e:
        raise e.exit() from None


def _extra(system: CoupledSystem, f: np.ndarray) -> dict:
    """What a checkpoint of a coupled run holds beside the elastic state: the frame unknowns
    and what they must fit."""
    return {"kind": "coupled", "frames": [fr.name for fr in system.frames], "m": int(system.m),
            "n_reduced": int(system.n_reduced), "f": [float(x) for x in f]}


def _frame_unknowns(system: CoupledSystem, ckpt: checkpoint.Checkpoint, stem: str) -> np.ndarray:
    """The checkpoint's frame unknowns, after checking it is one of this model (collective:
    the same answer on every rank)."""
    extra = ckpt.meta.get("extra")
    mine = _extra(system, np.zeros(system.m))
    bad = None
    if not isinstance(extra, dict) or extra.get("kind") != "coupled":
        bad = "it was not written by a run with computed frames"
    else:
        for key, what in (("frames", "computed frames"), ("m", "frame unknowns"),
                          ("n_reduced", "elastic reduced unknowns")):
            if extra.get(key) != mine[key]:
                bad = (f"it holds {extra.get(key)} {what}, this model has {mine[key]} "
                       "(another model)")
                break
    checks.raise_everywhere(system.comm, bad and f"restart from {stem!r}: {bad}")
    return np.array(extra["f"], dtype=float)


def _integrate(system: CoupledSystem, t_end: float, dt: float, formulation: str | None,
               t0: float, u0: Any, v0: Any, probes: Sequence, output: str | None,
               spectral_radius: float | None, progress: bool, options: dict | None,
               prefix: str, energy: bool, callback: Callable[[float, dict], object] | None,
               output_every: int, checkpoint_every: int | None, restart: bool) -> Result:
    """:func:`integrate_coupled` (its arguments) but for the end of a run stopped by a signal,
    which it raises as :class:`~dolfinx_mbs.integrate.checkpoint.Interrupted`."""
    from dolfinx_mbs.integrate.driver import Result
    from dolfinx_mbs.integrate.initial import reduced_initial

    t_end, dt, t0 = (checks.real(v, n) for n, v in (("t_end", t_end), ("dt", dt), ("t0", t0)))
    if dt <= 0.0:
        raise ValueError(f"dt must be positive, got {dt!r}")
    if t_end <= t0:
        raise ValueError(f"t_end must exceed t0 ({t0}), got {t_end!r}")
    if formulation is None:
        formulation = "first-order" if system.jointset.n_rows else "second-order"
    if formulation not in CoupledSystem.formulations:
        raise ValueError(f"formulation must be one of {CoupledSystem.formulations} for a model "
                         f"with computed frames, got {formulation!r}")
    if formulation == "hamiltonian" and spectral_radius not in (None, 1.0):
        raise ValueError("spectral_radius: formulation 'hamiltonian' steps by the implicit "
                         f"midpoint rule (radius 1), got {spectral_radius!r}")
    if spectral_radius is not None and not 0.0 <= spectral_radius <= 1.0:
        raise ValueError(f"spectral_radius must lie in [0, 1], got {spectral_radius!r}")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable (t, frames) or None, got {callback!r}")
    if not isinstance(output_every, (int, np.integer)) or output_every < 1:
        raise ValueError(f"output_every must be a positive integer, got {output_every!r}")
    ckpt = checkpoint.arguments(output, checkpoint_every, restart, formulation,
                                (u0, v0, None), options, prefix)
    if ckpt["restart"] and formulation == "second-order" and spectral_radius not in (None, 1.0):
        raise ValueError(f"restart=True: generalized-alpha with spectral_radius="
                         f"{spectral_radius!r} keeps a rate the checkpoint does not hold; only "
                         "spectral radius 1 (the default) restarts exactly")
    comm = system.comm
    # fixed steps unless the options say otherwise (TSBDF would adapt its step by default)
    opts = SolverOptions(prefix, {"ts_adapt_type": "none"}, options)
    ts = PETSc.TS().create(comm)
    ts.setOptionsPrefix(prefix)
    ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
    prob = CoupledProblem(system, ts, opts, formulation, spectral_radius)
    files: list = []
    resume = writer = None
    try:
        if ckpt["restart"]:
            resume = checkpoint.load(comm, output, formulation,
                                     system if system.parts else None, files=bool(system.parts))
            f_start = _frame_unknowns(system, resume, output)
            q0, v0v = system.create_reduced_vec(), system.create_reduced_vec()
        else:
            q0 = reduced_initial(system, u0, "u0") if system.parts else \
                system.create_reduced_vec()
            v0v = reduced_initial(system, v0, "v0") if system.parts else \
                system.create_reduced_vec()
            f_start = system.initial_unknowns(q0, v0v, t0)
        ts.setTime(t0)
        ts.setTimeStep(dt)
        n_steps = int(round((t_end - t0) / dt))
        # fixed steps: whole steps where they end at t_end, so that a run to a checkpoint and
        # a longer run take the same steps up to it
        fixed = option(opts, "ts_adapt_type") == "none"
        if fixed:
            end_at(ts, t0, t_end, dt)
        else:
            ts.setExactFinalTime(PETSc.TS.ExactFinalTime.MATCHSTEP)
            ts.setMaxTime(t_end)
        ts.setMaxSteps(10 * n_steps + 10)
        opts.set_from_options(ts)
        if resume is not None:
            checkpoint.resume_ts(ts, [q0, v0v] if system.parts else [], resume, output, t_end,
                                 checkpoint.ONE_STEP + checkpoint.RESTARTED)
            if fixed:  # the whole steps from the run's own start
                end_at(ts, resume.t0, t_end, dt)
            n_steps = int(round((t_end - resume.t) / resume.dt))
            ts.setMaxSteps(resume.index + 10 * n_steps + 10)
        elif ckpt["every"] is not None:
            # the type a restart would take (options may change it): refused before any step
            checkpoint.check_type(ts, output, checkpoint.ONE_STEP + checkpoint.RESTARTED,
                                  "checkpoints of")
        X0 = prob.initial_state(q0, v0v, f_start)
        prob.start(ts.getTime(), X0)   # Hamilton's form: the momenta of the (first) state
        pr = Probes(system.bodies, probes) if probes else None
        names = [fr.name for fr in system.frames]
        cols = [f"{n}.{k}" for fr, n in zip(system.frames, names)
                for k, val in fr.describe(*fr.initial()).items() if np.ndim(val) == 0]
        if pr is not None:
            cols += probe_columns(pr.n, pr.dim)
        ecols = ["kinetic", "elastic", "gravity", "total", "work"] if energy else []
        keep = None if resume is None else resume.t
        if keep is not None:
            checkpoint.truncate_csv(comm, output + ".csv", keep, ["t"] + cols + ecols)
        csv = TimeSeriesWriter(output + ".csv", ["t"] + cols + ecols, comm,
                               append=keep is not None) if output else None
        if csv is not None:
            files.append(csv)
        fields = MotionWriter(system.bodies, output, keep) if output and system.parts \
            else None
        if fields is not None:
            files.append(fields)
        if ckpt["every"] is not None:
            writer = checkpoint.Writer(comm, output, ckpt["every"], formulation,
                                       t0 if resume is None else resume.t0,
                                       system if system.parts else None)
        bar = None
        if progress and comm.rank == 0:
            try:
                from tqdm import tqdm
                bar = tqdm(total=n_steps, desc="coupled", leave=False)
            except ImportError:
                bar = None
    except BaseException:
        for fh in files:
            fh.close()
        prob.destroy()
        ts.destroy()
        raise
    # the elastic bodies' rotation relative to their frames (docs: the small-displacement range)
    rot = RotationRange(system, n_steps) if system.parts and any(
        checked(b) for b in system.bodies) else None
    times, frames_rec = [], [[] for _ in system.frames]
    joints_rec: dict = {}
    probe_rec, energy_rec, mom_rec = [], [], []
    full = system.space.create_vec() if system.parts else None
    work: dict = {"work": 0.0, "last": None}  # the loads' work, the last (t, power)
    if resume is not None and "work" in resume.accumulators:
        acc = resume.accumulators["work"]
        work = {"work": acc["work"],
                "last": None if acc["t"] is None else (acc["t"], acc["power"])}
    signals = checkpoint.Signals(comm)

    def save(index: int, t: float, dt_next: float, X: PETSc.Vec) -> None:
        q, v, f = prob.state(X)
        try:
            last = work["last"] or (None, None)
            acc = {"work": {"work": work["work"], "t": last[0], "power": last[1]}} \
                if energy else {}
            writer.write(index, t, dt_next, [q, v] if system.parts else [], {}, acc,
                         _extra(system, f))
        finally:
            q.destroy()
            v.destroy()

    def record(ts_: PETSc.TS, index: int, t: float, X: PETSc.Vec) -> None:
        # a restart's first state is the checkpoint's: its row and fields are in the files
        again = resume is not None and index == resume.index
        q, v, f = prob.state(X)
        outs = system.frame_outputs(f)
        torques = _loads_moment(system, t, f) if system.loads else [None] * len(outs)
        for i, (fr, tq) in enumerate(zip(system.frames, torques)):
            rec = dict(outs[fr.name])
            if tq is not None:
                rec["torque"] = tq
            frames_rec[i].append(rec)
        row = [float(val) for fr in system.frames for val in outs[fr.name].values()
               if np.ndim(val) == 0]
        if system.jointset.active:
            uu = uud = None
            if system.parts:
                uu = system.reducer.expand(q, out=system._full["u"])
                uud = system.reducer.expand_rate(q, v, out=system._full["ud"])
            for name, rec in system.jointset.outputs(t, f, uu, uud).items():
                if index == 0:   # the initial multipliers are a guess, not the joint's force
                    rec.update({k: np.full_like(np.asarray(v, float), np.nan)
                                for k, v in rec.items() if k in ("force", "torque")})
                joints_rec.setdefault(name, []).append(rec)
        if rot is not None and index % rot.every == 0:
            system.reducer.expand(q, out=full)
            rot.measure(full, t)
        write_fields = fields is not None and index % output_every == 0 and not again
        if pr is not None or write_fields:
            system.reducer.expand(q, out=full)
            system.space.scatter(full, [b.u for b in system.bodies])
        if write_fields:
            states = {id(fr): fr.state_at(t, f[zs], f[ws]) for fr, zs, ws in
                      zip(system.frames, system.zslice, system.wslice)}
            fields.write(t, [states[id(b.frame)] if id(b.frame) in states
                             else b.frame.state(t) for b in system.bodies])
        if pr is not None:
            vals = pr.evaluate()
            probe_rec.append(vals)
            row += list(np.asarray(vals).reshape(-1))
        if energy:
            mon = monitors(system, t, q, v, f)
            # the applied frame loads' work: trapezoidal in their power Q . w
            power = 0.0
            for i, (fr, zs, ws) in enumerate(zip(system.frames, system.zslice, system.wslice)):
                if system.loads_on[i]:   # Q . w: the generalized force times the speeds
                    jet = fr.jet(t, f[zs], f[ws], np.zeros(fr.n_speeds))
                    power += float(system.generalized_loads(t, i, f, jet) @ f[ws])
            if work["last"] is not None and not again:
                t_prev, p_prev = work["last"]
                work["work"] += 0.5 * (power + p_prev) * (t - t_prev)
                work["last"] = (t, power)
            elif work["last"] is None:
                work["last"] = (t, power)
            mon["work"] = work["work"]
            energy_rec.append(mon)
            mom_rec.append((mon["momentum"], mon["angular_momentum"]))
            row += [mon[k] for k in ecols]
            if not math.isfinite(mon["total"]):
                raise FloatingPointError(f"the solution is not finite at t={t:g}")
        if csv is not None and not again:
            csv.write([t] + row)
        if callback is not None:
            callback(t, outs)
        times.append(t)
        q.destroy()
        v.destroy()
        if bar is not None and index > 0 and not again:
            bar.update(1)
        stop = signals.requested()
        if writer is not None and not again and (writer.due(index) or stop):
            save(index, t, ts_.getTimeStep(), X)
            if not stop:  # the run goes on as a restart from the checkpoint does
                ts_.restartStep()
                # Hamilton's form: the momenta carried are those of the state's velocities
                # to round-off; taken from the state, as a restart takes them
                prob.start(t, X)
        if stop:
            raise checkpoint.Interrupted(stop, t, None if writer is None else writer.last)

    ts.setMonitor(record)
    mid_rec: list = []
    if prob.ham is not None and energy:
        # the midpoint states, whose velocities are those of the momenta p_m = (p0 + p1) / 2
        def midpoint(t: float, q: PETSc.Vec, v: PETSc.Vec, f: np.ndarray) -> None:
            mon = monitors(system, t, q, v, f)
            mid_rec.append((t, mon["momentum"], mon["angular_momentum"], mon["total"]))
        prob.midpoint_hooks.append(midpoint)
    try:
        with signals:
            ts.solve(X0)
        if writer is not None and ts.getStepNumber() % writer.every:  # the final state
            save(ts.getStepNumber(), ts.getTime(), ts.getTimeStep(), ts.getSolution())
        qf, vf, f = prob.state(ts.getSolution())
        qf.destroy()
        vf.destroy()
        for fr, zs, ws in zip(system.frames, system.zslice, system.wslice):
            fr.set_state(ts.getTime(), f[zs], f[ws])
        if system.parts:
            q, _, _ = prob.state(ts.getSolution())
            system.reducer.expand(q, out=full)
            system.space.scatter(full, [b.u for b in system.bodies])
            q.destroy()
        if rot is not None:   # the bodies' u hold the last state
            rot.report(ts.getTime())
    except (PETSc.Error, FloatingPointError) as e:
        user = e.__cause__
        while isinstance(user, PETSc.Error):  # through the SNES's own Python callback
            user = user.__cause__
        if user is not None and not isinstance(user, (PETSc.Error, FloatingPointError)):
            user.__context__ = user.__cause__ = None
            raise user.with_traceback(None) from None
        raise RuntimeError(f"time integration failed ({formulation}, {ts.getType()}) at "
                           f"t={ts.getTime():g}: {error_words(e)} ({solver_reasons(ts)})"
                           ) from None
    finally:
        for fh in files:
            fh.close()
        if bar is not None:
            bar.close()
        reason, t_fail = ts.getConvergedReason(), ts.getTime()
        ts_type, steps = ts.getType(), ts.getStepNumber()
        ts.cancelMonitor()
        prob.destroy()
        ts.destroy()
        if full is not None:
            full.destroy()
        if rot is not None:
            rot.close()
    if reason < 0:
        raise RuntimeError(f"time integration diverged at t={t_fail:g} (TS reason {reason})")
    dim = pr.dim if pr is not None else 3
    res = Result(times=np.array(times),
                 probes=np.array(probe_rec) if probe_rec else np.zeros((len(times), 0, dim)),
                 energy={k: np.array([e[k] for e in energy_rec])
                         for k in ("kinetic", "elastic", "gravity", "total", "work")}
                 if energy else {},
                 formulation=formulation, ts_type=ts_type, steps=steps, stepper="ts",
                 frames={fr.name: FrameHistory(rec)
                         for fr, rec in zip(system.frames, frames_rec)},
                 momentum=({"linear": np.array([m[0] for m in mom_rec]),
                            "angular": np.array([m[1] for m in mom_rec])} if energy else {}),
                 midpoints=({"times": np.array([m[0] for m in mid_rec]),
                             "linear": np.array([m[1] for m in mid_rec]),
                             "angular": np.array([m[2] for m in mid_rec]),
                             "total": np.array([m[3] for m in mid_rec])} if mid_rec else {}),
                 joints={k: FrameHistory(v) for k, v in joints_rec.items()},
                 rotation=rot.reported if rot is not None else {},
                 restarted_from=None if resume is None else resume.t)
    return res

