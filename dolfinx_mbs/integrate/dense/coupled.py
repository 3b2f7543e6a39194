"""The dense path of a model with computed frames: the coupled equations stepped in small
arrays (``stepper="dense"``, or ``"auto"`` where :func:`applies` finds nothing against it).

The rows are those of :class:`~dolfinx_mbs.systems.coupled_dense.DenseCoupled` (the bodies'
inertia invariants projected once, the model as a few flat arrays); the schemes are those of
the TS path (:mod:`dolfinx_mbs.integrate.ts.coupled`), written in
:mod:`~dolfinx_mbs.integrate.dense.coupled_kernels` on the arrays as PETSc steps them, so that
both paths give the same steps to the Newton tolerance:

* ``"second-order"``: PETSc's TSALPHA (generalized-alpha for first-order systems, Jansen,
  Whiting and Hulbert) with its restart: two backward-Euler half steps give the initial rate by
  a backward difference (its step as the installed PETSc takes it,
  :func:`dolfinx_mbs.compat.alpha1_restart_step`), then one stage a step at t + alpha_f h;
* ``"first-order"``: PETSc's TSBDF of order 2 with its restart (a backward-Euler half step,
  then BDF2 on the variable grid t0, t0 + h/2, t0 + h, then on the steps).

Each stage is solved by Newton's method with the exact Jacobian (a dense LU of 2 n + m
unknowns) until the update is at round-off of its block (the elastic coordinates, their rates,
each frame unknown).

How a run goes, so that a step costs what its arithmetic costs:

* The run is cut into batches of :data:`BATCH` steps. Inside a batch the kernels step as many
  steps at once as the applied frame loads allow: a load function that reads nothing of the
  frame's state (a torque of time alone) is called once per stage, before the stages are
  solved (with a view of the frame that refuses to be read:
  :class:`~dolfinx_mbs.systems.coupled_dense.LazyView`); one that reads it is called once per
  Newton iteration, at the iterate, and those steps are taken one at a time from Python (its
  derivative by central differences once per stage). The parents' motions of hinges in
  prescribed frames are evaluated at the stages' times, before them.
* Every rank steps the same arrays: nothing inside a batch talks to the other ranks. An error
  on one rank (a load function that raises, a Newton step that fails) ends that rank's batch
  and is kept; at the batch's end one collective (:class:`dolfinx_mbs.checks.Deferred`)
  raises the first failing rank's error on every rank.
* The states are kept in one array; the observers see a batch at once where they all can
  (frames, probes as a matrix applied to q, energies and momenta from the invariants in one
  kernel call, the loads' work, the rotation range, the progress bar), else step by step
  after the batch (a CSV row, the fields, the user's callback).
* Checkpoints are the TS path's (:mod:`dolfinx_mbs.integrate.checkpoint`, "Computed frames":
  the elastic coordinates and rates in the rank files, the frame unknowns and the loads' work
  in ``latest.json``), so that either path restarts from the other's. A batch ends at each
  checkpoint step, and the run starts its scheme again there from the state as a restart
  does (TSALPHA's two backward-Euler half steps, TSBDF's half step; Maggi's stages choose
  their dependent coordinates and form their matrix anew; the loads are asked again whether
  they read the state), so that a restart takes the uninterrupted run's steps to the last
  bit. A run with checkpoints writes a CSV, so its observers see the steps one by one: a
  signal (SIGTERM, SIGINT) is noted while a batch is computed and acted on at the first step
  shown after it (the checkpoint written there, the run ended: the steps computed beyond it
  are dropped).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Protocol, Tuple, cast

import numpy as np

from dolfinx_mbs import checks, compat
from dolfinx_mbs.constraints.frame_joints import ElementOutput, Motor
from dolfinx_mbs.frames.base import cross3
from dolfinx_mbs.frames.computed import Hinge
from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate import observers as obs
from dolfinx_mbs.integrate.dense import coupled_kernels as kernels
from dolfinx_mbs.integrate.dense import joint_kernels
from dolfinx_mbs.integrate.dense.stepper import ProbeMatrix
from dolfinx_mbs.integrate.motion_range import RotationRange
from dolfinx_mbs.integrate.schemes import step_times
from dolfinx_mbs.integrate.stepper import CoupledRecords, Needs, PythonLoop, RunSpec, State
from dolfinx_mbs.petsc_options import given_options
from dolfinx_mbs.records import FrozenMapping
from dolfinx_mbs.systems.coupled_dense import DenseCoupled, LazyView, StateRead, dense_reason
from dolfinx_mbs.systems.coupled_dense_joints import DenseJoints
from dolfinx_mbs.systems.coupled_joints import _central

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.integrate.stepper import Boundary
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["DenseCoupledStepper", "applies", "newton_tolerance", "DENSE_COUPLED_MAX",
           "DENSE_OPTIONS", "BATCH"]

log = logging.getLogger(__name__)

#: the largest number of elastic reduced unknowns that ``stepper="auto"`` steps in dense form
#: (a dense LU of 2 n + m a Newton iteration, n^2 (1 + g + n) products a residual)
DENSE_COUPLED_MAX = 60
#: the PETSc options the dense path reads (any other sends ``stepper="auto"`` to the TS path):
#: Newton's update tolerance, as the TS path's SNES takes it (:func:`newton_tolerance`)
DENSE_OPTIONS = ("snes_stol",)
#: the steps of a batch (between two looks at the other ranks, the observers, the signals)
BATCH = 1000
#: after a load function read the frame's state, the steps before it is asked again whether
#: it reads nothing
PROBE_AGAIN = 50
#: Maggi's stages form Newton's matrix again where the updates shrink less than this from one
#: iteration to the next (its rows' derivatives are differenced: dearer than iterations)
MAGGI_REFRESH = 0.5
#: where a stage that began with an earlier stage's matrix had to form it again, the next
#: stages begin with their own (a stiff mechanism's matrix, a link's axial mode at a few
#: steps a period, goes stale in one step: its first updates would be wasted), this many
MAGGI_FRESH = 16
#: Maggi's stages also stop where the rows have fallen to this fraction of their size (the
#: largest first residual of the run's stages, the unbalanced loads of a start at rest): a
#: stiff reduced mode (a link's axial mode at its joint) can leave the updates of a small
#: unknown bouncing between two values at round-off, which the update test reads as no
#: convergence
MAGGI_RESIDUAL = 1e-12
#: the compiled stages' Newton matrices formed with one differencing of the rows' position
#: derivatives (between, they are carried by dB/dp to the iterate's velocities and
#: multipliers: joint_kernels._maggi_matrix); measured on the stiffened slider-crank at
#: dt = 1e-4 / k, k = 1, 2, 4, 8: 0.3-2.4 % more iterations than at one in four, 6-8 % less
#: time in the stages (the differences cost what 2.5 iterations cost); on the four models of
#: bench/maggi_paths.py 0-23 % less
MAGGI_DIFFERENCES = 16


def compiled_joints(system: CoupledSystem) -> bool:
    """Whether Maggi's stages of ``system`` run as one compiled call each
    (:func:`~dolfinx_mbs.integrate.dense.joint_kernels.stage`): numba installed, joints and
    motors the kernels take (:func:`~dolfinx_mbs.integrate.dense.joint_kernels.
    tables_reason`), no torque motor (a function of the state, called from Python); a stage
    whose frame loads read the state is solved from Python all the same.

    Args:
        system: the coupled system.

    Returns:
        True where they do.
    """
    return bool(kernels.COMPILED and system.jointset.active
                and joint_kernels.tables_reason(system) is None
                and not system.jointset.torque_motors)


def applies(system: CoupledSystem, run: RunSpec) -> str | None:
    """Why the dense path cannot step ``run`` on the coupled ``system``, or None.

    Args:
        system: the coupled system.
        run: the run.

    Returns:
        The reason in words, or None.
    """
    if run.formulation not in ("second-order", "first-order"):
        return f"formulation {run.formulation!r} (the dense path: 'second-order', 'first-order')"
    other = sorted(set(run.options or ()) - set(DENSE_OPTIONS))
    if other:
        return f"PETSc options (options=: {', '.join(other)})"
    return dense_reason(system)


def newton_tolerance(run: RunSpec, default: float) -> float:
    """The Newton update tolerance of the dense path: the run's ``snes_stol`` (``options=``,
    else the options database under the run's prefix), as the TS path's SNES reads it, else
    ``default``.

    Args:
        run: the run.
        default: the tolerance where the run sets none.

    Returns:
        The tolerance.

    Raises:
        ValueError: the option is not a number in [0, 1).
    """
    given = given_options(run.prefix, run.options, "snes_stol").get("snes_stol", default)
    try:
        value = float(given)   # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 <= value < 1.0:
        raise ValueError(f"Newton's tolerance snes_stol (options= or -{run.prefix}snes_stol) "
                         f"must be a number in [0, 1), not {given!r}")
    return value


class FrameLoads:
    """The applied frame loads of a coupled system as the dense path evaluates them: their
    generalized forces Q (at the speeds' places of the frame unknowns f), their derivative
    -dQ/df, their moments about the frames' origins.

    A load whose function gives a number for a torque about a hinge's axis (what
    :meth:`~dolfinx_mbs.systems.coupled.FrameLoad.interpret` makes of 1.0: a moment along
    the axis, local) takes a short way: its generalized force is the number times the
    axis's, in floats.

    Args:
        system: the coupled system.
        dense: its dense form (the frames' partial velocities).
    """

    def __init__(self, system: CoupledSystem, dense: DenseCoupled) -> None:
        self.system, self.m = system, dense.plan.m
        ff = dense.plan.ff
        self.on = []
        for i, (fr, zs, ws) in enumerate(zip(system.frames, system.zslice, system.wslice)):
            if not system.loads_on[i]:
                continue
            k = ws.stop - ws.start
            # a hinge's partial velocities are constants; a free frame's T (its global
            # velocity's) turns with it: None, taken from the frame's jet
            const = isinstance(fr, Hinge)
            Tt = np.ascontiguousarray(ff[i, 30:48].reshape(3, 6)[:, :k].T) if const else None
            Ot = np.ascontiguousarray(ff[i, 48:66].reshape(3, 6)[:, :k].T)
            loads = []
            for ld in system.loads_on[i]:
                try:
                    F1, M1, local1 = ld.interpret(1.0)
                    unit = None if (np.any(F1) or not local1) else M1.tolist()
                except (ValueError, TypeError):
                    unit = None
                # a number's generalized force (by speed) and its moment about the origin
                q1 = None if unit is None else (Ot @ M1).tolist()
                # whether the force enters: through its arm about the origin, or through the
                # origin's partial velocities T (a hinge off its axis: T = -n x c)
                arm = Tt is None or bool(np.any(ld.point)) or bool(np.any(Tt))
                loads.append((ld, arm, unit, q1))
            self.on.append((i, fr, zs, ws, loads, Tt, Ot))
        self.zero = np.zeros((1, self.m))
        self._views = [LazyView(fr, 0.0, None, None, probe=True) for _, fr, *_ in self.on]

    @property
    def active(self) -> bool:
        """Whether the system has applied frame loads."""
        return bool(self.on)

    def _add(self, Q: List[float], ws: slice, ld: Any, arm: bool, Tt: np.ndarray | None,
             Ot: np.ndarray, F: np.ndarray, M: np.ndarray, Ms: List[float]) -> None:
        """Add a load of force F and moment M (local) to Q and the frame's moment Ms."""
        if arm:
            M = M + cross3(ld.point, F)
            g = (Tt @ F if Tt is not None else 0.0) + Ot @ M
        else:
            g = Ot @ M
        for j, gj in enumerate(g.tolist()):
            Q[ws.start + j] += gj
        for c in range(3):
            Ms[c] += float(M[c])

    def probe(self, t: float) -> Tuple[List[float], List[List[float]]] | None:
        """The loads' Q at ``t`` and their moments by loaded frame, where every function
        reads nothing of its frame and gives local components (a hinge's torque as a number:
        about its axis), else None. Lists of floats (a step's few numbers: no arrays made).

        Args:
            t: the time (s).

        Returns:
            (Q, moments), or None.
        """
        Q = [0.0] * self.m
        out = []
        for k, (_, fr, zs, ws, loads, Tt, Ot) in enumerate(self.on):
            view = self._views[k]   # a view that refuses to be read is the same at any time
            Ms = [0.0, 0.0, 0.0]
            for ld, arm, unit, q1 in loads:
                try:
                    val = ld.fn(t, view)
                except StateRead:
                    return None
                if q1 is not None and type(val) is float and math.isfinite(val):
                    for j, qj in enumerate(q1):
                        Q[ws.start + j] += val * qj
                    assert unit is not None  # (q1 comes with the unit moment)
                    for c in range(3):
                        Ms[c] += val * unit[c]
                    continue
                F, M, local = ld.interpret(val)
                if not local or Tt is None and np.any(F):   # the rotation needed
                    return None
                self._add(Q, ws, ld, arm, Tt, Ot, F, M, Ms)
            out.append(Ms)
        return Q, out

    def at(self, t: float, f: np.ndarray) -> Tuple[List[float], List[List[float]]]:
        """The loads' Q at (t, f) and each loaded frame's moment about its origin (local
        components), lists of floats.

        Args:
            t: the time (s).
            f: the frame unknowns.

        Returns:
            (Q, the moments by loaded frame).
        """
        Q = [0.0] * self.m
        out = []
        for _, fr, zs, ws, loads, Tt, Ot in self.on:
            z, w = f[zs], f[ws]
            view = LazyView(fr, t, z, w)
            if Tt is None:
                Tt = np.ascontiguousarray(fr.jet(t, z, w, np.zeros(len(w))).T.T)
            Ms = [0.0, 0.0, 0.0]
            for ld, arm, unit, q1 in loads:
                val = ld.fn(t, view)
                if q1 is not None and type(val) is float and math.isfinite(val):
                    for j, qj in enumerate(q1):
                        Q[ws.start + j] += val * qj
                    assert unit is not None  # (q1 comes with the unit moment)
                    for c in range(3):
                        Ms[c] += val * unit[c]
                    continue
                F, M, local = ld.interpret(val)
                if not local:
                    R = fr.state_at(t, z, w).R
                    F, M = R.T @ F, R.T @ M
                self._add(Q, ws, ld, arm, Tt, Ot, F, M, Ms)
            out.append(Ms)
        return Q, out

    def derivative(self, t: float, f: np.ndarray) -> np.ndarray:
        """-dQ/df by central differences in each loaded frame's unknowns (the step scaled by
        each unknown, as the TS path's).

        Args:
            t: the time (s).
            f: the frame unknowns.

        Returns:
            The m x m derivative (rows at the speeds' places).
        """
        D = np.zeros((self.m, self.m))
        for _, fr, zs, ws, *_ in self.on:
            for j in list(range(zs.start, zs.stop)) + list(range(ws.start, ws.stop)):
                h = 1e-7 * max(1.0, abs(f[j]))
                fp, fm = f.copy(), f.copy()
                fp[j] += h
                fm[j] -= h
                D[:, j] -= (np.array(self.at(t, fp)[0]) - np.array(self.at(t, fm)[0])) / (2.0 * h)
        return D


class _DenseObserver(obs.Observer):
    """An observer of the dense coupled path: it reads the stepper's arrays of the run's
    states (:attr:`DenseCoupledStepper.Y` and the loads at the step ends) by index, one step
    at a time or a batch at once."""

    whole_run = True

    def __init__(self, stepper: DenseCoupledStepper) -> None:
        self.stepper = stepper

    def observe(self, step: obs.Step) -> List[float]:
        """Record the step (its index in the stepper's arrays).

        Args:
            step: the run's state.

        Returns:
            The CSV columns.
        """
        index = self.stepper.local(step.index)
        return self.rows(index, index)[-1]

    def rows(self, lo: int, hi: int) -> List[List[float]]:  # pragma: no cover - abstract
        """Record the steps ``lo`` to ``hi`` (inclusive) and return their CSV rows.

        Args:
            lo: the first step's index.
            hi: the last step's index.

        Returns:
            Each step's CSV columns.
        """
        raise NotImplementedError


class DenseFrames(_DenseObserver):
    """Each computed frame's outputs (coordinates, speeds) and the applied loads' moment
    (about a hinge's axis for a hinge), as :class:`~dolfinx_mbs.integrate.coupled.Frames`;
    a hinge's angle and rate are columns of the states' array, kept as arrays.

    Args:
        stepper: the run's stepper.
    """

    def __init__(self, stepper: DenseCoupledStepper) -> None:
        super().__init__(stepper)
        system = stepper.system
        self.columns = [f"{fr.name}.{k}" for fr in system.frames
                        for k, val in fr.describe(*fr.initial()).items() if np.ndim(val) == 0]
        self.lo: int | None = None
        self.hi = -1
        #: the frames' outputs at the last step (the callback's)
        self.last: Mapping[str, Mapping[str, Any]] = {}

    def rows(self, lo: int, hi: int) -> List[List[float]]:
        """Record the steps ``lo`` to ``hi`` (see :class:`_DenseObserver`).

        Args:
            lo: the first step's index.
            hi: the last step's index.

        Returns:
            Each step's CSV columns.
        """
        st = self.stepper
        s = st.system
        if self.lo is None:
            self.lo = lo
        self.hi = hi
        if st.whole:   # no CSV row, no callback: the arrays at the end
            return []
        o = 2 * st.dense.n
        out = []
        for index in range(lo, hi + 1):
            outs = self.last = s.frame_outputs(st.Y[index, o:])
            out.append([float(val) for fr in s.frames for val in outs[fr.name].values()
                        if np.ndim(val) == 0])
        return out

    def results(self) -> obs.ObserverResults:
        """``frames``: {name: :class:`~dolfinx_mbs.integrate.observers.FrameHistory`}."""
        st = self.stepper
        s = st.system
        o = 2 * st.dense.n
        F = st.Y[self.lo:self.hi + 1, o:] if self.lo is not None else st.Y[:0, o:]
        loaded = {i: k for k, (i, *_) in enumerate(st.loads.on)}
        out = {}
        for i, (fr, zs, ws) in enumerate(zip(s.frames, s.zslice, s.wslice)):
            if isinstance(fr, Hinge):
                arrays: Dict[str, np.ndarray] = {"angle": F[:, zs.start].copy(),
                                                 "rate": F[:, ws.start].copy()}
            else:
                arrays = fr.describe_many(F[:, zs], F[:, ws])
            if s.loads:
                M = (np.array([st.M_end[k][loaded[i]] for k in range(self.lo, self.hi + 1)])
                     if i in loaded and self.lo is not None else np.zeros((len(F), 3)))
                axis = getattr(fr, "axis", None)
                arrays["torque"] = M @ axis if axis is not None else M
            h = obs.FrameHistory([])
            for k, v in arrays.items():
                setattr(h, k, v)
            h.names = tuple(arrays)
            out[fr.name] = h
        return obs.ObserverResults(frames=out)


class _Torques(Protocol):
    """The joints' observer, as the motors' work reads it."""

    def driven_power(self, lo: int, hi: int) -> np.ndarray:
        """The driven motors' power at the states ``lo`` to ``hi``."""


class DenseWork(_DenseObserver):
    """The work of the applied frame loads and of the driven motors: trapezoidal in their
    power at the step ends (the loads' Q . w, each motor's torque times the rate it
    prescribes; as :class:`~dolfinx_mbs.integrate.coupled.Work`: the first interval takes
    its end's power, the driven torques not known at the run's start); kept by a checkpoint.

    Args:
        stepper: the run's stepper.
        resume: the checkpoint the run continues from, or None.
        joints: the joints' observer, which records a batch before this one (with driven
            motors), or None.
    """

    columns = ["work"]

    def __init__(self, stepper: DenseCoupledStepper,
                 resume: checkpoint.Checkpoint | None = None,
                 joints: _Torques | None = None) -> None:
        super().__init__(stepper)
        self.joints = joints
        self.work = 0.0
        self.last: Tuple[float, float] | None = None
        self.history: List[float] = []
        acc = None if resume is None else resume.accumulators.get("work")
        if acc:   # the TS path's Work writes the same
            work, t, power = acc.get("work"), acc.get("t"), acc.get("power")
            self.work = float(work or 0.0)
            if t is not None:
                self.last = (float(t), math.nan if power is None else float(power))

    def accumulators(self) -> obs.WorkAccumulators:
        """The work so far and the last (time, power), as the TS path's
        :class:`~dolfinx_mbs.integrate.coupled.Work` keeps them.

        Returns:
            ``work``, ``t``, ``power``.
        """
        last = self.last or (None, None)
        power = last[1] if last[1] is not None and math.isfinite(last[1]) else None
        return obs.WorkAccumulators(work=self.work, t=last[0], power=power)

    def rows(self, lo: int, hi: int) -> List[List[float]]:
        """Record the steps ``lo`` to ``hi`` (see :class:`_DenseObserver`).

        Args:
            lo: the first step's index.
            hi: the last step's index.

        Returns:
            Each step's CSV columns.
        """
        st = self.stepper
        o = 2 * st.dense.n
        t = np.array(st.times[lo:hi + 1])
        if st.loads.active:
            power = np.einsum("ij,ij->i", np.array(st.Q_end[lo:hi + 1]), st.Y[lo:hi + 1, o:])
        else:
            power = np.zeros(len(t))
        if self.joints is not None:
            power = power + self.joints.driven_power(lo, hi)
        if self.last is not None:
            t = np.concatenate([[self.last[0]], t])
            power = np.concatenate([[self.last[1]], power])
        if len(power) > 1 and not math.isfinite(power[0]):   # the first torques: the end's
            power[0] = power[1]
        inc = np.concatenate([[0.0], 0.5 * (power[1:] + power[:-1]) * np.diff(t)])
        work = self.work + np.cumsum(inc)
        if self.last is not None:
            work = work[1:]
        self.work = float(work[-1])
        self.last = (float(t[-1]), float(power[-1]))
        self.history.extend(work.tolist())
        return [[w] for w in work]


class _History(Protocol):
    """A work observer: its history is ``energy["work"]``."""

    history: List[float]


class DenseMonitors(_DenseObserver):
    """The coupled run's energies and momenta (:func:`~dolfinx_mbs.systems.coupled.monitors`)
    from the invariants, a batch of states in one kernel call; a state whose energy is not
    finite stops the run.

    Args:
        stepper: the run's stepper.
        work: the run's work observer (its history is ``energy["work"]``).
    """

    columns = ["kinetic", "elastic", "gravity", "total"]
    needs_velocity = True

    def __init__(self, stepper: DenseCoupledStepper, work: _History) -> None:
        super().__init__(stepper)
        self.work = work
        self.values: List[np.ndarray] = []

    def rows(self, lo: int, hi: int) -> List[List[float]]:
        """Record the steps ``lo`` to ``hi`` (see :class:`_DenseObserver`).

        Args:
            lo: the first step's index.
            hi: the last step's index.

        Returns:
            Each step's CSV columns.

        Raises:
            FloatingPointError: the energy is not finite.
        """
        st = self.stepper
        out = st.monitors(lo, hi)
        self.values.append(out)
        bad = ~np.isfinite(out[:, 3])
        if bad.any():
            k = int(np.argmax(bad))
            raise FloatingPointError(f"the solution is not finite at t={st.times[lo + k]:g}")
        return cast(List[List[float]], out[:, :4].tolist())

    def results(self) -> obs.ObserverResults:
        """``energy`` and ``momentum``, as the TS path's observer gives them."""
        h = np.concatenate(self.values) if self.values else np.zeros((0, 10))
        energy = {k: h[:, i].copy() for i, k in enumerate(self.columns)}
        energy["work"] = np.array(self.work.history)
        return obs.ObserverResults(
            energy=energy,
            momentum={"linear": h[:, 4:7].copy(), "angular": h[:, 7:10].copy()})


def _factored_well(M: np.ndarray) -> tuple | None:
    """The square ``M``'s LU factors (scipy's) where their pivots all exceed 1e-10 of its
    largest entry, else None: the test of B_d and g_d of Maggi's stages
    (:func:`~dolfinx_mbs.integrate.dense.joint_kernels.stage`'s own), which are chosen again
    where it fails."""
    import scipy.linalg as sla
    if M.size == 0:
        return (M, np.zeros(0, dtype=np.int32))
    lu = sla.lu_factor(M, check_finite=False)
    return lu if np.abs(np.diag(lu[0])).min() > 1e-10 * np.abs(M).max() else None


def _complement(index: np.ndarray, size: int) -> np.ndarray:
    """The indices below ``size`` that are not in ``index``, in order."""
    keep = np.ones(size, dtype=bool)
    keep[index] = False
    return np.flatnonzero(keep)


class MaggiStage:
    """A stage of a model with joints or driven motors, by Maggi's equations: the joints'
    multipliers eliminated by the configuration-dependent null-space bases of their rows,
    the independent velocities as unknowns.

    At a stage (the scheme's values y = ca X + da, rates y' = cb X + db of the state X) the
    TS path solves the coupled rows with the joints' forces B^T lam in the velocities' rows,
    the velocity rows h = B V + b = 0, the position rows g = 0 and a multiplier mu of g_p^T in
    the kinematic rows (Gear, Gupta and Leimkuhler). Here the unknowns are the positions p =
    (q, z), the independent velocities u and the free frames' auxiliary momenta: the
    velocities are V = A u + a, A = [I; -B_d^-1 B_i] (the dependent velocities d chosen once
    by QR with column pivoting, again where B_d grows ill-conditioned), so that h = 0 holds
    exactly; the rows are g = 0, C^T (kinematic rows) = 0 (C = [I; -g_d^-1 g_i] spans the null
    space of g_p: mu eliminated), A^T (velocities' rows) = 0 (lam eliminated) and the
    auxiliary rows. This is the TS path's discretization with lam and mu eliminated: the same
    solution to the Newton tolerance, the joints closed at velocity level at the stage and at
    position level to round-off (the converged positions moved onto the rows by one Newton
    step in the dependent positions, :meth:`_closed`; at the step's end for BDF2, whose stage
    is the step's end). lam is
    recovered from the dependent velocities' rows, lam = -B_d^-T (velocities' rows)_d.
    Newton's matrix (the chain rule through V(p, u), with the rows' curvature B_p^T lam) is
    formed at the stage's first iterate and again where the updates shrink slowly.

    Args:
        stepper: the dense stepper (its plan, kernels, loads and parents).
    """

    def __init__(self, stepper: DenseCoupledStepper) -> None:
        self.st = stepper
        self.dj = DenseJoints(stepper.system, stepper.dense)
        dj = self.dj
        #: the rows' kernels' tables (compiled kernels, elements they take), else None: the
        #: rows of the object form
        self.tables = joint_kernels.JointTables(dj) if (
            kernels.COMPILED and joint_kernels.tables_reason(dj.system) is None) else None
        self._at: Tuple[float, tuple] = (math.nan, ())
        # the compiled stages' memory, Newton's matrix's factors and a zero load derivative
        nk = len(dj.P) + len(dj.V) - dj.n_rows + len(dj.A)
        self._kmem = np.zeros(5)
        self._KF = np.zeros((nk, nk))
        nr, nP, nV = dj.n_rows, len(dj.P), len(dj.V)
        #: the rows' position derivatives kept by the compiled stages (dh/dp, d(B^T lam)/dp,
        #: dB/dp, V and lam where differenced)
        self._pd = (np.zeros((nr, nP)), np.zeros((nV, nP)), np.zeros((nr, nV, nP)),
                    np.zeros(nV), np.zeros(nr))
        self._kpiv = np.zeros(nk, dtype=np.int64)
        self._DQ0 = np.zeros((stepper.plan.m, stepper.plan.m))
        #: the compiled stage's work space (made at its first use)
        self._work: tuple | None = None
        self.P, self.V, self.A = dj.P, dj.V, dj.A
        self.pos = dj.pos
        self.dep: np.ndarray | None = None       # the dependent velocities (indices in V)
        self.dep_p: np.ndarray | None = None     # the dependent positions (indices in P)
        #: the last stage's multipliers
        self.lam = np.zeros(dj.n_rows)
        #: (the shift, the factors) of Newton's matrix kept from stage to stage
        self.kept: tuple | None = None
        #: the rows' size: the largest first residual of the stages so far (MAGGI_RESIDUAL)
        self.scale = 0.0
        #: the stages left that begin with a matrix of their own (MAGGI_FRESH)
        self.fresh = 0
        #: a compiled run's stage asked to choose the dependent coordinates again: the next
        #: stage is Python's, from its guess (:meth:`_adopt`)
        self.choose = False
        # the elastic velocities weigh little in the choice of the dependent ones (the frames'
        # speeds are the natural ones to follow the joints)
        n = stepper.plan.n
        self._wV = np.concatenate([np.full(n, 1e-3), np.ones(len(self.V) - n)])
        self._wP = np.concatenate([np.full(n, 1e-3), np.ones(len(self.P) - n)])

    def reset(self) -> None:
        """Forget the dependent velocities and positions chosen, the matrix kept and the rows'
        size, as a new run starts (at a checkpoint: the run goes on as a restart from it does)."""
        self.dep = self.dep_p = None
        self.kept = None
        self.fresh = 0
        self.choose = False
        self.scale = 0.0
        self.lam = np.zeros(self.dj.n_rows)
        self._at = (math.nan, ())
        self._kmem[:] = 0.0

    @staticmethod
    def _choose(M: np.ndarray, weight: np.ndarray, what: str) -> np.ndarray:
        """The columns of ``M`` (full row rank) to solve for: QR with column pivoting of the
        weighted columns."""
        import scipy.linalg as sla
        if M.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        _, Rq, perm = sla.qr(M * weight, mode="economic", pivoting=True)
        d = np.abs(np.diag(Rq))
        if not d.size or d[-1] <= 1e-12 * d[0]:
            raise ValueError(f"the joints' {what} rows are redundant (rank "
                             f"{int(np.sum(d > 1e-12 * d[0]))} of {M.shape[0]}): remove a "
                             "joint or a motor that repeats another's rows")
        return np.sort(perm[:M.shape[0]])

    @staticmethod
    def _split(M: np.ndarray, dep: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        free = _complement(dep, M.shape[1])
        return free, M[:, dep]

    def _fixed(self, t: float) -> tuple:
        """The kernels' fixed slots and motors' prescriptions at ``t`` (kept for the last
        time asked: a stage's iterations share it)."""
        assert self.tables is not None  # (the kernels' path)
        if self._at[0] != t:
            self._at = (t, self.tables.at(t))
        return self._at[1]

    def _rows(self, t: float, ys: np.ndarray, par: np.ndarray, positions: bool = True
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """(g, h, B, g_p) at the state (:meth:`~dolfinx_mbs.systems.coupled_dense_joints.
        DenseJoints.evaluate`), by the compiled kernels where they take the elements."""
        tb = self.tables
        if tb is None:
            return self.dj.evaluate(t, ys, positions)
        p, dj = self.st.plan, self.dj
        fixed, presc = self._fixed(t)
        g = np.zeros(dj.n_rows)
        h = np.zeros(dj.n_rows)
        B = np.zeros((dj.n_rows, len(self.V)))
        gp = np.zeros((len(self.pos), len(self.P)) if positions else (0, 0))
        joint_kernels.rows(tb.ei, tb.ef, p.fi, p.ff, par, p.grav, p.n, fixed, presc, tb.Tn,
                           tb.uoff, ys, positions, g, h, B, gp)
        return g, h, B, gp if positions else None

    def _position_derivatives(self, t: float, ys: np.ndarray, par: np.ndarray
                              ) -> Tuple[np.ndarray, np.ndarray]:
        """(dh/dp, d(B^T lam)/dp) at the state (:meth:`~dolfinx_mbs.systems.
        coupled_dense_joints.DenseJoints.position_derivatives`), by the compiled kernels
        where they take the elements."""
        tb = self.tables
        if tb is None:
            return self.dj.position_derivatives(t, ys, self.lam)
        p, dj = self.st.plan, self.dj
        fixed, presc = self._fixed(t)
        hp = np.zeros((dj.n_rows, len(self.P)))
        fp = np.zeros((len(self.V), len(self.P)))
        joint_kernels.position_derivatives(tb.ei, tb.ef, p.fi, p.ff, par, p.grav, p.n, fixed,
                                           presc, tb.Tn, ys, self.lam, hp, fp,
                                           np.zeros((dj.n_rows, len(self.V), len(self.P))))
        return hp, fp

    def outputs(self, t: float, y: np.ndarray, lam: np.ndarray) -> Mapping[str, ElementOutput]:
        """The joints' and motors' outputs at the state ``y`` from the multipliers ``lam``
        (:meth:`~dolfinx_mbs.systems.coupled_dense_joints.DenseJoints.outputs`; by the
        kernels' rows where they take the elements).

        Args:
            t: the time (s).
            y: the dense state.
            lam: the multipliers (one per row).

        Returns:
            The outputs by name (read-only).
        """
        tb = self.tables
        if tb is None:
            return self.dj.outputs(t, y, lam)
        p = self.st.plan
        par = self.st.parents_at(t)
        g = self._rows(t, y, par, False)[0]
        states = kernels.frame_states(p.fi, p.ff, par[None], p.grav, p.n, y[None])[0]
        fixed = self._fixed(t)[0]
        out: Dict[str, ElementOutput] = {}
        for e, blk in enumerate(self.dj.js.blocks):
            el, r0, r1 = blk.element, blk.start, blk.stop
            if isinstance(el, Motor):
                out[el.name] = el.output(lam[r0], g[r0])
                continue
            fa = tb.ei[e, 5]
            Ra = (states[fa, 0:9] if fa >= 0 else fixed[tb.ei[e, 6], 0:9]).reshape(3, 3)
            out[el.name] = el.output_at(Ra, lam[r0:r1], g[r0:r1])
        return FrozenMapping(out)

    def outputs_at(self, times: np.ndarray, Y: np.ndarray, lam: np.ndarray,
                   frames: Tuple[np.ndarray, np.ndarray]
                   ) -> Tuple[Dict[str, Dict[str, np.ndarray]], np.ndarray]:
        """:meth:`outputs` at a batch of states, as arrays: each element's fields by name
        (a joint's ``force`` (S, 3) and ``drift``, a motor's ``torque`` and ``drift``), the
        rows and the frames' rotations of all the states in one kernel call each; and the
        driven motors' prescribed rates there (their functions called once a state).

        Args:
            times: the states' times (s).
            Y: the dense states (rows).
            lam: their multipliers (rows, one per joint row).
            frames: the states' parents' and frames' states
                (:meth:`DenseCoupledStepper.batch_frames`).

        Returns:
            (the fields by element name, the rates: states x driven motors).
        """
        tb = self.tables
        if tb is None:
            js = self.dj.js
            rates = np.array([js.prescribed_at(m, times)[:, 1] for m in js.motors]
                             ).reshape(len(js.motors), len(times)).T
            recs = [self.outputs(t, y, lm) for t, y, lm in zip(times, Y, lam)]
            return {name: {k: np.array([r[name][k] for r in recs]) for k in recs[0][name]}
                    for name in (recs[0] if recs else {})}, rates
        p = self.st.plan
        spar, states = frames
        fixed, presc = tb.at_times(times)
        G = joint_kernels.position_rows(tb.ei, tb.ef, p.fi, p.ff, spar, p.grav, p.n, fixed,
                                        presc, tb.Tn, tb.uoff, Y, self.dj.n_rows)
        out: Dict[str, Dict[str, np.ndarray]] = {}
        for e, blk in enumerate(self.dj.js.blocks):
            el, r0, r1 = blk.element, blk.start, blk.stop
            if isinstance(el, Motor):
                out[el.name] = {"torque": -lam[:, r0], "drift": np.abs(G[:, r0])}
                continue
            fa = tb.ei[e, 5]
            Ra = (states[:, fa, 0:9] if fa >= 0 else
                  np.broadcast_to(fixed[:, tb.ei[e, 6], 0:9], (len(Y), 9))).reshape(-1, 3, 3)
            out[el.name] = {"force": el.forces_on_b(Ra, lam[:, r0:r1]),
                            "drift": np.abs(G[:, r0:r1]).max(axis=1, initial=0.0)}
        return out, np.broadcast_to(presc[:, :, 1], (len(Y), presc.shape[1]))

    def _state(self, t: float, ys: np.ndarray, u: np.ndarray, par: np.ndarray) -> tuple:
        """The stage's velocities V = A u + a at its positions (written into ``ys``), and the
        rows there: (g, B, g_p, the independent velocities, B_d's factors). The rows are
        linear in V, so h = B V + b gives b at once, and the dependent velocities
        V_d = -B_d^-1 (B_i u + b)."""
        import scipy.linalg as sla
        g, h, B, gp = self._rows(t, ys, par)
        if self.dep is None:
            self.dep = self._choose(B, self._wV, "velocity")
        free = _complement(self.dep, B.shape[1])
        lu = _factored_well(B[:, self.dep])
        if lu is None:   # choose again
            self.kept = None
            self.dep = self._choose(B, self._wV, "velocity")
            free = _complement(self.dep, B.shape[1])
            lu = sla.lu_factor(B[:, self.dep], check_finite=False)
        Vs = ys[self.V]
        b = h - B @ Vs
        Vs[free] = u
        Vs[self.dep] = -sla.lu_solve(lu, B[:, free] @ u + b, check_finite=False)
        ys[self.V] = Vs
        # g, h and g_p do not depend on V (g) or are linear in it (h: the rows now hold)
        return g, B, gp, free, lu

    def solve(self, t: float, ca: float, da: np.ndarray, cb: float, db: np.ndarray,
              X: np.ndarray, Xs: np.ndarray, par: np.ndarray) -> np.ndarray:
        """The stage's state X (the scheme's unknown), from the guess ``X``; ``Xs`` the step's
        start (the convergence test's reference). Newton's matrix of an earlier stage serves
        while the updates shrink fast (it is formed again at the shift of a new step size or
        where they do not).

        Args:
            t: the stage's time (s).
            ca: dy/dX.
            da: y at X = 0.
            cb: dy'/dX.
            db: y' at X = 0.
            X: the guess.
            Xs: the step's start.
            par: the parents' states at t.

        Returns:
            X.
        """
        import scipy.linalg as sla
        st, dj = self.st, self.dj
        p, K = st.plan, st.K
        P, V, A = self.P, self.V, self.A
        nP = len(P)
        o = 2 * p.n
        shift = cb / ca
        ys = ca * X + da
        if self.dep is None:   # the partition at the guess
            self.dep = self._choose(self._rows(t, ys, par, False)[2], self._wV, "velocity")
        if self.tables is not None and not self.choose:
            got = self._compiled(t, ca, da, cb, db, X, Xs, par, ys)
            if got is not None:
                return got
        self.choose = False
        free = _complement(self.dep, len(V))
        u = ys[V][free].copy()
        F = np.zeros(p.N)
        J = np.zeros((p.N, p.N))
        if self.kept is not None and (self.kept[0] != shift or self.fresh > 0):
            self.kept = None     # another step size (or a stiff model): a new matrix
        self.fresh = max(self.fresh - 1, 0)
        stale = self.kept is not None
        done = _Converged(p.n, p.m, MAGGI_REFRESH, st.stol)
        exact = False
        before = ys
        for it in range(kernels.MAXIT):
            g, B, gp, free, lu = self._state(t, ys, u, par)
            if it > 0:
                code = done.update((ys - before) / ca, (ys - da) / ca, Xs, it - 1, exact)
                if code > 0:
                    st.iterations += code
                    st.stages += 1
                    return self._closed(ys, g, gp, ca, da)
            Xc = (ys - da) / ca
            yd = cb * Xc + db
            Qa = np.asarray(st.loads.at(t, ys[o:])[0] if st.loads.active else np.zeros(p.m),
                            dtype=float)
            if dj.js.torque_motors:
                Qa = Qa + dj.motor_torques(t, ys)
            exact = self.kept is None or done.refresh
            if stale and done.refresh:
                self.fresh = MAGGI_FRESH
                stale = False
            DQ = self._load_derivative(t, ys) if exact else np.zeros((p.m, p.m))
            K.residual(p.arrays(), par, ys, yd, shift, Qa, DQ, exact, F, J)
            if self.dep_p is None or _factored_well(gp[:, self.dep_p].T) is None:
                self.kept = None
                exact = True
                self.dep_p = self._choose(gp, self._wP, "position")
            free_p = _complement(self.dep_p, nP)
            gpd = gp[:, self.dep_p]
            FP, FV, FA = F[P], F[V], F[A]
            # lam from the dependent velocities' rows, then the projected rows
            self.lam = -sla.lu_solve(lu, FV[self.dep], trans=1, check_finite=False)
            Bi = B[:, free]
            RD = FV[free] + Bi.T @ self.lam
            RK = FP[free_p] - gp[:, free_p].T @ np.linalg.solve(gpd.T, FP[self.dep_p])
            rows = np.concatenate([g[self.pos], RK, RD, FA])
            if not np.all(np.isfinite(rows)):
                raise FloatingPointError(_failure(kernels.NOT_FINITE, t))
            fnorm = float(np.abs(rows).max())
            if it == 0:
                self.scale = max(self.scale, fnorm)
            if done.plateau(fnorm) or (it > 0 and fnorm <= MAGGI_RESIDUAL * self.scale):
                st.iterations += it
                st.stages += 1
                return self._closed(ys, g, gp, ca, da)
            if exact:
                self.kept = (shift, self._matrix(t, ys, par, J, B, gp, free, free_p, lu))
            assert self.kept is not None  # (factored at the first iterate, exact)
            dZ = sla.lu_solve(self.kept[1], rows, check_finite=False)
            before = ys.copy()
            ys[P] -= dZ[:nP]
            u = u - dZ[nP:nP + len(free)]
            ys[A] -= dZ[nP + len(free):]
        raise FloatingPointError(_failure(kernels.NOT_CONVERGED, t))

    def _closed(self, ys: np.ndarray, g: np.ndarray, gp: np.ndarray | None, ca: float,
                da: np.ndarray) -> np.ndarray:
        """The stage's X at the converged ``ys`` with its positions moved onto the joints'
        position rows: one Newton step of g = 0 in the dependent positions (g and g_p at
        ``ys``), which leaves the rows at the square of Newton's last error
        (:func:`~dolfinx_mbs.integrate.dense.joint_kernels.close_positions`)."""
        if gp is not None and self.dep_p is not None:
            joint_kernels.close_positions(ys, g, gp, self.pos, self.P, self.dep_p)
        return cast(np.ndarray, (ys - da) / ca)

    def _compiled(self, t: float, ca: float, da: np.ndarray, cb: float, db: np.ndarray,
                  X: np.ndarray, Xs: np.ndarray, par: np.ndarray, ys: np.ndarray
                  ) -> np.ndarray | None:
        """:meth:`solve` in one compiled call (:func:`~dolfinx_mbs.integrate.dense.
        joint_kernels.stage`, iterate for iterate), where the loads are of time alone and no
        torque motor reads the state; None where it does not apply or the stage must choose
        its dependent coordinates again (:meth:`solve` then takes the stage from its guess)."""
        st = self.st
        p = st.plan
        if self.dj.js.torque_motors:
            return None
        Q = np.zeros(p.m)
        if st.loads.active:
            got = st.loads.probe(t)
            if got is None:
                return None
            Q = np.asarray(got[0], dtype=float)
        if self.dep_p is None:   # (the positions' rows do not depend on the velocities)
            gp = self._rows(t, ys, par)[3]
            assert gp is not None  # (asked for)
            self.dep_p = self._choose(gp, self._wP, "position")
        tb = self.tables
        assert tb is not None  # (the caller's test)
        fixed, presc = self._fixed(t)
        mem = self._memory()
        Xw = X.copy()
        lam = np.zeros(self.dj.n_rows)
        if self._work is None:
            self._work = joint_kernels.stage_work(
                p.arrays(), p.N, p.n, self.dj.n_rows, len(self.V), len(self.pos), len(self.P),
                len(self.A))
        code = joint_kernels.stage(
            p.arrays(), par, (tb.ei, tb.ef, fixed, presc, tb.Tn, tb.uoff), self._indices(),
            (ca, da, cb, db), Q, self._DQ0, Xw, Xs, self._KF, self._kpiv, mem, lam,
            self._constants(), self._pd, self._work)
        if code == joint_kernels.CHOOSE:   # solve() from the guess, with a matrix of its own
            self._kmem[joint_kernels.S_KEPT] = 0.0
            self.kept = None
            return None
        if code < 0:
            raise FloatingPointError(_failure(-code, t))
        self._adopt(mem, lam)
        st.iterations += code
        st.stages += 1
        return Xw

    def runs(self, started: bool) -> bool:
        """Whether the next steps can be one compiled run (:func:`~dolfinx_mbs.integrate.
        dense.joint_kernels.maggi_run`): the kernels take the rows, no torque motor reads the
        state, the scheme has started and the dependent coordinates are chosen (and the last
        stage did not ask to choose them again).

        Args:
            started: whether the scheme has started (its first step taken).

        Returns:
            Whether it can.
        """
        return (self.tables is not None and not self.dj.js.torque_motors and started
                and self.dep is not None and self.dep_p is not None and not self.choose)

    def run(self, at: tuple, tt: np.ndarray, scheme: tuple, state: tuple,
            out: tuple) -> np.ndarray:
        """Started steps through the times ``tt`` in one compiled call (:func:`~dolfinx_mbs.
        integrate.dense.joint_kernels.maggi_run`), its memory, matrix and multipliers kept
        (:meth:`_adopt`; after a stage that asks to choose the dependent coordinates again,
        the next stage is Python's).

        Args:
            at: the stages' parents' states, loads, fixed slots' states and motors'
                prescriptions (rows in order, or one row for all).
            tt: the steps' times.
            scheme: (second order, alpha_m, alpha_f, gamma).
            state: (X, V, hist_t, hist_X), updated in place.
            out: (Y, LAM): the step ends' states and multipliers (rows, written).

        Returns:
            The kernel's ``info``: steps done, status, iterations, stages.
        """
        tb = self.tables
        assert tb is not None  # (runs() said so)
        spar, sQ, fixed, presc = at
        info = np.zeros(4, dtype=np.int64)
        mem = self._memory()
        joint_kernels.maggi_run(
            self.st.plan.arrays(), spar, sQ, self._DQ0, tt, scheme,
            (tb.ei, tb.ef, tb.Tn, tb.uoff), fixed, presc, self._indices(), state, out,
            (self._KF, self._kpiv, self._pd), mem, self._constants(), info)
        done = int(info[0])
        self._adopt(mem, out[1][done - 1] if done else None,
                   choose=int(info[1]) == joint_kernels.CHOOSE)
        return info

    def _memory(self) -> np.ndarray:
        """The compiled stages' memory for the next stage (a copy: kept where it
        converges, :meth:`_adopt`)."""
        mem = self._kmem.copy()
        mem[joint_kernels.S_FRESH], mem[joint_kernels.S_SCALE] = self.fresh, self.scale
        return mem

    def _indices(self) -> tuple:
        """The compiled stage's indices: positions, velocities, auxiliary momenta, position
        rows, dependent velocities and positions."""
        return (self.P, self.V, self.A, self.pos, self.dep, self.dep_p)

    def _constants(self) -> tuple:
        """The compiled stage's constants (:func:`~dolfinx_mbs.integrate.dense.
        joint_kernels.stage`'s ``consts``)."""
        return (MAGGI_REFRESH, float(MAGGI_FRESH), MAGGI_RESIDUAL, float(MAGGI_DIFFERENCES),
                self.st.stol)

    def _adopt(self, mem: np.ndarray, lam: np.ndarray | None, choose: bool = False) -> None:
        """Keep the compiled stages' memory ``mem`` and the last stage's multipliers ``lam``
        (None: as they were); with ``choose`` a stage asked to choose the dependent
        coordinates again (its matrix not kept): the next stage is Python's, from its
        guess."""
        self._kmem[:] = mem
        self.fresh = int(mem[joint_kernels.S_FRESH])
        self.scale = float(mem[joint_kernels.S_SCALE])
        if lam is not None:
            self.lam = lam.copy()
        if choose:
            self.kept = None
            self.choose = True

    def _matrix(self, t: float, ys: np.ndarray, par: np.ndarray, J: np.ndarray, B: np.ndarray,
                gp: np.ndarray, free: np.ndarray, free_p: np.ndarray, lu: tuple) -> tuple:
        """The factors of Newton's matrix of Maggi's rows in (p, u, the auxiliary momenta):
        the chain rule through V = A u + a(p) (dV/dp = -B_d^-1 h_p), the rows' curvature
        A^T d(B^T lam)/dp; C's and A's own change with p is left out (it meets the rows'
        residuals, which vanish: the TS path leaves out mu's curvature too)."""
        import scipy.linalg as sla
        P, V, A = self.P, self.V, self.A
        nV, nP = len(V), len(P)
        Am = np.zeros((nV, len(free)))
        Am[free, np.arange(len(free))] = 1.0
        Am[self.dep] = -sla.lu_solve(lu, B[:, free], check_finite=False)
        hp, fp = self._position_derivatives(t, ys, par)
        Vp = np.zeros((nV, nP))
        Vp[self.dep] = -sla.lu_solve(lu, hp, check_finite=False)
        Cm = np.zeros((nP, len(free_p)))
        Cm[free_p, np.arange(len(free_p))] = 1.0
        Cm[self.dep_p] = -np.linalg.solve(gp[:, self.dep_p], gp[:, free_p])
        dF = np.concatenate([J[:, P] + J[:, V] @ Vp, J[:, V] @ Am, J[:, A]], axis=1)
        curv = np.zeros((nV, dF.shape[1]))
        curv[:, :nP] = fp
        Jm = np.concatenate([
            np.concatenate([gp, np.zeros((len(self.pos), dF.shape[1] - nP))], axis=1),
            Cm.T @ dF[P], Am.T @ (dF[V] + curv), dF[A]])
        factors = sla.lu_factor(Jm, check_finite=False)
        if not np.all(np.isfinite(factors[0])) or np.abs(np.diag(factors[0])).min() == 0.0:
            raise FloatingPointError(_failure(kernels.SINGULAR, t))
        return cast(tuple, factors)

    def _load_derivative(self, t: float, ys: np.ndarray) -> np.ndarray:
        """-dQ/df of the frame loads and the torque motors (differences)."""
        st, dj = self.st, self.dj
        o = 2 * st.plan.n
        D = st.loads.derivative(t, ys[o:]) if st.loads.active else \
            np.zeros((st.plan.m, st.plan.m))
        if dj.js.torque_motors:
            f = ys[o:]
            for c in range(len(f)):
                def fn(ff: np.ndarray) -> np.ndarray:
                    x = ys.copy()
                    x[o:] = ff
                    return dj.motor_torques(t, x)
                D[:, c] -= _central(fn, f, c)
        return D


class _Converged:
    """Newton's test of :func:`~dolfinx_mbs.integrate.dense.coupled_kernels.newton_iter` on
    the state's blocks (the elastic coordinates, their rates, each frame unknown), for the
    iterations run from Python: :meth:`plateau` with an iterate's residual, :meth:`update`
    with the update that followed it; ``refresh`` the updates' contraction that asks for a new
    matrix, ``stol`` the update tolerance (:func:`newton_tolerance`)."""

    def __init__(self, n: int, m: int, refresh: float, stol: float) -> None:
        self.n, self.refresh_at, self.stol = n, refresh, stol
        self.blocks = [slice(0, n), slice(n, 2 * n)] + [slice(2 * n + k, 2 * n + k + 1)
                                                        for k in range(m)]
        self.prev: np.ndarray | None = None
        self.ref: np.ndarray | None = None
        self.top = 0.0
        self.fprev = math.inf
        self.refresh = False
        self.exact_last = False

    def plateau(self, fnorm: float) -> bool:
        """Whether an exact Newton step left the residual as it was, its update at
        round-off of the blocks (:data:`~dolfinx_mbs.integrate.dense.coupled_kernels.
        PLATEAU`).

        Args:
            fnorm: the iterate's residual (max norm).

        Returns:
            Whether to stop.
        """
        out = (self.prev is not None and self.ref is not None and self.exact_last
               and fnorm > 0.5 * self.fprev
               and all(a <= kernels.PLATEAU * max(r, kernels.ROUNDOFF * self.top)
                       for a, r in zip(self.prev, self.ref)))
        self.fprev = fnorm
        return out

    def update(self, dX: np.ndarray, X: np.ndarray, Xs: np.ndarray, it: int,
               exact: bool) -> int:
        """The test of update ``it`` (an exact Newton step or not).

        Args:
            dX: the update of the state.
            X: the state after it.
            Xs: the step's start.
            it: the iteration.
            exact: whether the matrix was the iterate's.

        Returns:
            The iterations taken where converged, else 0.
        """
        R = kernels.ROUNDOFF
        sizes = np.array([float(np.abs(dX[b]).max(initial=0.0)) for b in self.blocks])
        ref = np.array([max(float(np.abs(X[b]).max(initial=0.0)),
                            float(np.abs(X[b] - Xs[b]).max(initial=0.0))) for b in self.blocks])
        top = float(ref[2:].max(initial=0.0))
        prev = self.prev
        done = True
        slow = False
        for k, (a, r) in enumerate(zip(sizes, ref)):
            pa = prev[k] if prev is not None else a
            ok = (a <= R * r or (k > 1 and a <= R * top)
                  or (prev is not None and a * a <= self.stol * r * max(pa, 1e-300)))
            if not ok:
                done = False
                if prev is not None and a > self.refresh_at * pa:
                    slow = True
        self.exact_last = exact
        if done and it > 0:
            return it + 1
        self.refresh = slow
        self.prev, self.ref, self.top = sizes, ref, top
        return 0


class DenseCoupledStepper(CoupledRecords, PythonLoop):
    """A coupled run stepped in dense arrays (see the module docstring).

    Args:
        system: the coupled system.
        run: the run (``formulation`` ``"second-order"`` or ``"first-order"``).
        compiled: the compiled kernels (numba) or the NumPy ones; None: compiled where numba
            is installed (:data:`~dolfinx_mbs.integrate.dense.coupled_kernels.COMPILED`).
        every: the run writes a checkpoint at every step number that is a multiple of this
            (its batches end there and the scheme starts again from the state, as a restart
            from it does), or None.
    """

    path = "dense"
    checkpoints = True

    def __init__(self, system: CoupledSystem, run: RunSpec, compiled: bool | None = None,
                 every: int | None = None) -> None:
        why = applies(system, run)
        if why is not None:
            raise ValueError(f"stepper='dense' cannot step a run with {why}: use "
                             "stepper='ts' or 'auto'")
        self.system = system
        self.every, self.dt = every, run.dt
        #: the step number of the run's first state (a restart's: the checkpoint's); the
        #: arrays' rows are counted from it
        self.offset = 0
        self.dense = DenseCoupled(system)
        self.plan = self.dense.plan
        self.K = kernels.variant(kernels.COMPILED if compiled is None else bool(compiled))
        #: Newton's update tolerance (:func:`newton_tolerance`): by default the TS path's
        #: (Maggi's stages then close the joints' position rows: :meth:`MaggiStage._closed`)
        self.stol = newton_tolerance(run, kernels.STOL)
        self.formulation = run.formulation
        self.times = [run.t0] + run.times()
        self.n_steps = len(self.times) - 1
        if run.formulation == "second-order":
            r = 1.0 if run.spectral_radius is None else float(run.spectral_radius)
            am, af = 0.5 * (3.0 - r) / (1.0 + r), 1.0 / (1.0 + r)
            self.params = (am, af, 0.5 + am - af)
            self.method = self.scheme = "alpha"
            self.restart_step = compat.alpha1_restart_step()
        else:
            self.method = self.scheme = "bdf"
        #: the system whose unknowns a checkpoint names (none without elastic bodies: the
        #: whole state is then the frame unknowns of ``latest.json``), as on the TS path
        self.named = system if system.parts else None
        N = self.plan.N
        self.y = np.zeros(N)
        self.V = np.zeros(N)                      # TSALPHA's rate
        self.hist_t = np.zeros(1)                 # TSBDF's state one step back
        self.hist_X = np.zeros((1, N))
        self.started = False
        self.loads = FrameLoads(system, self.dense)
        #: Maggi's stages where the model has joints or driven motors (else None), and the
        #: multipliers they recovered at each step (NaN before the first)
        self.maggi = MaggiStage(self) if system.jointset.active else None
        self.lam_end = np.full((self.n_steps + 1, system.jointset.n_rows), np.nan)
        #: the joints' unknowns of the first state (the multipliers' guess, or a
        #: checkpoint's), until the first step recovers them
        self._joints0 = np.zeros(system.jointset.n_unknowns)
        self.fault = checks.Deferred(system.comm)
        #: the run's states (one row per time), the loads' Q and moments at them
        self.Y = np.zeros((self.n_steps + 1, N))
        self.Q_end: List[List[float]] = []
        self.M_end: List[List[List[float]]] = []
        self._index = 0
        self._vecs: Tuple[Any, Any] | None = None
        self._ground = self.dense.parent_states(run.t0)[None] if self.dense.constant_parents \
            else None
        #: the frames of the batch being delivered (:meth:`batch_frames`): ((lo, hi), frames)
        self._batch_frames: Tuple[Tuple[int, int], Tuple[np.ndarray, np.ndarray]] | None = None
        self._probe_after = 0
        #: whether the observers see the batches at once (else step by step)
        self.whole = False
        #: Newton's iterations over the run (the stages' sum) and the stages solved
        self.iterations = 0
        self.stages = 0
        #: the work space of the stages solved here step by step (:meth:`_stage`; made at
        #: the first)
        self._nwork: tuple | None = None

    @staticmethod
    def applies(system: CoupledSystem, run: RunSpec) -> str | None:
        """Why the dense path cannot step ``run``, or None (:func:`applies`).

        Args:
            system: the coupled system.
            run: the run.

        Returns:
            The reason, or None.
        """
        return applies(system, run)

    # -- the state ---------------------------------------------------------------------------
    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The state at ``t0``: the elastic state and the frame unknowns that fit it.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: unused (None).
        """
        from dolfinx_mbs.integrate.dense.operators import gather_vector
        s, n = self.system, self.plan.n
        f0 = s.initial_unknowns(q0, v0, t0)
        if n:
            self.y[:n] = gather_vector(q0, s.comm)
            self.y[n:2 * n] = gather_vector(v0, s.comm)
        self.y[2 * n:] = f0[:self.plan.m]     # the joints' multipliers are not unknowns here
        self._joints0 = np.array(f0[self.plan.m:], dtype=float)
        self.Y[0] = self.y
        self._vecs = (q0.duplicate(), v0.duplicate()) if n else (q0, v0)

    def prepare(self, needs: Needs) -> None:
        """Keep what the observers read.

        Args:
            needs: what they read.
        """
        self.needs = needs

    def state(self, t: float, need_v: bool) -> State:
        """The state at the boundary ``t`` (arrays, and the reduced Vecs filled from them).

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read.

        Returns:
            The state.
        """
        n = self.plan.n
        y = self.Y[self._index]
        q, v, f = y[:n], y[n:2 * n], y[2 * n:]
        assert self._vecs is not None  # (made by initial)
        qv, vv = self._vecs
        if n:
            r0, r1 = qv.getOwnershipRange()
            qv.array[:] = q[r0:r1]
            vv.array[:] = v[r0:r1]
        return State(qv, vv, dense=(q.copy(), v.copy(), None), frames=f.copy())

    # -- checkpoints (the TS path's format, :mod:`dolfinx_mbs.integrate.checkpoint`) ----------
    def local(self, index: int) -> int:
        """The row of the run's arrays that holds the step number ``index``.

        Args:
            index: the step number (a restart's count from the run's own start).

        Returns:
            The row.
        """
        return index - self.offset

    def resume(self, ckpt: checkpoint.Checkpoint, stem: str, t_end: float) -> None:
        """Continue from the checkpoint ``ckpt``: its elastic coordinates and rates (the rank
        files, gathered on every rank), frame unknowns, time and step number; the run's times
        from it as the TS path steps them; the scheme started from the state. A checkpoint of
        the TS coupled path serves as one of this path (the same format).

        Args:
            ckpt: the checkpoint read.
            stem: the checkpoints' file stem.
            t_end: the run's final time (s).

        Raises:
            ValueError: (every rank) a checkpoint of another model, or a ``t_end`` not after
                it.
        """
        from dolfinx_mbs.integrate.dense.operators import gather_vector
        s, p = self.system, self.plan
        f = checkpoint.frame_unknowns(s, ckpt, stem)
        checkpoint.check_end(stem, t_end, ckpt)
        n = p.n
        if s.parts:
            assert self._vecs is not None
            qv, vv = self._vecs
            checkpoint.restore_vecs(s.comm, stem, ckpt, [qv, vv])
            if n:
                self.y[:n] = gather_vector(qv, s.comm)
                self.y[n:2 * n] = gather_vector(vv, s.comm)
        self.y[2 * n:] = f[:p.m]
        self._joints0 = f[p.m:].copy()
        self.offset, self.dt = int(ckpt.index), float(ckpt.dt)
        self.times = [ckpt.t] + step_times(ckpt.t, t_end, ckpt.dt, origin=ckpt.t0)
        self.n_steps = len(self.times) - 1
        self.Y = np.zeros((self.n_steps + 1, p.N))
        self.Y[0] = self.y
        rows = s.jointset.n_rows
        self.lam_end = np.full((self.n_steps + 1, rows), np.nan)
        if rows:   # the multipliers the writing run recovered last (the joints' outputs)
            self.lam_end[0] = self._joints0[:rows]
        self.started = False

    def snapshot(self) -> Tuple[int, float, float, list]:
        """The step number, time and step size at the boundary, and the elastic coordinates
        and rates there in the reduced vectors (none without elastic bodies); the frame
        unknowns are :meth:`extra`'s.

        Returns:
            (step number, time, step size, vectors).
        """
        i = self._index
        st = self.state(self.times[i], True)
        return self.offset + i, self.times[i], self.dt, \
            [st.q, st.v] if self.system.parts else []

    def extra(self) -> checkpoint.CoupledUnknowns:
        """The frame unknowns at the boundary as the TS path holds them (the frames'
        coordinates and speeds, then the joints' multipliers Maggi's stage recovered last,
        their position rows' multipliers zero), with what a restart checks they fit.

        Returns:
            :func:`~dolfinx_mbs.integrate.checkpoint.coupled_extra`'s record.
        """
        i = self._index
        joints = self._joints0.copy()
        rows = self.lam_end.shape[1]
        if rows and np.all(np.isfinite(self.lam_end[i])):
            joints[:] = 0.0
            joints[:rows] = self.lam_end[i]
        return checkpoint.coupled_extra(
            self.system, np.concatenate([self.Y[i, 2 * self.plan.n:], joints]))

    def checkpointed(self) -> None:
        """A checkpoint was written at the boundary (a batch's end) and the run goes on as a
        restart from it would: the scheme started from the state (TSALPHA's two
        backward-Euler half steps, TSBDF's half step), Maggi's stages without the partition
        and matrix they kept, the loads asked again whether they read the frames' state."""
        self.started = False
        self._probe_after = self._index
        if self.maggi is not None:
            self.maggi.reset()

    def batch_frames(self, lo: int, hi: int) -> Tuple[np.ndarray, np.ndarray]:
        """The states ``lo`` to ``hi``'s parents' states and frames' states (one row of
        parents where they are the ground's; :func:`~dolfinx_mbs.integrate.dense.
        coupled_kernels.frame_states`), found once for the observers of a batch (its energies
        and its joints' outputs; forgotten when the batch has been delivered).

        Args:
            lo: the first state's index.
            hi: the last state's index.

        Returns:
            (the parents' states, the frames' states).
        """
        if self._batch_frames is not None and self._batch_frames[0] == (lo, hi):
            return self._batch_frames[1]
        p = self.plan
        spar = self._ground if self._ground is not None else np.array(
            [self.dense.parent_states(t) for t in self.times[lo:hi + 1]])
        frames = (spar, self.K.frame_states(p.fi, p.ff, spar, p.grav, p.n, self.Y[lo:hi + 1]))
        self._batch_frames = ((lo, hi), frames)
        return frames

    def monitors(self, lo: int, hi: int) -> np.ndarray:
        """The energies and momenta of the states ``lo`` to ``hi`` (rows: kinetic, elastic,
        gravity, total, P (3), H (3); :func:`~dolfinx_mbs.integrate.dense.coupled_kernels.
        monitors`).

        Args:
            lo: the first state's index.
            hi: the last state's index.

        Returns:
            The rows.
        """
        p = self.plan
        Y = self.Y[lo:hi + 1]
        spar, states = self.batch_frames(lo, hi)
        out = np.zeros((len(Y), 10))
        self.K.monitors(p.arrays(), spar, Y, out, states)
        return out

    # -- the run -----------------------------------------------------------------------------
    def march(self, at: Boundary) -> None:
        """Step through the run's times in batches, the observers after each (see the module
        docstring); at the end the frames hold their final state.

        Args:
            at: the driver's side of the seam.
        """
        needs = getattr(self, "needs", None)   # (set by prepare)
        whole = needs.whole_run if needs is not None else None
        self.whole = whole is not None
        K = self.n_steps
        k = 0
        self.time = self.times[0]
        if self.loads.active:
            self._end_loads(0, 0)
        self.fault.settle()
        if K == 0:
            self._deliver(at, whole, 0, 0)
        while k < K:
            kb = min(k + BATCH, K)
            if self.every:   # a batch ends at a checkpoint (the scheme restarts there)
                kb = min(kb, self.local(((self.offset + k) // self.every + 1) * self.every))
            done = self._batch(k, kb)
            if self.loads.active:
                self._end_loads(k + 1, done)
            self.fault.settle()
            self._deliver(at, whole, 0 if k == 0 else k + 1, done)
            k = done
        s, f = self.system, self.Y[K, 2 * self.plan.n:]
        for fr, zs, ws in zip(s.frames, s.zslice, s.wslice):
            fr.set_state(self.times[K], f[zs], f[ws])

    def _deliver(self, at: Boundary, whole: Mapping[str, obs.Observer] | None, lo: int,
                 hi: int) -> None:
        """The states ``lo`` to ``hi`` to the observers: at once where they all can, else
        one boundary after the other."""
        self._batch_frames = None   # (one batch's: found again for this one)
        if whole is None:
            for index in range(lo, hi + 1):
                self._index, self.steps, self.time = index, self.offset + index, \
                    self.times[index]
                at(self.steps, self.times[index])
            self._batch_frames = None
            return
        # (a run with checkpoints writes a CSV: its observers see it step by step)
        self._index, self.steps, self.time = hi, self.offset + hi, self.times[hi]
        n = self.plan.n
        Q = self.Y[lo:hi + 1, :n]
        each = []
        for o in whole.values():
            if isinstance(o, _DenseObserver) or getattr(o, "batch_rows", False):
                cast(Any, o).rows(lo, hi)
            elif isinstance(o, ProbeMatrix):
                o.observe_all(Q)
            elif isinstance(o, RotationRange):
                o.observe_all(self.times[lo:hi + 1], Q)
            elif isinstance(o, obs.Progress):
                if o.bar is not None:
                    o.bar.update(hi - lo + (0 if lo == 0 else 1))
            else:
                each.append(o)
        # the others step by step, in their order at each step (the motors' work reads the
        # joints' outputs of the step)
        for index in range(lo, hi + 1) if each else ():
            self._index = index
            st = self.state(self.times[index], True)
            step = obs.Step(index=index, t=self.times[index], q=st.q, v=st.v, u=None,
                            stepper=cast(Any, self), dense=st.dense, frames=st.frames)
            for o in each:
                o.observe(step)
        self._index = hi
        self._batch_frames = None
        at.passed(self.times[lo:hi + 1], self.offset + hi)

    def _end_loads(self, lo: int, hi: int) -> None:
        """The loads' Q and moments at the states ``lo`` to ``hi`` (what the observers read;
        the user's functions called under the batch's guard)."""
        o = 2 * self.plan.n
        t = self.times[lo]
        try:
            for index in range(lo, hi + 1):
                t = self.times[index]
                got = self.loads.probe(t) if index >= self._probe_after else None
                Q, M = got if got is not None else self.loads.at(t, self.Y[index, o:])
                self.Q_end.append(Q)
                self.M_end.append(M)
        except Exception as e:  # noqa: BLE001 - the user's function: kept, raised everywhere
            self.fault.keep(e, f"the frame loads at t={t:g}")

    def _batch(self, k: int, kb: int) -> int:
        """Steps ``k`` to ``kb`` (their end indices k + 1 .. kb): stretches the kernels step
        at once, and steps whose loads read the state one at a time; stops at a fault (kept).

        Returns:
            The index of the last state computed.
        """
        while k < kb:
            maggi = self.maggi is not None
            if maggi and not cast(MaggiStage, self.maggi).runs(self.started):   # from Python
                n_ok, sQ, read = 0, None, True
            elif self.loads.active and k < self._probe_after:
                n_ok, sQ, read = 0, None, True
            else:
                n_ok, sQ = self._probe(k, kb)
                read = k + n_ok < kb
                if read:
                    self._probe_after = k + n_ok + PROBE_AGAIN
            if self.fault.found:
                return k
            if n_ok:
                k1 = k + n_ok
                k = self._maggi_run(k, k1, sQ) if maggi else self._run(k, k1, sQ)
                if self.fault.found:
                    return k
                read = read or k < k1   # (Maggi's run stops where a stage must choose)
            if k < kb and read:
                with self.fault.guard(f"the step from t={self.times[k]:g}"):
                    self._python_step(k)
                if self.fault.found:
                    return k
                k += 1
        return k

    def _stage_times(self, k: int, started: bool) -> List[float]:
        """The times of the stages of step ``k`` (from ``started``)."""
        t, t1 = self.times[k], self.times[k + 1]
        h = t1 - t
        if self.formulation == "second-order":
            first = [t + 0.5 * h, t + h] if not started else []
            return first + [t + self.params[1] * h]
        return ([t + 0.5 * h] if not started else []) + [t1]

    def _probe(self, k: int, kb: int) -> Tuple[int, np.ndarray | None]:
        """How many steps from ``k`` (up to ``kb``) have loads of time alone at every stage,
        and those loads (stages in order; None without loads)."""
        if not self.loads.active:
            return kb - k, None
        rows: List[List[float]] = []
        started = self.started
        count = 0
        ts = self.times[k]
        try:
            for s in range(k, kb):
                step_rows = []
                for ts in self._stage_times(s, started):
                    got = self.loads.probe(ts)
                    if got is None:
                        return count, np.array(rows) if rows else None
                    step_rows.append(got[0])
                rows += step_rows
                started = True
                count += 1
        except Exception as e:  # noqa: BLE001 - the user's function: kept, raised everywhere
            self.fault.keep(e, f"the frame loads at t={ts:g}")
        return count, np.array(rows) if rows else None

    def _parents(self, k: int, k1: int) -> np.ndarray:
        """The parents' states at the stages of the steps ``k`` to ``k1`` (one row for
        frames without parents)."""
        if self._ground is not None:
            return self._ground
        started = self.started
        out = []
        for s in range(k, k1):
            for ts in self._stage_times(s, started):
                out.append(self.dense.parent_states(ts))
            started = True
        return np.array(out)

    def _run(self, k: int, k1: int, sQ: np.ndarray | None) -> int:
        """Steps ``k`` to ``k1`` by the kernels; returns the last state's index."""
        p, K = self.plan, self.K
        with self.fault.guard(f"the prescribed parent frames' motion after t="
                              f"{self.times[k]:g}"):
            spar = self._parents(k, k1)
        if self.fault.found:
            return k
        if sQ is None:
            sQ = self.loads.zero
        DQ = np.zeros((p.m, p.m))
        tt = np.array(self.times[k:k1 + 1])
        info = np.zeros(4, dtype=np.int64)
        Y = self.Y[k + 1:k1 + 1]
        if self.formulation == "second-order":
            am, af, gm = self.params
            K.alpha_run(p.arrays(), spar, sQ, DQ, tt,
                        (am, af, gm, self.restart_step, self.stol),
                        self.started, self.y, self.V, Y, info)
        else:
            K.bdf_run(p.arrays(), spar, sQ, DQ, tt, self.started, self.y, self.hist_t,
                      self.hist_X, Y, info, self.stol)
        done = int(info[0])
        self.iterations += int(info[2])
        self.stages += int(info[3])
        if done or info[1] == kernels.OK:
            self.started = True
        if info[1] != kernels.OK:
            t = self.times[k + done]
            self.fault.keep(FloatingPointError(_failure(int(info[1]), t)),
                            f"the step from t={t:g}")
        return k + done

    def _maggi_run(self, k: int, k1: int, sQ: np.ndarray | None) -> int:
        """Steps ``k`` to ``k1`` of Maggi's stages in one compiled call (:func:`~dolfinx_mbs.
        integrate.dense.joint_kernels.maggi_run`: the steps :meth:`_python_step` takes, to the
        bit); returns the index of the last state computed (short of ``k1`` where a stage must
        choose its dependent coordinates again: the next step is Python's, from its guess)."""
        mg = self.maggi
        assert mg is not None and mg.tables is not None  # (runs() said so)
        tb = mg.tables
        times = np.array([self._stage_times(s, True)[0] for s in range(k, k1)])
        with self.fault.guard(f"the prescribed motions after t={self.times[k]:g}"):
            spar = self._parents(k, k1)
            fixed, presc = tb.at_times(times)
        if self.fault.found:
            return k
        second = self.formulation == "second-order"
        info = mg.run((spar, self.loads.zero if sQ is None else sQ, fixed, presc),
                      np.array(self.times[k:k1 + 1]),
                      (second,) + (tuple(self.params) if second else (0.0, 0.0, 0.0)),
                      (self.y, self.V, self.hist_t, self.hist_X),
                      (self.Y[k + 1:k1 + 1], self.lam_end[k + 1:k1 + 1]))
        done, status = int(info[0]), int(info[1])
        self.iterations += int(info[2])
        self.stages += int(info[3])
        if status not in (kernels.OK, joint_kernels.CHOOSE):
            self.fault.keep(FloatingPointError(_failure(status, float(times[done]))),
                            f"the step from t={self.times[k + done]:g}")
        return k + done

    # -- a step whose loads read the state: Newton from Python, the loads at each iterate ----
    def _python_step(self, k: int) -> None:
        """Step ``k`` with the loads called at every Newton iterate."""
        t, t1 = self.times[k], self.times[k + 1]
        h = t1 - t
        X0 = self.y.copy()
        zero = np.zeros_like(X0)
        if self.formulation == "second-order":
            am, af, gm = self.params
            if not self.started:
                hh = 0.5 * h
                X1 = self._stage(t + hh, 1.0, zero, 1.0 / hh, -X0 / hh, X0.copy(), X0)
                X2 = self._stage(t + h, 1.0, zero, 1.0 / hh, -X1 / hh, X1.copy(), X1)
                self.V = (-3.0 * X0 + 4.0 * X1 - X2) / (self.restart_step * h)
                self.started = True
            V = self.V
            X1 = self._stage(t + af * h, af, (1.0 - af) * X0, am / (gm * h),
                             (1.0 - am / gm) * V - am * X0 / (gm * h), X0 + h * V, X0)
            self.V = (X1 - X0) / (gm * h) + (1.0 - 1.0 / gm) * V
        else:
            if not self.started:
                th = t + 0.5 * h
                w = self.K.bdf_weights(th, t, t, False)
                Xm = self._stage(th, 1.0, zero, w[0], w[1] * X0, X0.copy(), X0)
                tm = th
                self.started = True
            else:
                tm, Xm = float(self.hist_t[0]), self.hist_X[0].copy()
            w = self.K.bdf_weights(t1, t, tm, True)
            guess = X0 + (t1 - t) / (t - tm) * (X0 - Xm)
            X1 = self._stage(t1, 1.0, zero, w[0], w[1] * X0 + w[2] * Xm, guess, X0)
            self.hist_t[0], self.hist_X[0] = t, X0
        self.y[:] = X1
        self.Y[k + 1] = X1
        if self.maggi is not None:
            self.lam_end[k + 1] = self.maggi.lam

    def parents_at(self, t: float) -> np.ndarray:
        """The frames' parents' states at ``t`` (nf x :data:`~dolfinx_mbs.integrate.dense.
        coupled_kernels.PAR`).

        Args:
            t: the time (s).

        Returns:
            The states.
        """
        return self.dense.parent_states(t) if self._ground is None else self._ground[0]

    def _stage(self, t: float, ca: float, da: np.ndarray, cb: float, db: np.ndarray,
               X: np.ndarray, Xs: np.ndarray) -> np.ndarray:
        """One stage by Newton's method, the loads at each iterate (their derivative once)."""
        p, K = self.plan, self.K
        o = 2 * p.n
        par = self.parents_at(t)
        if self.maggi is not None:
            return self.maggi.solve(t, ca, da, cb, db, X, Xs, par)
        mem = np.zeros(kernels.M_HEAD + 2 * (2 + p.m))
        mem[kernels.M_STOL] = self.stol
        LU = np.empty((p.N, p.N))
        piv = np.zeros(p.N, dtype=np.int64)
        if self._nwork is None:
            self._nwork = K.newton_work(p.arrays(), p.N)
        DQ = None
        for it in range(kernels.MAXIT):
            f = (ca * X + da)[o:]
            Q = np.array(self.loads.at(t, f)[0])
            if DQ is None:
                DQ = self.loads.derivative(t, f)
            code = K.newton_iter(p.arrays(), par, (ca, da, cb, db), Q, DQ, X, Xs, it, mem, LU,
                                 piv, self._nwork)
            if code > 0:
                self.iterations += code
                self.stages += 1
                return X
            if code < 0:
                raise FloatingPointError(_failure(-code, t))
        raise FloatingPointError(_failure(kernels.NOT_CONVERGED, t))

    def multiplier_lag(self) -> float:
        """Where in the step Maggi's stages recover the multipliers, as the fraction of the
        step before its end: 1 - alpha_f (TSALPHA's stage), 0 (BDF2's, at the step's end).

        Returns:
            The lag.
        """
        return 1.0 - self.params[1] if self.formulation == "second-order" else 0.0

    def destroy(self) -> None:
        """Destroy the reduced vectors of the states given (collective)."""
        if self._vecs is not None and self.plan.n:
            for x in self._vecs:
                x.destroy()
        self._vecs = None


def _failure(status: int, t: float) -> str:
    """The words of a failed stage."""
    if status == kernels.NOT_FINITE:
        return f"the Newton iterate is not finite at t={t:g}"
    if status == kernels.SINGULAR:
        return f"the Newton step's matrix is singular at t={t:g}"
    return f"Newton's method did not converge in {kernels.MAXIT} iterations at t={t:g}"
