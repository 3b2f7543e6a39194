"""The driver of a run: what every run records and how it ends, whatever steps it.

The shape: one driver, and the time loop where it belongs. A run has exactly two time loops,
both outside this module: the Python loop of the backends that step in Python, written once
(:meth:`dolfinx_mbs.integrate.stepper.PythonLoop.march`: the sparse and dense backends), and
PETSc's own loop inside ``TSSolve`` (the TS backend, whose monitor is the driver's boundary:
PETSc keeps its step control, the matched last step, its adaptivity and its events). Either
loop calls the driver's :class:`Boundaries` at every step boundary, and the driver is the one
place that

* makes the run's observers (:mod:`dolfinx_mbs.integrate.observers`: energies, finiteness,
  divergence check, callback, probes, reactions, CSV, field files, progress) and shows them
  each boundary's state, the bodies' ``u`` set from it where an observer reads them (and at
  the end); a stepper that forms all its states first may give observers that can see a
  whole run the run at once (:attr:`dolfinx_mbs.integrate.stepper.Needs.whole_run`);
* writes the checkpoints and continues from one (:mod:`dolfinx_mbs.integrate.checkpoint`), and
  turns SIGTERM and SIGINT into a stop at the next boundary, on every path;
* translates a failed step into one error naming the formulation, the scheme, the time and
  the solvers' reasons (an error of the user's own code raised as it was);
* closes every file and destroys the stepper, whatever happened.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Sequence, Type, cast

import numpy as np
from petsc4py import PETSc

from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.config import Recording
from dolfinx_mbs.integrate.initial import Coordinates, reduced_initial
from dolfinx_mbs.integrate.motion_range import RotationRange, checked
from dolfinx_mbs.integrate.stability import Stability
from dolfinx_mbs.integrate.stepper import Needs, RunSpec, Stepper
from dolfinx_mbs.records import FrozenMapping
from dolfinx_mbs.systems.multipliers import SaddlePoint

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem

__all__ = ["Recording", "Result", "drive"]

log = logging.getLogger(__name__)


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
        reactions_frame: the same forces in the components of the body's frame (N): a
            rotating body's root reaction is steady there where the global components turn
            with the frame.
        restarted_from: for a run with ``restart=True``, the checkpoint's time: the arrays
            then hold the history from that time on (its row first); the whole history is in
            ``<output>.csv``. None for a run from ``t0``.
        rotation: {body name: the largest rotation relative to its frame (rad)} of each
            body of linear strain (:mod:`dolfinx_mbs.integrate.motion_range`: past 0.1 rad a
            :class:`~dolfinx_mbs.integrate.motion_range.SmallDisplacementWarning` says the
            small-displacement model is out of its range).
        instabilities: the divergent states the run met
            (:class:`dolfinx_mbs.integrate.stability.Instability`: time, count, growth rate, where).
        stepper: the path that stepped: ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"``
            (``ts_type`` is then the scheme's TS name, or ``"expm"``).
        frames: with computed frames, {name: history} of each one's coordinates, speeds and
            applied torque (:class:`dolfinx_mbs.integrate.observers.FrameHistory`).
        momentum: with computed frames, ``linear`` and ``angular`` (about the global
            origin) momentum, (n_steps + 1, 3), global components.
        joints: with joints between computed frames and motors, {name: history} of each one's
            ``force`` (on its second body, global components) or ``torque`` (a motor's) and
            ``drift`` (the largest of its position rows at each time); where the scheme
            solves the joints' rows inside the step (generalized-alpha, Hamilton's midpoint
            rule) the force and torque are extrapolated to the step's end
            (:class:`dolfinx_mbs.integrate.coupled.Joints`).
        midpoints: with computed frames in Hamilton's form (``formulation="hamiltonian"``),
            the energy monitors at each step's midpoint state, whose velocities are those of
            its momenta: ``times``, ``linear``, ``angular`` (n_steps, 3) and ``total``.
        journals: with fluid-film bearings, {bearing name: {``position``, ``velocity``,
            ``force`` (n_steps + 1, 2), ``eccentricity``, ``work`` (n_steps + 1,)}} of each
            journal in its bearing's clearance
            (:class:`dolfinx_mbs.integrate.observers.Journals`).
    """

    times: np.ndarray
    probes: np.ndarray
    energy: Dict[str, np.ndarray]
    formulation: str
    ts_type: str
    steps: int
    reactions: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    reactions_frame: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    restarted_from: float | None = None
    rotation: Dict[str, float] = dataclasses.field(default_factory=dict)
    instabilities: list = dataclasses.field(default_factory=list)
    stepper: str = "ts"
    frames: Dict[str, obs.FrameHistory] = dataclasses.field(default_factory=dict)
    momentum: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    joints: Dict[str, obs.FrameHistory] = dataclasses.field(default_factory=dict)
    midpoints: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    journals: Dict[str, Dict[str, np.ndarray]] = dataclasses.field(default_factory=dict)


def observers(system: RunSystem, label: str, n_steps: int, rec: Recording,
              resume: checkpoint.Checkpoint | None = None,
              energies: Type[obs.Energies] | None = None,
              probes: Callable | None = None) -> Mapping[str, obs.Observer]:
    """The run's observers, with the divergence check.

    The run's observers (:func:`dolfinx_mbs.integrate.observers.make_observers`), with the
    divergence check (not with nonlinear strain: its stiffness is the tangent about the run's
    state) and, with ``resume`` (a checkpoint), the files continued.

    Args:
        system: the run's typed system.
        label: the run's words for the log and the progress bar.
        n_steps: the steps the run is expected to take.
        rec: what the run records.
        resume: the checkpoint the run continues from, or None.
        energies: the stepper's observer class of the energies, or None for the usual one.
        probes: the stepper's factory of the probes' observer, or None.

    Returns:
        The observers by name (read-only, in the order they see a step).
    """
    stab = None
    if rec.stability != "off" and hasattr(system, "pencil") and \
            not isinstance(system, SaddlePoint) and not system.nonlinear and \
            getattr(system, "films", None) is None:   # a film's force bounds its whirl
        stab = Stability(system, rec.stability, max(10, n_steps // 50),
                         multigrid=rec.multigrid)
    watch = dict(obs.make_observers(system, label, n_steps, rec, resume, energies,
                                    probes, stab, checkpoint.truncate_csv))
    if any(checked(b) for b in system.space.bodies):
        watch["rotation"] = RotationRange(system, n_steps)
    return FrozenMapping(watch)


class Boundaries:
    """The driver's side of the seam at each step boundary.

    The driver's side of the seam (:class:`~dolfinx_mbs.integrate.stepper.Boundary`): at
    each step boundary the stepper's state to the observers, the time kept, the signals
    looked at and the checkpoint written when due.

    Args:
        system: the run's system.
        stepper: the run's stepper.
        watch: the observers.
        signals: the run's :class:`~dolfinx_mbs.integrate.checkpoint.Signals`.
        writer: the checkpoint writer, or None.
        resume: the checkpoint the run continues from, or None.
    """

    def __init__(self, system: Coordinates, stepper: Stepper,
                 watch: Mapping[str, obs.Observer],
                 signals: checkpoint.Signals, writer: checkpoint.Writer | None = None,
                 resume: checkpoint.Checkpoint | None = None) -> None:
        self.system, self.stepper, self.watch = system, stepper, watch
        self.signals, self.writer, self.resume = signals, writer, resume
        self.need_v = any(o.needs_velocity for o in watch.values())
        self.set_u = any(o.needs_u for o in watch.values())
        # no full vector where there is no elastic body (a coupled run of rigid bodies)
        self.full = None if system.space is None else system.space.create_vec()
        self.funcs = [b.u for b in system.bodies]
        #: the boundaries' times
        self.times: List[float] = []

    def needs(self) -> Needs:
        """What the observers read (:class:`~dolfinx_mbs.integrate.stepper.Needs`)."""
        w = self.watch
        energy = obs.named(w, "energy", obs.Energies)
        return Needs(velocity=self.need_v,
                     vectors=self.set_u or any(k in w for k in ("reactions", "callback"))
                     or energy is None or energy.reads_vectors,
                     displacement=self.set_u,
                     whole_run=w if all(o.whole_run for o in w.values()) else None)

    def __call__(self, index: int, t: float) -> None:
        """The boundary ``index`` at ``t``: see the class docstring."""
        # a restart's first state is the checkpoint's: its row and fields are in the files
        again = self.resume is not None and index == self.resume.index
        st = self.stepper.state(t, self.need_v)
        step = obs.Step(index=index, t=t, q=st.q, v=st.v, u=self.full, stepper=self.stepper,
                        Mv=st.Mv if self.need_v else None, dense=st.dense, frames=st.frames,
                        again=again)
        obs.notify(self.watch, step, self.system, self.full, self.funcs, self.set_u, again)
        self.times.append(t)
        self._signals(index, t, again)

    def passed(self, times: Sequence[float], last: int | None = None) -> None:
        """Steps were observed at once (the whole run, or a batch ending at step ``last``):
        their times kept, the signals looked at.

        Args:
            times: the times of the steps observed.
            last: the index of the last of them (None: ``len(times) - 1``, the whole run).
        """
        self.times.extend(times)
        self._signals(len(times) - 1 if last is None else last, times[-1], False)

    def _signals(self, index: int, t: float, again: bool) -> None:
        stop = self.signals.requested()
        w = self.writer
        if w is not None and not again and (w.due(index) or stop):
            self.checkpoint()
            if not stop:  # the run goes on as a restart from the checkpoint would
                self.stepper.checkpointed()
        if stop:
            raise checkpoint.Interrupted(stop, t, None if w is None else w.last)

    def checkpoint(self) -> None:
        """Write the stepper's state, its global state (:meth:`~dolfinx_mbs.integrate.
        stepper.Stepper.extra`) and the observers' accumulators (by the observers' names)."""
        acc = {name: a for name, o in self.watch.items()
               if (a := o.accumulators()) is not None}
        index, t, dt, vecs = self.stepper.snapshot()
        assert self.writer is not None  # (checkpoints are written with a writer)
        self.writer.write(index, t, dt, vecs, {}, acc, self.stepper.extra())

    def last_state_to_bodies(self) -> None:
        """The bodies' ``u`` at the last boundary, where no observer had them set."""
        if not self.set_u and self.times and self.full is not None:
            q = self.stepper.state(self.times[-1], False).q
            self.system.expand(q, out=self.full)
            self.system.space.scatter(self.full, self.funcs)

    def destroy(self) -> None:
        """Destroy the full vector."""
        if self.full is not None:
            self.full.destroy()


#: a run's own observers: ``make(label, n_steps, resume)`` gives them by name, in the order
#: they see a step (a coupled run's, :mod:`dolfinx_mbs.integrate.coupled`)
ObserverFactory = Callable[[str, int, "checkpoint.Checkpoint | None"],
                          Mapping[str, obs.Observer]]


def drive(system: Coordinates, stepper: Stepper, run: RunSpec, rec: Recording,
          initial: Sequence[Any], restart: bool = False,
          checkpoint_every: int | None = None,
          make_observers: ObserverFactory | None = None) -> Result:
    """Run ``stepper`` on ``system`` with the run's observers and checkpoints.

    Run ``stepper`` on ``system`` (see the module docstring). The stepper is destroyed at
    the end.

    Args:
        system: the run's typed system.
        stepper: the run's stepper.
        run: the run.
        rec: what the run records.
        initial: the user's (u0, v0, p0) (:func:`~dolfinx_mbs.integrate.initial.
            reduced_initial`).
        restart: start from the checkpoint of ``rec.output`` instead.
        checkpoint_every: the steps between two checkpoints, or None.
        make_observers: the run's own observers, or None for those of ``rec``
            (:func:`observers`).

    Returns:
        The run's :class:`Result`.

    Raises:
        RuntimeError: a step failed (the formulation, the scheme, the time and the reason).
        checkpoint.Interrupted: a signal stopped the run at a step boundary.
    """
    comm = system.comm
    at = None
    try:
        q0, v0, p0 = (None if x is None and n == "p0" else reduced_initial(system, x, n)
                      for x, n in zip(initial, ("u0", "v0", "p0")))
        stepper.initial(run.t0, q0, v0, p0)
        resume = None
        if restart:
            assert rec.output is not None  # (a restart continues the run's output)
            resume = checkpoint.load(comm, rec.output, run.formulation, stepper.named,
                                     files=stepper.named is not None)
            checkpoint.check_model(comm, rec.output, resume, stepper.named)
            stepper.resume(resume, rec.output, run.t_end)
        writer = None
        if checkpoint_every is not None:
            assert rec.output is not None  # (the checkpoints lie beside the output)
            writer = checkpoint.Writer(comm, rec.output, checkpoint_every, run.formulation,
                                       run.t0 if resume is None else resume.t0, stepper.named)
        label = f"{stepper.formulation} ({stepper.method})"
        if make_observers is None:
            watch = observers(cast("RunSystem", system), label, stepper.n_steps, rec, resume,
                              stepper.energies_observer, stepper.probes_observer)
        else:
            watch = make_observers(label, stepper.n_steps, resume)
        try:
            signals = checkpoint.Signals(comm)
            at = Boundaries(system, stepper, watch, signals, writer, resume)
            stepper.prepare(at.needs())
            with signals:
                stepper.march(at)
            if writer is not None and writer.every is not None and \
                    stepper.steps % writer.every:  # the final state
                at.checkpoint()
            at.last_state_to_bodies()
            rotation = obs.named(watch, "rotation", RotationRange)
            if rotation is not None:  # the bodies' u hold the last state
                rotation.report(at.times[-1])
        except (PETSc.Error, FloatingPointError) as e:
            user = e.__cause__
            while isinstance(user, PETSc.Error):  # through a solver's own Python callback
                user = user.__cause__
            if user is not None and not isinstance(user, (PETSc.Error, FloatingPointError)):
                # an error raised in a callback (the user's load or motion function, a
                # check): petsc4py passes it on as the cause of error 101; raise it as it was
                # without the frames it came through (they hold this run's PETSc objects,
                # whose destruction below is collective); checks.collective notes the
                # original traceback
                user.__context__ = user.__cause__ = None
                raise user.with_traceback(None) from None
            finite = obs.named(watch, "finite", obs.Finite)  # not in a coupled run
            msg = (finite.failure if finite is not None else None) or stepper.failure(e)
            raise RuntimeError(f"time integration failed ({stepper.formulation}, "
                               f"{stepper.method}) at t={stepper.time:g}: {msg}"
                               f"{_failure_hint(msg, watch)}") from None
        finally:
            for o in watch.values():
                o.close()
    finally:
        if at is not None:
            at.destroy()
        stepper.destroy()
    return _result(at.times, watch, system, stepper, None if resume is None else resume.t)


def _failure_hint(msg: str, watch: Mapping[str, obs.Observer]) -> str:
    """What a failed step's message adds for the user: Newton's failure in their terms, and
    the computed frames' last outputs (where the run got to)."""
    out = ""
    if "DIVERGED_NONLINEAR_SOLVE" in msg or "DIVERGED_MAX_IT" in msg or \
            "DIVERGED_LINE_SEARCH" in msg:
        out += (". Newton's iterations did not converge in this step: a smaller dt may help; "
                "a load or speed far outside the model's range (a small-displacement body "
                "flung round, a torque that spins a hub up by orders of magnitude in a step) "
                "fails so at any dt")
    frames = watch.get("frames")
    records = getattr(frames, "records", None)
    if records and all(records):
        parts = []
        for fr, rec in zip(getattr(frames, "system").frames, records):
            scalars = {k: v for k, v in rec[-1].items() if np.ndim(v) == 0}
            parts.append(f"{fr.name}: " + ", ".join(f"{k} {float(v):.6g}"
                                                   for k, v in scalars.items()))
        out += f". The computed frames at the last completed step: {'; '.join(parts)}"
    return out


def _result(times: List[float], watch: Mapping[str, obs.Observer], system: Coordinates,
            stepper: Stepper, restarted_from: float | None = None) -> Result:
    pr = obs.named(watch, "probes", obs.ProbeHistory)
    dim = pr.probes.dim if pr else (system.bodies[0].gdim if system.bodies else 3)
    probes_arr = np.array(pr.values) if pr and pr.values else np.zeros((len(times), 0, dim))
    en = obs.named(watch, "energy", obs.Energies)
    energy = en.history if en is not None else {}
    re = obs.named(watch, "reactions", obs.Reactions)
    rhist = re.history if re is not None else {}
    rframe = re.frame_history if re is not None else {}
    ro = obs.named(watch, "rotation", RotationRange)
    rotation = ro.reported if ro is not None else {}
    frames = {}
    dr = obs.named(watch, "drives", obs.DriveHistory)
    if dr is not None:
        frames = {k: obs.FrameHistory(v) for k, v in dr.history.items()}
    st = obs.named(watch, "stability", Stability)
    own: Dict[str, Any] = {}   # what a run's own observers give (a coupled run's frames)
    for o in watch.values():
        given = o.results()
        if given is not None:
            own.update((k, dict(v)) for k, v in given.given())
    if "frames" in own:
        frames = own.pop("frames")
    if "energy" in own:
        energy = own.pop("energy")
    return Result(times=np.array(times), probes=probes_arr,
                  energy={k: np.array(v) for k, v in energy.items()},
                  formulation=stepper.formulation, ts_type=stepper.scheme,
                  steps=stepper.steps,
                  reactions={k: np.array(v) for k, v in rhist.items()},
                  reactions_frame={k: np.array(v) for k, v in rframe.items()}, frames=frames,
                  restarted_from=restarted_from, rotation=rotation,
                  instabilities=st.found if st is not None else [],
                  stepper=stepper.path, **own)
