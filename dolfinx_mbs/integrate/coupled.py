"""A run of a model with computed frames: the coupled equations stepped under the driver,
and what such a run records.

    r = model.integrate(t_end=2.0, dt=1e-3)          # a model with a Hinge, Free, RigidBody...
    r.frames["hub"].angle, r.frames["hub"].rate      # arrays over r.times
    r.energy["total"], r.momentum["angular"]

The stepper is :class:`~dolfinx_mbs.integrate.ts.coupled_stepper.CoupledStepper` (PETSc TS on
:class:`~dolfinx_mbs.integrate.ts.coupled.CoupledProblem`); the run is the driver's
(:func:`~dolfinx_mbs.integrate.driver.drive`: checkpoints, signals, the errors' words, the
files closed), as a run of prescribed frames is. This module checks the arguments and gives
the driver the observers of a coupled run (:func:`coupled_observers`): the frames' outputs
and the applied loads' moment, the joints' forces, the energies and momenta of the whole
model, the applied frame loads' work, the fields with the computed frames' state, probes, a
CSV row written as it comes, the user's callback.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.integrate import checkpoint, observers
from dolfinx_mbs.integrate.config import Recording, RunConfig, StepState, given, step_callback
from dolfinx_mbs.integrate.dense.coupled import (
    DENSE_COUPLED_MAX,
    DenseCoupledStepper,
    DenseFrames,
    DenseMonitors,
    DenseWork,
    compiled_joints,
)
from dolfinx_mbs.integrate.dense.coupled import applies as dense_applies
from dolfinx_mbs.integrate.dense.stepper import ProbeMatrix
from dolfinx_mbs.integrate.driver import Result, drive
from dolfinx_mbs.integrate.motion_range import RotationRange, checked
from dolfinx_mbs.integrate.observers import (
    FrameHistory,
    JointAccumulators,
    Observer,
    ObserverResults,
    Step,
    WorkAccumulators,
)
from dolfinx_mbs.integrate.stepper import RunSpec, Stepper
from dolfinx_mbs.integrate.ts.coupled_stepper import CoupledStepper
from dolfinx_mbs.records import FrozenMapping
from dolfinx_mbs.systems.coupled import CoupledSystem, monitors

if TYPE_CHECKING:
    from dolfinx_mbs.constraints.frame_joints import ElementOutput

__all__ = ["FrameHistory", "integrate_coupled", "coupled_observers"]

log = logging.getLogger(__name__)


def _loads_moment(system: CoupledSystem, t: float, f: np.ndarray) -> list:
    """The applied loads' moment about each computed frame's origin (local components; about
    a hinge's axis for a hinge), of the loads' values the step evaluated
    (:meth:`~dolfinx_mbs.systems.coupled.CoupledSystem.frame_loads`)."""
    out = []
    for i, fr in enumerate(system.frames):
        M = np.zeros(3)
        for _, Mi in system.frame_loads(t, i, f):
            M += Mi
        axis = getattr(fr, "axis", None)
        out.append(float(M @ axis) if axis is not None else M)
    return out


def integrate_coupled(system: CoupledSystem, config: RunConfig) -> Result:
    """Integrate a coupled system from ``config.t0`` to ``config.t_end`` with steps
    ``config.dt``.

    ``config`` (:class:`~dolfinx_mbs.integrate.config.RunConfig`) holds the run's options in
    parts; :meth:`dolfinx_mbs.Model.integrate` makes it of its keywords, whose names are
    those below (the part that holds each in brackets). A run of computed frames refuses the
    options of prescribed frames only (``p0``, ``constraints='multipliers'``, ``reactions``,
    ``stability``, ``drives``, the load fit's).

    Args:
        system: the :class:`~dolfinx_mbs.systems.coupled.CoupledSystem`.
        config: the run's options:
            t_end: final time (s).
            dt: the step (s).
            formulation (scheme): ``"second-order"`` (generalized-alpha) or ``"first-order"``
                (BDF2), both second order in dt (:mod:`dolfinx_mbs.integrate.ts.coupled`); the TS
                type may be changed by options. None: ``"first-order"`` with joints or driven
                motors (BDF2 solves their rows at the step's end, so the joints stay closed to
                round-off; generalized-alpha solves them at its intermediate time and the step's
                end misses them by O(dt^2), see ``Result.joints[name].drift``; the joints' forces
                and the motors' torques are found there and extrapolated to the step ends,
                :class:`Joints`), else ``"second-order"``. ``"hamiltonian"``: the implicit midpoint
                rule on Hamilton's form (momenta of the elastic bodies and the frames,
                :mod:`dolfinx_mbs.systems.coupled_hamilton`): where no load acts, the momenta at
                the steps' midpoints (``Result.midpoints``) and at their ends (the step ends'
                velocities are those of the momenta carried) keep a free frame's linear and angular
                momentum (global) to round-off; Newton's method with the exact Jacobian; Hinge and
                Free frames, joints, motors, springs and dampers (their rows at the midpoint, as
                generalized-alpha's). Its checkpoints hold the state alone: the momenta carried are
                the step end's velocities' (to round-off), and the run takes them from the state at
                each checkpoint as a restart does.
            t0 (initial): initial time (s).
            u0 (initial): initial elastic displacement (None: zero; a PETSc Vec in the reduced or
                full layout, or a Function per body).
            v0 (initial): initial elastic velocity (as ``u0``).
            probes (observers): points of the first body, or (body, point) pairs (body
                coordinates).
            output (output.stem): file stem: ``<output>.csv`` gets a row per step as it is
                computed, and ``<output>_<body>.bp`` (``.xdmf`` on DOLFINx 0.5) each elastic body's
                displacement ``u`` (frame components) and its global ``motion`` every
                ``output_every`` steps (:class:`~dolfinx_mbs.io.MotionWriter`).
            spectral_radius (scheme): generalized-alpha's high-frequency spectral radius in [0, 1].
            progress (output): a progress bar on rank 0 (tqdm, when installed).
            options (solver): PETSc options for the run (without the prefix).
            prefix (solver): the TS's options prefix.
            energy (observers): record energies and momenta.
            callback (observers): ``callback(state)`` at every step with a
                :class:`~dolfinx_mbs.integrate.config.StepState` whose ``frames`` are the frames'
                outputs (``callback(t, frames)``: deprecated).
            output_every (output.every): the steps between two field outputs (with ``output``).
            checkpoint_every (checkpoints.every): write the state needed to continue every this
                many steps, and at the end, into ``<output>.ckpt``
                (:mod:`dolfinx_mbs.integrate.checkpoint`): the elastic coordinates and rates as a
                run of prescribed frames writes them, the frame unknowns (the frames' coordinates
                and speeds, the joints' multipliers) and the loads' work in ``latest.json``; needs
                ``output``. At each checkpoint the scheme starts again from the state (BDF2 with
                half a step of backward Euler, generalized-alpha with its estimate of the rates) as
                a restart from it does. Both steppers write the same checkpoints (the dense path
                ends its batches of steps at them).
            restart (checkpoints): continue from the last checkpoint of ``output`` (same model and
                formulation; ``t0``, ``u0``, ``v0`` come from it and ``dt`` is its next step), on
                the ranks that wrote it or on another number of ranks (the elastic unknowns
                redistributed by name, not under DOLFINx 0.5); generalized-alpha only at spectral
                radius 1: the CSV and field files keep their rows up to the checkpoint's time and
                get the new ones appended; the result's histories start at the checkpoint
                (``Result.restarted_from``). A checkpoint of either stepper restarts on either
                (``stepper`` chooses), the same steps to the Newton tolerance; on the path that
                wrote it, to the last bit.
            stepper (scheme): ``"auto"``, ``"ts"`` or ``"dense"``: PETSc TS with the bordered
                Newton (:class:`~dolfinx_mbs.integrate.ts.coupled_stepper.CoupledStepper`), or the
                same schemes on small dense arrays
                (:class:`~dolfinx_mbs.integrate.dense.coupled.DenseCoupledStepper`: the bodies'
                inertia invariants projected once; elastic bodies on hinges, rigid bodies, frame
                loads, gravity, prestress, free frames, checkpoints and restarts;
                ``"second-order"`` and ``"first-order"``; joints and motors by Maggi's
                equations; nonlinear strain on reduced bodies; no springs between frames,
                Hamilton's form or PETSc options). ``"auto"`` takes the dense path where it
                applies and the elastic bodies have at most
                :data:`~dolfinx_mbs.integrate.dense.coupled.DENSE_COUPLED_MAX` reduced unknowns;
                with joints or motors where Maggi's stages are compiled
                (:func:`~dolfinx_mbs.integrate.dense.coupled.compiled_joints`), the elastic
                bodies are reduced or the scheme is ``"second-order"`` (``Result.stepper`` names
                the path).

    SIGTERM and SIGINT during the run finish the step in progress, write a checkpoint (with
    ``checkpoint_every``), close every file and raise SystemExit (SIGTERM) or
    KeyboardInterrupt (SIGINT) on every rank (the dense path: at the first step its
    observers see after the signal, once the batch of steps in progress is computed).

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
    system.forget_loads()   # the loads' values of an earlier run are not this run's
    try:
        return _integrate(system, config)
    except checkpoint.Interrupted as e:
        raise e.exit() from None
    finally:
        system.forget_loads()


class Frames(Observer):
    """Each computed frame's outputs (coordinates, speeds) and the applied loads' moment at
    every step; their scalars are CSV columns.

    Args:
        system: the coupled system.
    """

    def __init__(self, system: CoupledSystem) -> None:
        self.system = system
        self.columns = [f"{fr.name}.{k}" for fr in system.frames
                        for k, val in fr.describe(*fr.initial()).items() if np.ndim(val) == 0]
        self.records: list = [[] for _ in system.frames]
        #: the frames' outputs at the last step (the callback's)
        self.last: Mapping[str, Mapping[str, Any]] = {}

    def observe(self, step: Step) -> List[float]:
        """Record the frames' outputs at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        s, f = self.system, step.frames
        assert f is not None  # (a coupled run's steps carry the frames' unknowns)
        outs = self.last = s.frame_outputs(f)
        torques = _loads_moment(s, step.t, f) if s.loads else [None] * len(outs)
        for rec, fr, tq in zip(self.records, s.frames, torques):
            r = dict(outs[fr.name])
            if tq is not None:
                r["torque"] = tq
            rec.append(r)
        return [float(val) for fr in s.frames for val in outs[fr.name].values()
                if np.ndim(val) == 0]

    def results(self) -> ObserverResults:
        """``frames``: {name: :class:`FrameHistory`}."""
        return ObserverResults(frames={fr.name: FrameHistory(rec)
                                       for fr, rec in zip(self.system.frames, self.records)})


class Joints(Observer):
    """The joints' and motors' outputs (force or torque, drift) at every step; the initial
    multipliers are a guess, not a joint's force (NaN at the first step).

    Where the scheme solves the joints' rows at an intermediate time t_n + a h (generalized-
    alpha, the midpoint rule), the state's multipliers are those of that time
    (:meth:`~dolfinx_mbs.integrate.ts.coupled.CoupledProblem.multiplier_lag`): the force and
    torque at the step's end are extrapolated linearly from the last two steps' values (second
    order in h; the first step's value is its intermediate one).

    Args:
        system: the coupled system.
        lag: the multipliers' place before the step's end, in steps (1 - a; 0 for BDF).
        resume: the checkpoint the run continues from, or None.
    """

    needs_velocity = True
    FROM_MULTIPLIERS = ("force", "torque")

    def __init__(self, system: CoupledSystem, lag: float = 0.0,
                 resume: checkpoint.Checkpoint | None = None) -> None:
        self.system, self.lag = system, float(lag)
        self.records: dict = {}
        #: the last boundary's time, the time of its multipliers and their outputs
        self.last: JointAccumulators | None = None
        #: :attr:`last` before the last boundary (what a restart there starts from)
        self.before: JointAccumulators | None = None
        if resume is not None and resume.accumulators.get("joints"):
            self.last = JointAccumulators(**resume.accumulators["joints"])

    def observe(self, step: Step) -> List[float]:
        """Record the joints' outputs at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        t = step.t
        raw = self.raw(step)
        last, tau = self.last, t
        self.before = last
        if step.index > 0 and self.lag and last is not None:
            tau = t - self.lag * (t - last.t)
        for name, rec in raw.items():
            out = dict(rec)
            if step.index == 0:
                out.update({k: np.full_like(np.asarray(v, float), np.nan)
                            for k, v in rec.items() if k in self.FROM_MULTIPLIERS})
            elif self.lag and last is not None and last.tau is not None:
                w = (t - tau) / (tau - last.tau)
                for k in self.FROM_MULTIPLIERS:
                    if k in rec:
                        y = np.asarray(rec[k], float)
                        y = y + w * (y - np.asarray(last.raw[name][k], float))
                        out[k] = float(y) if np.ndim(y) == 0 else y
            self.records.setdefault(name, []).append(out)
        if self.lag:
            self.last = JointAccumulators(
                t=t, tau=tau if step.index > 0 else None,
                raw={name: {k: np.asarray(v, float).tolist()
                            for k, v in rec.items() if k in self.FROM_MULTIPLIERS}
                     for name, rec in raw.items()})
        return []

    def raw(self, step: Step) -> Mapping[str, ElementOutput]:
        """The joints' and motors' outputs of the state's multipliers (before the
        extrapolation to the step's end).

        Args:
            step: the run's state.

        Returns:
            The outputs by name (:meth:`~dolfinx_mbs.systems.coupled_joints.JointSet.outputs`),
            read-only.
        """
        s = self.system
        uu = uud = None
        if s.parts:
            uu = s.elastic_reducer.expand(step.q, out=s.full_work["u"])
            uud = s.elastic_reducer.expand_rate(step.q, step.v, out=s.full_work["ud"])
        assert step.frames is not None  # (a coupled run's steps carry the frames' unknowns)
        return FrozenMapping(s.jointset.outputs(step.t, step.frames, uu, uud))

    def accumulators(self) -> JointAccumulators | None:
        """What the extrapolation at the last boundary read (the step before's multiplier
        outputs and times: a restart there repeats it), or None where the multipliers are the
        step end's."""
        return self.before if self.lag else None

    def results(self) -> ObserverResults:
        """``joints``: {name: :class:`FrameHistory`}."""
        return ObserverResults(joints={k: FrameHistory(v) for k, v in self.records.items()})


class DenseJointOutputs(Joints):
    """:class:`Joints` of the dense path: the multipliers are those Maggi's stages recovered
    (:class:`~dolfinx_mbs.integrate.dense.coupled.MaggiStage`), kept by the stepper for each
    step; the drift is the position rows' at the step's end. It records a batch of steps at
    once (:meth:`rows`, the outputs of all its states in arrays), one step as a batch of one.

    Args:
        system: the coupled system.
        stepper: the dense stepper.
        lag: the multipliers' place before the step's end, in steps (1 - alpha_f; 0 for BDF).
        resume: the checkpoint the run continues from, or None.
    """

    #: it reads the stepper's arrays by the step's index: the dense stepper may show it a
    #: batch of steps after they are all taken
    whole_run = True
    #: the dense stepper gives it a batch of states at once (:meth:`rows`)
    batch_rows = True

    def __init__(self, system: CoupledSystem, stepper: DenseCoupledStepper, lag: float,
                 resume: checkpoint.Checkpoint | None = None) -> None:
        super().__init__(system, lag, resume)
        self.stepper = stepper
        #: each element's fields, a list of each batch's arrays
        self.chunks: Dict[str, Dict[str, List[np.ndarray]]] = {}
        #: the last batch's first and last state and its driven motors' power
        self.recent: tuple = (-1, -1, np.zeros(0))

    def observe(self, step: Step) -> List[float]:
        """Record the joints' outputs at the step (a batch of one).

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns` (none).
        """
        i = self.stepper.local(step.index)
        self.rows(i, i)
        return []

    def rows(self, lo: int, hi: int) -> List[List[float]]:
        """Record the states ``lo`` to ``hi`` (the stepper's rows): :meth:`Joints.observe`
        at each, in arrays.

        Args:
            lo: the first state's row.
            hi: the last state's row.

        Returns:
            Each state's CSV columns (none).
        """
        st = self.stepper
        assert st.maggi is not None  # (the dense path's joints: Maggi's stages)
        t = np.array(st.times[lo:hi + 1], dtype=float)
        raw, rates = st.maggi.outputs_at(t, st.Y[lo:hi + 1], st.lam_end[lo:hi + 1],
                                         st.batch_frames(lo, hi))
        first = st.offset + lo == 0     # the run's first state: no multipliers yet
        last = self.last
        S = len(t)
        prev_t = np.concatenate([[last.t if last is not None else np.nan], t[:-1]])
        tau = t.copy()
        moved = np.ones(S, dtype=bool)
        moved[0] = last is not None and not first
        if self.lag:
            tau[moved] = t[moved] - self.lag * (t[moved] - prev_t[moved])
        # the multipliers' time one state back (none before the run's first state)
        prev_tau = np.concatenate([[np.nan if last is None or last.tau is None or first
                                    else last.tau], tau[:-1]])
        if first and S > 1:
            prev_tau[1] = np.nan
        w = (t - tau) / (tau - prev_tau)
        ok = np.isfinite(prev_tau) if self.lag else np.zeros(S, dtype=bool)
        out: Dict[str, Dict[str, np.ndarray]] = {}
        for name, rec in raw.items():
            fields = {}
            for k, y in rec.items():
                y = np.asarray(y, dtype=float)
                if k in self.FROM_MULTIPLIERS:
                    back = np.concatenate([np.asarray(last.raw[name][k], dtype=float)[None]
                                           if last is not None and name in last.raw
                                           else np.full_like(y[:1], np.nan), y[:-1]])
                    ww = w.reshape((-1,) + (1,) * (y.ndim - 1))
                    y = np.where(ok.reshape(ww.shape), y + ww * (y - back), y)
                    if first:
                        y[0] = np.nan
                fields[k] = y
                self.chunks.setdefault(name, {}).setdefault(k, []).append(y)
            out[name] = fields
        torques = [out[m.name]["torque"] for m in self.system.jointset.motors]
        self.recent = (lo, hi, np.einsum("sm,ms->s", rates, np.array(torques).reshape(
            len(torques), S)))
        if self.lag:
            def acc(i: int) -> JointAccumulators:
                return JointAccumulators(
                    t=float(t[i]), tau=None if first and i == 0 else float(tau[i]),
                    raw={name: {k: np.asarray(v[i], dtype=float).tolist()
                                for k, v in rec.items() if k in self.FROM_MULTIPLIERS}
                         for name, rec in raw.items()})
            self.before = acc(S - 2) if S > 1 else last
            self.last = acc(S - 1)
        else:
            self.before, self.last = self.last, None
        return [[] for _ in range(S)]

    def driven_power(self, lo: int, hi: int) -> np.ndarray:
        """The driven motors' power (torque times prescribed rate, summed) at the states
        ``lo`` to ``hi`` (the last batch's).

        Args:
            lo: the first state's row.
            hi: the last state's row.

        Returns:
            The power at each state (NaN where a torque is not known: the run's first).
        """
        a, b, power = self.recent
        assert (a, b) == (lo, hi), "the joints' outputs of another batch"
        return cast(np.ndarray, power)

    def results(self) -> ObserverResults:
        """``joints``: {name: :class:`FrameHistory`}."""
        hist = {}
        for name, fields in self.chunks.items():
            h = FrameHistory([])
            for k, parts in fields.items():
                setattr(h, k, np.concatenate(parts))
            h.names = tuple(fields)
            hist[name] = h
        return ObserverResults(joints=hist)


class Fields(observers.Fields):
    """The elastic bodies' fields with their computed frames' state at each output step
    (:class:`~dolfinx_mbs.io.MotionWriter`).

    Args:
        system: the coupled system.
        stem: the files' stem.
        every: the steps between two outputs.
        keep_until: a restart's time: the files' steps up to it kept, or None.
    """

    def __init__(self, system: CoupledSystem, stem: str, every: int,
                 keep_until: float | None = None) -> None:
        super().__init__(system.bodies, stem, every, keep_until)
        self.system = system

    def observe(self, step: Step) -> List[float]:
        """Write the fields where the step is due.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        if step.index % self.every == 0:
            s, f, t = self.system, step.frames, step.t
            assert f is not None  # (a coupled run's steps carry the frames' unknowns)
            states = {id(fr): fr.state_at(t, f[zs], f[ws])
                      for fr, zs, ws in zip(s.frames, s.zslice, s.wslice)}
            self.writer.write(t, [states[id(b.frame)] if id(b.frame) in states
                                  else b.frame.state(t) for b in s.bodies])
        return []


class Work(Observer):
    """The work of the applied frame loads and of the motors: trapezoidal in their power
    (the loads' generalized force times the speeds; a driven motor's torque times the rate it
    prescribes, a torque motor's torque times its joint's rate); kept by a checkpoint. With
    it the energy balances: ``total - total[0] = work``, to the scheme's accuracy. The first
    step's driven torques are not known at its start (the run's outputs give NaN there): the
    first interval takes the end's power.

    Args:
        system: the coupled system.
        resume: the checkpoint the run continues from, or None.
        joints: the run's :class:`Joints` observer, whose outputs give the driven motors'
            torques (None without joints or motors).
    """

    columns = ["work"]
    #: a step's power is a function of its state (the loads' values the step kept, the
    #: driven torques of the joints' outputs of the same step): the dense stepper may show
    #: it a batch of steps after they are all taken (after the joints' outputs, step by step)
    whole_run = True

    def __init__(self, system: CoupledSystem, resume: checkpoint.Checkpoint | None,
                 joints: Joints | None = None) -> None:
        self.system, self.joints = system, joints
        self.work, self.last = 0.0, None
        if resume is not None and "work" in resume.accumulators:
            acc = resume.accumulators["work"]
            assert acc["work"] is not None  # (a number from the run's start)
            self.work = acc["work"]
            power = math.nan if acc["power"] is None else acc["power"]
            self.last = None if acc["t"] is None else (acc["t"], power)
        self.history: List[float] = []

    def observe(self, step: Step) -> List[float]:
        """Add the step's work.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        s, f, t = self.system, step.frames, step.t
        assert f is not None  # (a coupled run's steps carry the frames' unknowns)
        power = 0.0
        for i, (fr, zs, ws) in enumerate(zip(s.frames, s.zslice, s.wslice)):
            values = s.frame_loads(t, i, f) if s.loads else []
            if values:   # the loads' generalized force, of the values the step evaluated
                jet = fr.jet(t, f[zs], f[ws], np.zeros(fr.n_speeds))
                Q = np.zeros(fr.n_speeds)
                for F, M in values:
                    Q += jet.T.T @ F + jet.Om.T @ M
                power += float(Q @ f[ws])
        js = s.jointset
        if js.motors or js.torque_motors:
            driven = {}
            if self.joints is not None:
                for m in js.motors:
                    rec = self.joints.records.get(m.name)
                    if rec:
                        driven[m.name] = float(rec[-1]["torque"])
            power += js.motor_power(t, f, driven)
            if any(not math.isfinite(v) for v in driven.values()):
                power = math.nan   # a driven torque not known yet (the run's first state)
        if self.last is not None and not step.again:
            t_prev, p_prev = self.last
            if not math.isfinite(p_prev):   # the first step's driven torque: its end's
                p_prev = power
            self.work += 0.5 * (power + p_prev) * (t - t_prev)
            self.last = (t, power)
        elif self.last is None:
            self.last = (t, power)
        self.history.append(self.work)
        return [self.work]

    def accumulators(self) -> WorkAccumulators:
        """The work so far and the last (time, power)."""
        last = self.last or (None, None)
        power = last[1] if last[1] is not None and math.isfinite(last[1]) else None
        return WorkAccumulators(work=self.work, t=last[0], power=power)


class Monitors(Observer):
    """The energies and momenta of the whole model at every step
    (:func:`~dolfinx_mbs.systems.coupled.monitors`); a state whose energy is not finite
    stops the run.

    Args:
        system: the coupled system.
        work: the run's :class:`Work`, whose history ``Result.energy["work"]`` is.
    """

    columns = ["kinetic", "elastic", "gravity", "total"]
    needs_velocity = True

    def __init__(self, system: CoupledSystem, work: Work) -> None:
        self.system, self.work = system, work
        self.history: list = []

    def observe(self, step: Step) -> List[float]:
        """Record the energies and momenta at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.

        Raises:
            FloatingPointError: the energy is not finite.
        """
        assert step.frames is not None  # (a coupled run's steps carry the frames' unknowns)
        mon = monitors(self.system, step.t, step.q, step.v, step.frames)
        self.history.append(mon)
        if not math.isfinite(mon["total"]):
            raise FloatingPointError(f"the solution is not finite at t={step.t:g}")
        return [mon[k] for k in self.columns]

    def results(self) -> ObserverResults:
        """``energy`` (``kinetic``, ``elastic``, ``gravity``, ``total``, ``work``) and
        ``momentum`` (``linear``, ``angular``)."""
        h = self.history
        energy = {k: np.array([e[k] for e in h]) for k in self.columns}
        energy["work"] = np.array(self.work.history)
        return ObserverResults(
            energy=energy,
            momentum={"linear": np.array([m["momentum"] for m in h]),
                      "angular": np.array([m["angular_momentum"] for m in h])})


class Midpoints(Observer):
    """Hamilton's form: the energy monitors at each step's midpoint state, whose velocities
    are those of its momenta (the stepper's problem calls it inside the step).

    Args:
        system: the coupled system.
        problem: the stepper's :class:`~dolfinx_mbs.integrate.ts.coupled.CoupledProblem`.
    """

    def __init__(self, system: CoupledSystem, problem: Any) -> None:
        self.system = system
        self.records: list = []
        problem.midpoint_hooks.append(self.midpoint)

    def midpoint(self, t: float, q: PETSc.Vec, v: PETSc.Vec, f: np.ndarray) -> None:
        """Record the midpoint state's monitors.

        Args:
            t: the midpoint's time (s).
            q: the elastic coordinates there.
            v: their rates (of the midpoint momenta).
            f: the frame unknowns.
        """
        mon = monitors(self.system, t, q, v, f)
        self.records.append((t, mon["momentum"], mon["angular_momentum"], mon["total"]))

    def results(self) -> ObserverResults | None:
        """``midpoints``: ``times``, ``linear``, ``angular``, ``total`` (None before a
        step)."""
        r = self.records
        if not r:
            return None
        return ObserverResults(midpoints={
            k: np.array([m[i] for m in r])
            for i, k in enumerate(("times", "linear", "angular", "total"))})


class Callback(Observer):
    """The user's ``callback(state)`` at every step, with the frames' outputs
    (:class:`~dolfinx_mbs.integrate.config.StepState`: ``t``, ``index``, ``frames``).

    Args:
        fn: the callback, of one argument (:func:`~dolfinx_mbs.integrate.config.step_callback`).
        frames: the run's :class:`Frames`.
        comm: the run's communicator.
    """

    def __init__(self, fn: Callable[[StepState], object], frames: Frames, comm: Any) -> None:
        self.fn, self.frames, self.comm = fn, frames, comm

    def observe(self, step: Step) -> List[float]:
        """Call the user's function (collectively: an error on one rank raises on all).

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        with checks.collective(self.comm, f"callback at t={step.t:g}"):
            self.fn(StepState(t=step.t, index=step.index, frames=self.frames.last))
        return []


def coupled_observers(system: CoupledSystem, stepper: CoupledStepper | DenseCoupledStepper,
                      rec: Recording,
                      label: str, n_steps: int, resume: checkpoint.Checkpoint | None
                      ) -> Mapping[str, Observer]:
    """A coupled run's observers, in the order they see a step.

    Args:
        system: the coupled system.
        stepper: the run's stepper.
        rec: what the run records (probes, output, output_every, progress, energy,
            callback).
        label: the progress bar's words.
        n_steps: the steps the run is expected to take.
        resume: the checkpoint the run continues from, or None.

    Returns:
        The observers by name (read-only, in the order they see a step).
    """
    dense = stepper if isinstance(stepper, DenseCoupledStepper) else None
    out: Dict[str, Observer] = {"frames": Frames(system) if dense is None
                                else DenseFrames(dense)}
    frames = cast(Frames, out["frames"])
    if system.jointset.active and isinstance(stepper, CoupledStepper):
        out["joints"] = Joints(system, stepper.problem.multiplier_lag(), resume)
    elif system.jointset.active and dense is not None:
        out["joints"] = DenseJointOutputs(system, dense, dense.multiplier_lag(), resume)
    if system.parts and any(checked(b) for b in system.bodies):
        out["rotation"] = RotationRange(system, n_steps)
    keep = None if resume is None else resume.t
    if rec.output is not None and system.parts:
        out["fields"] = Fields(system, rec.output, rec.output_every, keep)
    if rec.probes:   # the dense path: as a matrix applied to q
        out["probes"] = (ProbeMatrix(cast(Any, system), rec.probes) if dense is not None
                         else observers.ProbeHistory(system.bodies, rec.probes))
    if rec.energy:
        joints = cast(Joints, out["joints"]) if "joints" in out else None
        js = system.jointset
        if dense is not None and not js.torque_motors:
            dwork: DenseWork | Work = DenseWork(
                dense, resume, cast(DenseJointOutputs, joints) if js.motors else None)
            out["monitors"], out["work"] = DenseMonitors(dense, dwork), dwork
        elif dense is not None:   # a torque motor's power step by step, as on the TS path
            dwork = Work(system, resume, joints)
            out["monitors"], out["work"] = DenseMonitors(dense, dwork), dwork
        else:
            work = Work(system, resume, joints)
            out["monitors"], out["work"] = Monitors(system, work), work
        if isinstance(stepper, CoupledStepper) and stepper.problem.ham is not None:
            out["midpoints"] = Midpoints(system, stepper.problem)
    if rec.output is not None:
        order = ("frames", "probes", "monitors", "work")
        cols = [c for k in order if k in out for c in out[k].columns]
        if resume is not None:
            assert keep is not None  # (the restart's time)
            checkpoint.truncate_csv(system.comm, rec.output + ".csv", keep, ["t"] + cols)
        out["csv"] = observers.Csv(rec.output + ".csv", cols, system.comm,
                                   append=keep is not None, order=order)
    if rec.callback is not None:
        out["callback"] = Callback(cast(Callable[[StepState], object], rec.callback), frames,
                                   system.comm)
    if rec.progress:
        out["progress"] = observers.Progress(system.comm, n_steps, label)
    return FrozenMapping(out)


def _integrate(system: CoupledSystem, config: RunConfig) -> Result:
    """:func:`integrate_coupled` but for the end of a run stopped by a signal, which it raises
    as :class:`~dolfinx_mbs.integrate.checkpoint.Interrupted`."""
    sch, ini, out, obs = config.scheme, config.initial, config.output, config.observers
    spectral_radius, output = sch.spectral_radius, out.stem
    other = (given(sch, ("constraints", "load_degree", "load_frequencies"))
             + given(ini, ("p0",)) + given(obs, ("reactions", "stability", "drives")))
    if other:   # the prescribed path's options
        raise ValueError(f"integrate: {', '.join(sorted(other))} not taken by a model with "
                         "computed frames or springs (the coupled equations: see "
                         "dolfinx_mbs.integrate.coupled.integrate_coupled)")
    formulation = sch.formulation
    if formulation is None:
        formulation = "first-order" if system.jointset.n_rows else "second-order"
    if formulation not in CoupledSystem.formulations:
        raise ValueError(f"formulation must be one of {CoupledSystem.formulations} for a model "
                         f"with computed frames, got {formulation!r}")
    if formulation == "hamiltonian" and spectral_radius not in (None, 1.0):
        raise ValueError("spectral_radius: formulation 'hamiltonian' steps by the implicit "
                         f"midpoint rule (radius 1), got {spectral_radius!r}")
    options = None if config.solver.options is None else dict(config.solver.options)
    prefix = config.solver.prefix
    ckpt = checkpoint.arguments(output, config.checkpoints, formulation,
                                (ini.u0, ini.v0, None), options, prefix)
    if ckpt.restart and formulation == "second-order" and spectral_radius not in (None, 1.0):
        raise ValueError(f"restart=True: generalized-alpha with spectral_radius="
                         f"{spectral_radius!r} keeps a rate the checkpoint does not hold; only "
                         "spectral radius 1 (the default) restarts exactly")
    run = RunSpec(formulation=formulation, t0=config.t0, t_end=config.t_end, dt=config.dt,
                  spectral_radius=spectral_radius, options=options, prefix=prefix,
                  energy=obs.energy, checkpoints=ckpt.every is not None or ckpt.restart)
    callback = None if obs.callback is None else step_callback(obs.callback, "t, frames", 5)
    rec = Recording(probes=obs.probes, output=output, output_every=out.every,
                    progress=out.progress, energy=obs.energy, callback=callback,
                    stability="off")
    stepper = sch.stepper
    if stepper not in ("auto", "ts", "dense"):
        raise ValueError(f"stepper must be 'auto', 'ts' or 'dense' for a model with computed "
                         f"frames, got {stepper!r}")
    why = dense_applies(system, run)
    if stepper == "dense" and why is not None:
        raise ValueError(f"stepper='dense' cannot step a run with {why}: use stepper='ts' "
                         "or 'auto'")
    # "auto": the dense path for few elastic unknowns; with joints or motors, Maggi's dense
    # stages where they are compiled (20-400x faster than the TS path), with reduced elastic
    # bodies or with generalized-alpha; a rigid mechanism with BDF2 whose stages are solved
    # from Python (no numba, a torque motor) stays on the TS path, as fast there (the guide's
    # "Where each is used", bench/results/maggi_paths.md)
    use_dense = stepper == "dense" or (stepper == "auto" and why is None and (
        system.n_reduced <= DENSE_COUPLED_MAX and (
            not system.jointset.active or compiled_joints(system) or system.n_reduced > 0
            or formulation == "second-order")))
    if use_dense:
        stepping: CoupledStepper | DenseCoupledStepper = DenseCoupledStepper(
            system, run, every=ckpt.every)
    else:
        stepping = CoupledStepper(system, run, restart=ckpt.restart, stem=output)
    return drive(system, cast(Stepper, stepping), run, rec, (ini.u0, ini.v0, None),
                 ckpt.restart, ckpt.every,
                 lambda label, n, resume: coupled_observers(system, stepping, rec, label, n,
                                                            resume))

