"""What a time integration records, as observers attached to a run.

At every output time the run's driver (:mod:`dolfinx_mbs.integrate.driver`) forms a
:class:`Step` (the time, the reduced displacement and velocity at that time, the full
displacement written into the bodies' ``u`` for the observers that read it, the stepper that
gives the products the energies and reactions need) and passes it to each observer in turn;
an observer reads what it needs, keeps its history and may add columns to the CSV row. Nothing
reads the time from stored state: the step's end time is in the :class:`Step`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Protocol,
    Sequence,
    Type,
    TypeVar,
    Union,
    cast,
)

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs import checks
from dolfinx_mbs.constraints.reactions import frame_resultants
from dolfinx_mbs.integrate.config import Recording, StepState
from dolfinx_mbs.io.output import MotionWriter, Probes, TimeSeriesWriter, probe_columns
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:  # typing only; the stepper's module reads the observers, not back
    from dolfinx_mbs.integrate.checkpoint import Checkpoint
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.integrate.initial import Coordinates
    from dolfinx_mbs.systems.drives import Drives
    from dolfinx_mbs.systems.multipliers import SaddlePoint
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["Step", "ObserverResults", "EnergyAccumulators", "WorkAccumulators",
           "JointAccumulators", "Accumulators", "Observer", "Finite", "Energies", "Journals",
           "ProbeHistory", "Reactions",
           "DriveHistory",
           "FrameHistory", "Callback", "Fields", "Csv", "Progress", "make_observers", "notify",
           "named", "dots", "FIRST", "CSV_ORDER"]

#: the observers that see a step before the bodies' displacement is set (the finiteness
#: check reads the energies)
FIRST = ("energy", "finite")
#: the observers whose values make the CSV row after the time, in this order
CSV_ORDER = ("probes", "energy", "reactions", "drives", "journals")

_Named = TypeVar("_Named", bound="Observer")


class Products(Protocol):
    """What an observer asks of the run's stepper (the part of
    :class:`~dolfinx_mbs.integrate.stepper.Stepper` the energies and reactions read)."""

    def record(self, t: float) -> Any:
        """The operators at ``t`` the energies read."""

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q) at the state (q, v) of the record ``s``."""

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Q'' from the equations of motion at (q, v), into ``out``."""


@dataclasses.dataclass
class Step:
    """The state of a run at one output time.

    Attributes:
        index: the TS step number.
        t: the time (s).
        q, v: reduced displacement and velocity (Vecs reused by the run; v valid only when an
            observer ``needs_velocity``).
        u: the full displacement (Vec, also scattered into the bodies' ``u`` when an observer
            ``needs_u``).
        stepper: the run's stepper (:class:`~dolfinx_mbs.integrate.stepper.Stepper`): the
            record, the energies' products and the acceleration at the state.
        Mv: M v where the stepper has it at hand (Hamilton's momentum balance), else None.
        dense: on the dense paths (:mod:`dolfinx_mbs.integrate.dense.stepper`), (q, v,
            operators) as numpy arrays on every rank, else None.
        frames: with computed frames, their unknowns (coordinates, speeds, the joints'
            multipliers; the same on every rank), else None.
        again: the step is a restart's first, whose CSV row and fields the files hold.
    """

    index: int
    t: float
    q: PETSc.Vec
    v: PETSc.Vec
    u: PETSc.Vec | None
    stepper: Products | None
    Mv: PETSc.Vec | None = None
    dense: tuple | None = None
    frames: np.ndarray | None = None
    again: bool = False


@dataclasses.dataclass(frozen=True)
class ObserverResults:
    """The fields of :class:`~dolfinx_mbs.integrate.driver.Result` an observer gives itself
    (a coupled run's frames and momenta, the fluid films' journals); None: not given.

    Attributes:
        frames: {frame name: :class:`FrameHistory`} of the computed frames.
        energy: the energies over the run's times by name (``kinetic``, ``elastic``, ...).
        momentum: ``linear`` and ``angular`` momentum (n, 3), global components.
        joints: {joint or motor name: :class:`FrameHistory`} of its outputs.
        midpoints: Hamilton's form's monitors at the steps' midpoints (``times``,
            ``linear``, ``angular``, ``total``).
        journals: {bearing name: {``position``, ``velocity``, ``force``, ``eccentricity``,
            ``work``}} of the fluid-film bearings' journals.
    """

    frames: Mapping[str, FrameHistory] | None = None
    energy: Mapping[str, np.ndarray] | None = None
    momentum: Mapping[str, np.ndarray] | None = None
    joints: Mapping[str, FrameHistory] | None = None
    midpoints: Mapping[str, np.ndarray] | None = None
    journals: Mapping[str, Mapping[str, np.ndarray]] | None = None

    def given(self) -> Iterator[tuple]:
        """The fields given, as (name, value) pairs, in the order of the fields.

        Yields:
            (name, value) of each field that is not None.
        """
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                yield f.name, value


@dataclasses.dataclass(frozen=True)
class EnergyAccumulators:
    """What a checkpoint keeps of :class:`Energies` (``latest.json``'s ``energy``).

    Attributes:
        work: the loads' work from the run's start to ``t`` (J).
        power: the loads' power f.q' at ``t`` (W).
        t: the time of the last output (s), None before the first.
    """

    work: float
    power: float
    t: float | None


@dataclasses.dataclass(frozen=True)
class WorkAccumulators:
    """What a checkpoint keeps of a coupled run's work observer
    (:class:`~dolfinx_mbs.integrate.coupled.Work`, and the dense path's): ``latest.json``'s
    ``work``.

    Attributes:
        work: the applied frame loads' and motors' work from the run's start (J).
        t: the time of the last (time, power), None before the first output.
        power: the power at ``t`` (W), None where it is not known (not finite).
    """

    work: float
    t: float | None
    power: float | None


@dataclasses.dataclass(frozen=True)
class JointAccumulators:
    """What the joints' outputs' extrapolation to the step's end read at a boundary
    (:class:`~dolfinx_mbs.integrate.coupled.Joints`): a restart there repeats it
    (``latest.json``'s ``joints``).

    Attributes:
        t: the boundary's time (s).
        tau: the time of the multipliers of its state (s), None at the run's first state.
        raw: {joint or motor name: {``force`` or ``torque``: its values there, as a list}}
            of the multipliers' outputs before the extrapolation.
    """

    t: float
    tau: float | None
    raw: Mapping[str, Mapping[str, Any]]


#: what an observer's :meth:`Observer.accumulators` gives a checkpoint
Accumulators = Union[EnergyAccumulators, WorkAccumulators, JointAccumulators]


class Observer:
    """Base class: ``columns`` of the CSV, ``observe(step)`` returning their values;
    ``needs_u``: it reads the bodies' displacement (set before it sees the step);
    ``whole_run``: it can see a whole run at once, after the steps (a dense stepper's)."""

    columns: List[str] = []
    needs_velocity = False
    needs_u = False
    whole_run = False

    def observe(self, step: Step) -> List[float]:  # pragma: no cover - abstract
        """Read the step.

        Args:
            step: the run's state at an output time.

        Returns:
            The values of :attr:`columns` (empty where it has none).
        """
        return []

    def accumulators(self) -> Accumulators | None:
        """What a checkpoint keeps of the observer (under its name), or None.

        Returns:
            The values a restart restores (written to ``latest.json`` by
            :meth:`~dolfinx_mbs.integrate.checkpoint.Writer.write`, by field name), or None
            for an observer without any.
        """
        return None

    def results(self) -> ObserverResults | None:
        """The fields of :class:`~dolfinx_mbs.integrate.driver.Result` the observer gives
        itself (a coupled run's frames and momenta), or None.

        Returns:
            The fields, or None where it gives none.
        """
        return None

    def close(self) -> None:
        """Release what the observer holds (files, vectors); collective."""


class Finite(Observer):
    """Stops the run (FloatingPointError) at the first step whose state is not finite.

    Args:
        energies: the energies' observer, whose last values are checked (else q is).
    """

    whole_run = True

    def __init__(self, energies: Energies | None = None) -> None:
        self.energies = energies
        self.failure: str | None = None

    def observe(self, step: Step) -> List[float]:
        """Stop the run where the step's energies (or q) are not finite.

        Args:
            step: the run's state.

        Returns:
            No values (no columns).

        Raises:
            FloatingPointError: the state is not finite.
        """
        check = self.energies.last if self.energies is not None else \
            (step.q.norm(PETSc.NormType.NORM_INFINITY),)
        if not all(math.isfinite(x) for x in check):
            self.failure = f"the solution is not finite at t={step.t:g} (step {step.index})"
            raise FloatingPointError(self.failure)
        return []


def dots(pairs: Sequence[tuple]) -> np.ndarray:
    """The products x.y of pairs of vectors with one global reduction.

    The owned parts' products summed over the ranks (a step's energies in one message, not
    five).

    Args:
        pairs: (x, y) pairs of Vecs of one layout.

    Returns:
        x.y for each pair.
    """
    local = np.array([x.getArray(readonly=True) @ y.getArray(readonly=True) for x, y in pairs])
    comm = pairs[0][0].getComm()
    if comm.getSize() == 1:
        return local
    out = np.empty_like(local)
    comm.tompi4py().Allreduce(local, out, op=MPI.SUM)
    return out


class Energies(Observer):
    """kinetic (1/2 q'.M q'), elastic (1/2 q.K_el q + the nonlinear part), potential
    (1/2 q.(K + K_omega + K_alpha) q + the nonlinear part), jacobi (kinetic + potential - f.q)
    and the work of the second-order form's loads (trapezoidal in time).

    Args:
        system: the run's typed system.
    """

    columns = ["kinetic", "elastic", "potential", "jacobi", "work"]
    needs_velocity = True
    #: it reads the state's PETSc vectors (not a dense stepper's arrays)
    reads_vectors = True

    def __init__(self, system: RunSystem) -> None:
        self.system = system
        self.history: Dict[str, list] = {k: [] for k in self.columns}
        self._work = self._power = 0.0
        self._t: float | None = None
        self.last = (0.0, 0.0)

    def observe(self, step: Step) -> List[float]:
        """Record the step's energies (products of the stepper's record).

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        q, v, stepper = step.q, step.v, step.stepper
        assert stepper is not None  # (a run's steps carry their stepper)
        s = stepper.record(step.t)  # the system's, or the stepper's own loads
        Mv, Kel_q, Kpot_q = stepper.energy_products(s, q, v, step.Mv)
        vMv, qKq, qKpq, qf, vf = dots(((v, Mv), (q, Kel_q), (q, Kpot_q), (q, s.f), (v, s.f)))
        kin, ela, pot = 0.5 * vMv, 0.5 * qKq, 0.5 * qKpq
        if self.system.nonlinear:  # St Venant-Kirchhoff: the strain energy's nonlinear part
            # a second-order system: records.check_choice refuses nonlinear strain elsewhere
            extra = cast("SecondOrderSystem", self.system).nonlinear_energy(step.t, q)
            ela += extra
            pot += extra
        return self.record(step.t, kin, ela, pot, kin + pot - qf, vf)

    def record(self, t: float, kin: float, ela: float, pot: float, jac: float,
               power: float) -> List[float]:
        """Keep the energies at ``t`` and the work of the loads' power since the last time.

        Args:
            t: the time (s).
            kin: the kinetic energy.
            ela: the elastic energy.
            pot: the potential energy.
            jac: the Jacobi integral.
            power: the loads' power f.q' (the work by the trapezoidal rule).

        Returns:
            The row of :attr:`columns`.
        """
        if self._t is not None:
            self._work += 0.5 * (power + self._power) * (t - self._t)
        self._power, self._t = power, t
        row = [kin, ela, pot, jac, self._work]
        for k, x in zip(self.columns, row):
            self.history[k].append(x)
        self.last = (kin, ela)
        return row

    def record_all(self, T: np.ndarray, kin: np.ndarray, ela: np.ndarray, pot: np.ndarray,
                   jac: np.ndarray, power: np.ndarray) -> None:
        """:meth:`record` at all the times ``T`` at once, the work summed in order.

        Args:
            T: the times (s).
            kin: the kinetic energies at T.
            ela: the elastic energies.
            pot: the potential energies.
            jac: the Jacobi integrals.
            power: the loads' power.
        """
        P = np.asarray(power)
        t0, p0 = (T[0], P[0]) if self._t is None else (self._t, self._power)
        inc = 0.5 * (P + np.r_[p0, P[:-1]]) * (T - np.r_[t0, T[:-1]])
        work = self._work + np.cumsum(inc)
        for k, x in zip(self.columns, (kin, ela, pot, jac, work)):
            self.history[k].extend(np.asarray(x).tolist())
        self._work, self._power, self._t = float(work[-1]), float(P[-1]), float(T[-1])
        self.last = (float(kin[-1]), float(ela[-1]))

    def accumulators(self) -> EnergyAccumulators:
        """What the next step's work needs (a checkpoint's part).

        Returns:
            The work, the last power and its time.
        """
        return EnergyAccumulators(work=self._work, power=self._power, t=self._t)

    def restore(self, acc: Mapping[str, float | None]) -> None:
        """Continue from :meth:`accumulators` of a checkpoint.

        Args:
            acc: the accumulators written (``latest.json``'s, by field name).
        """
        work, power = acc["work"], acc["power"]
        assert work is not None and power is not None  # (numbers from a run's start)
        self._work, self._power, self._t = work, power, acc["t"]


class Journals(Observer):
    """The fluid-film bearings' journals (:mod:`dolfinx_mbs.systems.films`): at each time the
    journal centre's position and velocity in the bearing's clearance (m, m/s, x and y), the
    film's force on it (N), the eccentricity ratio, and the work done on the journal by the
    film and the bearing's static load W (J): each step adds (F + W) . (ubar_1 - ubar_0), F
    the film's force at the step's midpoint state (the mean of its end states: where
    generalized-alpha with spectral radius 1, the midpoint rule, evaluates the step's
    forces, so that the discrete energy balance is exact there). With the loads' work
    (``Result.energy["work"]``) this is the whole power into the rotor: kinetic + elastic
    energy change by their sum, less any Rayleigh damping's loss and up to the solvers'
    tolerances (the energies' ``potential`` holds the films' linear part too: it has no
    meaning with films).

    Args:
        system: the run's system (with ``films``).
    """

    needs_velocity = True

    def __init__(self, system: SecondOrderSystem) -> None:
        if system.films is None:
            raise ValueError("Journals: the system has no fluid film")
        self.films = system.films
        names = [p.bearing.name for p in self.films.points]
        self.columns = [f"{n}:{k}" for n in names for k in ("x", "y", "Fx", "Fy")]
        self.history: Dict[str, Dict[str, list]] = {
            n: {k: [] for k in ("position", "velocity", "force", "eccentricity", "work")}
            for n in names}
        self._last: Dict[str, tuple] = {}

    def observe(self, step: Step) -> List[float]:
        """Record the journals at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        row: List[float] = []
        now = [(p.bearing, p.position.copy(), p.velocity.copy(), p.force.copy())
               for p in self.films.evaluate(step.t, step.q, step.v)]
        self.films.accepted(step.t)   # a journal past its wall ends the run
        for b, x, v, F in now:
            h = self.history[b.name]
            work = 0.0
            if b.name in self._last:
                t0, x0, v0, w0 = self._last[b.name]
                tm = 0.5 * (t0 + step.t)
                speed = self.films.speed_of(b, tm)
                Fm = b.journal.force(0.5 * (x0 + x), 0.5 * (v0 + v), speed,
                                     derivatives=False).force
                work = w0 + float((Fm + b.load) @ (x - x0))
            self._last[b.name] = (step.t, x, v, work)
            h["position"].append(x)
            h["velocity"].append(v)
            h["force"].append(F)
            h["eccentricity"].append(float(np.linalg.norm(x))
                                     / float(getattr(b.journal, "clearance", 1.0)))
            h["work"].append(work)
            row += [float(x[0]), float(x[1]), float(F[0]), float(F[1])]
        return row

    def results(self) -> ObserverResults:
        """``journals``: {bearing name: {position, velocity, force (n, 2), eccentricity,
        work (n,)}}.

        Returns:
            The results.
        """
        return ObserverResults(journals={n: {k: np.array(v) for k, v in h.items()}
                                         for n, h in self.history.items()})


class ProbeHistory(Observer):
    """Displacement at probe points (parallel point ownership, :class:`dolfinx_mbs.io.Probes`).

    Args:
        bodies: the model's bodies.
        probes: points of the first body, or (body, point) pairs.
    """

    needs_u = True

    def __init__(self, bodies: Sequence, probes: Sequence) -> None:
        self.probes = Probes(bodies, list(probes))
        self.columns = probe_columns(self.probes.n, self.probes.dim)
        self.values: List[np.ndarray] = []

    def observe(self, step: Step) -> List[float]:
        """Record the bodies' displacement at the probes.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        pv = self.probes.evaluate()
        self.values.append(pv)
        return pv.reshape(-1).tolist()


class Reactions(Observer):
    """Resultant force of each of ``constraints`` on its body (N): ``history`` in global
    components (the CSV's), ``frame_history`` in the body frame's (steady on a body that
    spins steadily under a steady load, where the global ones turn with the frame).

    Args:
        system: the run's typed system.
        constraints: the constraints whose reactions are recorded.

    Raises:
        ValueError: two constraints of one name.
    """

    needs_velocity = True

    def __init__(self, system: RunSystem, constraints: Sequence) -> None:
        self.system = system
        self.constraints = list(constraints)
        names = [c.name for c in self.constraints]
        if len(set(names)) != len(names):
            raise ValueError("reactions: the constraints must have distinct names (pass name=)")
        gd = [c.body_b.gdim if hasattr(c, "body_b") else c.body.gdim for c in self.constraints]
        self.columns = [f"{n}:F{'xyz'[i]}" for n, g in zip(names, gd) for i in range(g)]
        self.history: Dict[str, list] = {n: [] for n in names}
        self.frame_history: Dict[str, list] = {n: [] for n in names}
        self._forces = system.space.create_vec()
        self._acc = None

    def observe(self, step: Step) -> List[float]:
        """Record the constraints' resultant forces at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        t = step.t
        if self.system.has_multipliers:  # -B^T lambda: read off the state
            forces = cast("SaddlePoint", self.system).constraint_forces(t, step.q,
                                                                        out=self._forces)
        else:
            if self._acc is None:
                self._acc = step.q.duplicate()
            assert step.stepper is not None  # (a run's steps carry their stepper)
            a = step.stepper.acceleration(t, step.q, step.v, self._acc)
            forces = self.system.constraint_forces(t, step.q, step.v, a, self._forces)
        row = []
        for name, (body, tot) in frame_resultants(self.system.space, forces,
                                                  self.constraints).items():
            g = body.gdim
            val = (body.frame.state(t).R @ tot)[:g]
            self.history[name].append(val)
            self.frame_history[name].append(tot[:g].copy())
            row += val.tolist()
        return row


class DriveHistory(Observer):
    """The force and torque that drive each prescribed frame (global components; the torque
    about the frame's origin): :class:`dolfinx_mbs.systems.drives.Drives` at every step, with
    the acceleration from the equations of motion.

    Args:
        system: the run's typed system.
        drives: the prescribed frames' :class:`~dolfinx_mbs.systems.drives.Drives`.
    """

    needs_velocity = True

    def __init__(self, system: RunSystem, drives: Drives) -> None:
        self.system, self.drives = system, drives
        self.columns = [f"{lb}:{k}{c}" for lb in drives.labels for k in ("F", "M")
                        for c in "xyz"]
        self.history: Dict[str, list] = {lb: [] for lb in drives.labels}
        self._acc = None
        self._full = [system.space.create_vec() for _ in range(3)]

    def observe(self, step: Step) -> List[float]:
        """Record the drives' force and torque at the step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        s, t = self.system, step.t
        if self._acc is None:
            self._acc = step.q.duplicate()
        assert step.stepper is not None  # (a run's steps carry their stepper)
        a = step.stepper.acceleration(t, step.q, step.v, self._acc)
        u, ud, udd = self._full
        s.expand(step.q, out=u)
        s.expand_rate(step.q, step.v, out=ud)
        s.expand_acceleration(step.q, step.v, a, out=udd)
        row = []
        for label, (F, M) in self.drives.at(t, u, ud, udd).items():
            self.history[label].append({"force": F, "torque": M})
            row += F.tolist() + M.tolist()
        return row

    def close(self) -> None:
        """Destroy the full vectors."""
        for v in self._full:
            v.destroy()
        self._full = []


class Callback(Observer):
    """``fn(state)`` with a :class:`~dolfinx_mbs.integrate.config.StepState` holding the
    full displacement and velocity (``u``, ``v``: valid during the call).

    Args:
        system: the run's typed system.
        fn: the user's callback, of one argument
            (:func:`~dolfinx_mbs.integrate.config.step_callback`).
    """

    needs_velocity = True
    needs_u = True

    def __init__(self, system: RunSystem, fn: Callable) -> None:
        self.system, self.fn = system, fn
        self._v = system.space.create_vec()

    def observe(self, step: Step) -> List[float]:
        """Call the user's function (collectively: an error on one rank raises on all).

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        self.system.expand_rate(step.q, step.v, out=self._v)
        with checks.collective(self.system.comm, f"callback at t={step.t:g}"):
            self.fn(StepState(t=step.t, index=step.index, u=step.u, v=self._v))
        return []


class Fields(Observer):
    """Every ``every``-th step, each body's displacement and global motion to its field file
    (:class:`dolfinx_mbs.io.MotionWriter`), with the frames' state at the step's time.

    Args:
        bodies: the bodies written.
        stem: the files' stem.
        every: the steps between two outputs.
        keep_until: a restart's time: the files' steps up to it kept, or None.
    """

    needs_u = True

    def __init__(self, bodies: Sequence, stem: str, every: int,
                 keep_until: float | None = None) -> None:
        self.writer = MotionWriter(bodies, stem, keep_until)
        self.every = every

    def observe(self, step: Step) -> List[float]:
        """Write the fields where the step is due.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        if step.index % self.every == 0:
            self.writer.write(step.t)
        return []

    def close(self) -> None:
        """Close the field files."""
        self.writer.close()


class Csv(Observer):
    """Writes time and the other observers' columns, one row per output time, as produced.

    Args:
        path: the CSV file.
        columns: the columns after the time.
        comm: the run's communicator (rank 0 writes).
        append: continue an existing file (a restart).
        order: the observers whose values make the row after the time, in this order.
    """

    def __init__(self, path: str, columns: Sequence[str], comm: MPI.Comm,
                 append: bool = False, order: Sequence[str] = CSV_ORDER) -> None:
        self.writer = TimeSeriesWriter(path, ["t"] + list(columns), comm, append)
        self.order = tuple(order)

    def write(self, t: float, row: List[float]) -> None:
        """Write the row of time ``t``.

        Args:
            t: the time (s).
            row: the other observers' values.
        """
        self.writer.write([t] + row)

    def close(self) -> None:
        """Close the file."""
        self.writer.close()


class Progress(Observer):
    """A progress bar on rank 0 (tqdm, when installed) for runs of 100 steps or more.

    Args:
        comm: the run's communicator.
        n_steps: the steps the run is expected to take.
        label: the bar's words.
    """

    whole_run = True

    def __init__(self, comm: MPI.Comm, n_steps: int, label: str) -> None:
        #: tqdm's bar, or None
        self.bar: Any = None
        if comm.rank == 0 and n_steps >= 100:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=n_steps, desc=label, leave=False)
            except ImportError:  # pragma: no cover
                self.bar = None

    def observe(self, step: Step) -> List[float]:
        """Advance the bar by a step.

        Args:
            step: the run's state.

        Returns:
            The values of :attr:`columns`.
        """
        if self.bar is not None and step.index > 0:
            self.bar.update(1)
        return []

    def close(self) -> None:
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()


def make_observers(system: RunSystem, label: str, n_steps: int, a: Recording,
                   resume: Checkpoint | None = None,
                   energies: Type[Energies] | None = None, probes: Callable | None = None,
                   stability: Observer | None = None,
                   truncate_csv: Callable | None = None) -> Mapping[str, Observer]:
    """The run's observers, in the order they see a step.

    The finiteness check comes right after the energies it reads, the CSV row is assembled
    from the others' columns.

    Args:
        system: the run's typed system.
        label: the progress bar's words.
        n_steps: the steps the run is expected to take.
        a: what the run records (:class:`~dolfinx_mbs.integrate.config.Recording`: probes,
            output, output_every, progress, reactions, energy, callback, drives).
        resume: a checkpoint to continue (energies' accumulators restored, files continued
            after ``truncate_csv``), or None.
        energies: another observer class of the energies (``energies(system)``; the dense
            path's), or None.
        probes: another factory of the probes' observer (``probes(bodies, points)``), or
            None.
        stability: the divergence check, or None.
        truncate_csv: ``truncate_csv(comm, path, t, header)``, cutting a restarted run's CSV.

    Returns:
        The observers by name (read-only, in the order they see a step).

    Raises:
        ValueError: a constraint of ``reactions`` that is not the model's.
    """
    out: Dict[str, Observer] = {}
    if a.energy:
        out["energy"] = (energies or Energies)(system)
        if resume is not None and "energy" in resume.accumulators:
            cast(Energies, out["energy"]).restore(resume.accumulators["energy"])
    out["finite"] = Finite(cast("Energies | None", out.get("energy")))
    if stability is not None:
        out["stability"] = stability
    if a.callback is not None:
        out["callback"] = Callback(system, a.callback)
    if a.probes:
        out["probes"] = (probes or ProbeHistory)(system.bodies, a.probes)
    rc = a.reactions
    if rc:
        if rc is True:
            rc = list(system.constraints)
        else:
            rc = list(rc)
            for c in rc:
                if not any(c is k for k in system.constraints):
                    raise ValueError(f"reactions: {c!r} is not a constraint of this model")
        out["reactions"] = Reactions(system, rc)
    if a.drives is not None:
        out["drives"] = DriveHistory(system, a.drives)
    if getattr(system, "films", None) is not None:
        out["journals"] = Journals(cast("SecondOrderSystem", system))
    if a.output is not None:
        cols = [c for k in CSV_ORDER if k in out for c in out[k].columns]
        keep = None if resume is None else resume.t
        if resume is not None:
            assert truncate_csv is not None  # (given with resume)
            truncate_csv(system.comm, a.output + ".csv", keep, ["t"] + cols)
        out["csv"] = Csv(a.output + ".csv", cols, system.comm, append=keep is not None)
        out["fields"] = Fields(system.bodies, a.output, a.output_every, keep)
    if a.progress:
        out["progress"] = Progress(system.comm, n_steps, label)
    return FrozenMapping(out)


def named(watch: Mapping[str, Observer], name: str, kind: Type[_Named]) -> _Named | None:
    """The observer ``name`` of a run, of the class its name stands for.

    The observer ``name`` of a run's observers (:func:`make_observers`, and the driver's
    additions), which is of the class ``kind`` that name stands for, or None where the run
    has none.

    Args:
        watch: the run's observers by name.
        name: the name (``"energy"``, ``"finite"``, ``"probes"``, ...).
        kind: the class of the observers of that name (or a base of it).

    Returns:
        The observer, or None.

    Raises:
        TypeError: the observer under ``name`` is not a ``kind``.
    """
    o = watch.get(name)
    if o is not None and not isinstance(o, kind):
        raise TypeError(f"the run's observer {name!r} is a {type(o).__name__}, not a "
                        f"{kind.__name__}")
    return o


def notify(watch: Mapping[str, Observer], step: Step, system: Coordinates,
           full: PETSc.Vec | None, funcs: Sequence[Any], set_u: bool = True,
           again: bool = False) -> None:
    """Pass ``step`` to the observers in order.

    Those of :data:`FIRST` first, then (the bodies' ``u`` set from ``step.q`` when ``set_u``)
    the others, the CSV row last of its columns.

    Args:
        watch: the observers.
        step: the run's state.
        system: the run's system (typed, or coupled).
        full: a full vector (the bodies' displacement is expanded into it), None for a
            system without elastic bodies.
        funcs: the bodies' ``u``.
        set_u: set the bodies' ``u`` from ``step.q``.
        again: the step is a restart's first, whose CSV row and fields the files hold.
    """
    values = {k: watch[k].observe(step) for k in FIRST if k in watch}
    if set_u and full is not None:
        system.expand(step.q, out=full)  # the bodies' u at t: what the observers below read
        system.space.scatter(full, funcs)
    for name, o in watch.items():
        if name == "csv":
            if not again:
                csv = cast(Csv, o)
                csv.write(step.t, [x for k in csv.order for x in values.get(k, ())])
        elif name not in FIRST and not (again and name == "fields"):
            values[name] = o.observe(step)


class FrameHistory:
    """A computed frame's history over a run's times: its named outputs as arrays (a hinge's
    ``angle`` and ``rate``; a free frame's ``R`` (n, 3, 3), ``r_O``, ``omega``, ``v_O`` (n,
    3), omega and v_O in local components as :class:`~dolfinx_mbs.frames.FrameState` gives
    them) and ``torque`` (the applied loads' moment about the origin, local components, (n,
    3); for a hinge the moment about its axis, (n,)).

    Args:
        records: the frame's outputs at each time, by name.
    """

    def __init__(self, records: List[dict]) -> None:
        keys = records[0].keys() if records else ()
        for k in keys:
            setattr(self, k, np.array([r[k] for r in records]))
        self.names = tuple(keys)

    def __repr__(self) -> str:
        return f"FrameHistory({', '.join(self.names)})"
