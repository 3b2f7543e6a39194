"""The seam between the driver of a run and whatever steps it: the :class:`Stepper` protocol.

Every backend (:mod:`dolfinx_mbs.integrate.ts`, :mod:`dolfinx_mbs.integrate.sparse`,
:mod:`dolfinx_mbs.integrate.dense`) steps a run through one typed protocol, and the driver
(:mod:`dolfinx_mbs.integrate.driver`) owns what a run records (observers, checkpoints, files,
the errors' words) for all of them. A stepper is made for one run (:class:`RunSpec`), says
itself whether it can take it (``applies``), is given the initial state, then marches: it
calls the driver's :class:`Boundary` at every step boundary (the initial state first), and
the driver asks it for the state there and the products its observers read. The time loop is
the stepper's: a Python loop for the backends that step in Python (:class:`PythonLoop`,
written once here), PETSc's ``TSSolve`` with a monitor for the TS backend.
"""

from __future__ import annotations

import dataclasses
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Protocol,
    Sequence,
    Tuple,
    Type,
    runtime_checkable,
)

from petsc4py import PETSc

from dolfinx_mbs.integrate.schemes import step_times

if TYPE_CHECKING:
    from typing import TypeGuard

    from dolfinx_mbs.integrate.checkpoint import Checkpoint, CoupledUnknowns
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.integrate.dense.exact import LoadBasis
    from dolfinx_mbs.integrate.observers import Energies, Observer
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["RunSpec", "Needs", "State", "Boundary", "Stepper", "StepperClass", "PythonLoop",
           "ts_only", "steps_in_python"]


def ts_only(system: RunSystem) -> str | None:
    """Why only PETSc TS steps ``system``, or None.

    Why only PETSc TS steps ``system`` (words for the errors), or None: the backends that
    step in Python take linear systems without multipliers or velocity rows.

    Args:
        system: the run's typed system.

    Returns:
        The reason in words, or None when every backend may step it.
    """
    if system.has_multipliers:
        return "Lagrange multipliers (constraints='multipliers')"
    if hasattr(system, "basis"):
        return "velocity constraints"
    if system.nonlinear:
        return "nonlinear strain (stiffening='nonlinear')"
    if getattr(system, "films", None) is not None:
        return "fluid-film bearings (the film's nonlinear force, Model.bearing(journal=))"
    return None


def steps_in_python(system: RunSystem) -> TypeGuard[SecondOrderSystem]:
    """Whether the backends that step in Python may step ``system``.

    Whether :func:`ts_only` finds nothing against the backends that step in Python: then
    ``system`` has no multipliers and no velocity rows, a second-order system (Hamilton's is
    one), the system those backends take.

    Args:
        system: the run's typed system.

    Returns:
        True when :func:`ts_only` gives None.
    """
    return ts_only(system) is None


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """What a run asks of its stepper.

    What a run asks of its stepper: :func:`dolfinx_mbs.integrate.integrate`'s arguments
    that the stepping reads (the rest is the driver's).

    Attributes:
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
        t0: the initial time (s).
        t_end: the final time (s).
        dt: the step (s).
        spectral_radius: generalized-alpha's high-frequency spectral radius, or None.
        options: the run's PETSc options (without the prefix), or None.
        prefix: the PETSc options prefix.
        reactions: the reactions asked for (False, True or constraints).
        energy: the energies are recorded.
        load_basis: the dense paths' :class:`~dolfinx_mbs.integrate.dense.exact.LoadBasis`.
        checkpoints: the run writes or reads checkpoints.
        drives: the run records the prescribed frames' drives (TS only).
    """

    formulation: str
    t0: float
    t_end: float
    dt: float
    spectral_radius: float | None = None
    options: Dict[str, object] | None = None
    prefix: str = "mbs_"
    reactions: object = False
    energy: bool = True
    load_basis: LoadBasis | None = None
    checkpoints: bool = False
    drives: bool = False

    def times(self) -> List[float]:
        """The output times after t0.

        The output times after t0 as the TS path steps to them
        (:func:`dolfinx_mbs.integrate.schemes.step_times`).
        """
        return step_times(self.t0, self.t_end, self.dt)


@dataclasses.dataclass(frozen=True)
class Needs:
    """What the run's observers read at a step boundary.

    What the run's observers read at a step boundary (the driver tells the stepper once,
    before it marches).

    Attributes:
        velocity: the reduced velocity v.
        vectors: q and v as PETSc vectors (not only as a dense stepper's arrays).
        displacement: the bodies' ``u`` (set by the driver from q).
        whole_run: the observers, when every one of them can see a whole run at once
            (``observe_all``); a stepper that forms all its states before anyone looks may
            give them the run in one go (:meth:`Boundary.passed`). None otherwise.
    """

    velocity: bool = True
    vectors: bool = True
    displacement: bool = True
    whole_run: Mapping[str, Observer] | None = None


@dataclasses.dataclass
class State:
    """The reduced state at a step boundary, as a stepper gives it.

    Attributes:
        q: reduced displacement (a Vec the stepper reuses).
        v: reduced velocity (valid when :attr:`Needs.velocity`).
        Mv: M v where the stepper has it without a product (Hamilton's TS form), else None.
        dense: (q, v, operators) as numpy arrays on every rank (dense steppers), else None.
        frames: the computed frames' unknowns (a coupled run's, on every rank), else None.
    """

    q: PETSc.Vec
    v: PETSc.Vec
    Mv: PETSc.Vec | None = None
    dense: tuple | None = None
    frames: Any = None


class Boundary(Protocol):
    """The driver's side of the seam: called by the stepper at every step boundary."""

    def __call__(self, index: int, t: float) -> None:
        """The run is at step ``index`` (0: the initial state), time ``t``."""

    def passed(self, times: Sequence[float], last: int | None = None) -> None:
        """Steps were given to the observers at once.

        The stepper gave the whole-run observers (:attr:`Needs.whole_run`) every step
        at once, or a batch of steps ending at step ``last``.

        Args:
            times: the times of the steps given.
            last: the index of the last of them (None: ``len(times) - 1``, the whole run).
        """


@runtime_checkable
class Stepper(Protocol):
    """What every backend implements (see the module docstring).

    Attributes:
        path: ``"ts"``, ``"linear"``, ``"dense"`` or ``"exact"`` (``Result.stepper``).
        formulation: the formulation stepped.
        method: the scheme as the log, the progress bar and the errors name it.
        scheme: the scheme's PETSc TS name, or ``"expm"`` (``Result.ts_type``).
        n_steps: the steps the run is expected to take (the progress bar's total).
        steps: the steps taken.
        time: the time reached, or being stepped to when a step fails.
        checkpoints: the stepper writes checkpoints and restarts from them.
        named: the system whose unknowns a checkpoint names (so that it restarts on another
            number of ranks), or None where the stepper's vectors are not its unknowns.
        energies_observer: an observer class of the energies that reads the stepper's own
            operators (``Step.dense``), or None for the usual one.
        probes_observer: a factory ``(bodies, points)`` of the probes' observer, or None.
    """

    path: str
    formulation: str
    method: str
    scheme: str
    n_steps: int
    steps: int
    time: float
    checkpoints: bool
    named: Any
    energies_observer: Type[Energies] | None
    probes_observer: Callable[[Sequence, Sequence], Observer] | None

    @staticmethod
    def applies(system: RunSystem, run: RunSpec) -> str | None:
        """Whether this stepper can step ``run`` on ``system``.

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None when this stepper can step ``run`` on ``system``, else why not (words for
            the log and the errors).
        """

    def initial(self, t0: float, q0: PETSc.Vec, v0: PETSc.Vec,
                p0: PETSc.Vec | None) -> None:
        """The state at ``t0``.

        Args:
            t0: the initial time (s).
            q0: the reduced displacement.
            v0: the reduced velocity.
            p0: Hamilton's momentum, which replaces v0 when given, or None.
        """

    def resume(self, ckpt: Checkpoint, stem: str, t_end: float) -> None:
        """Continue from a checkpoint.

        Continue from the checkpoint ``ckpt`` of ``stem`` (:mod:`dolfinx_mbs.integrate.
        checkpoint`) instead of the initial state.

        Args:
            ckpt: the checkpoint read.
            stem: the checkpoints' file stem.
            t_end: the run's final time (s).
        """

    def snapshot(self) -> Tuple[int, float, float, list]:
        """(step number, time, next step size, solution vectors): what a checkpoint holds."""

    def extra(self) -> CoupledUnknowns | None:
        """The run's global state a checkpoint holds besides :meth:`snapshot`'s vectors (the
        same on every rank: a coupled run's frame unknowns), or None."""

    def checkpointed(self) -> None:
        """A checkpoint was written and the run goes on.

        The run continues as a restart from the checkpoint would (the same steps).
        """

    def prepare(self, needs: Needs) -> None:
        """What the observers will read at the boundaries (called once, before :meth:`march`).

        Args:
            needs: what they read.
        """

    def march(self, at: Boundary) -> None:
        """Step the run through, calling ``at(index, t)`` at every step boundary.

        Args:
            at: the driver's side of the seam.
        """

    def state(self, t: float, need_v: bool) -> State:
        """The reduced state at the boundary ``t`` just reached.

        Args:
            t: the boundary's time (s).
            need_v: whether the velocity is read.

        Returns:
            The state.
        """

    def record(self, t: float) -> Any:
        """The operators at ``t`` the energies read.

        Args:
            t: the time (s).

        Returns:
            The system's record, or the stepper's own with its load vectors.
        """

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """(M v, K_el q, K_pot q) at the state (q, v) of the record ``s``.

        Args:
            s: the record (:meth:`record`).
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v where the caller has it, or None.

        Returns:
            (M v, K_el q, K_pot q).
        """

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Q'' from the equations of motion at (q, v), into ``out`` (the reactions').

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector to fill.

        Returns:
            ``out``.
        """

    def failure(self, error: BaseException) -> str:
        """The words of a failed step's error.

        Args:
            error: what the step raised.

        Returns:
            Its words, with the solvers' reasons where known.
        """

    def destroy(self) -> None:
        """Release the stepper's PETSc objects (collective)."""


class StepperClass(Protocol):
    """A backend's stepper class as :mod:`dolfinx_mbs.integrate.choice` uses it.

    Asked whether it :meth:`applies` to a run, then called to make the stepper of the run.
    The backends that step in Python take a second-order system (:func:`steps_in_python`);
    the TS backend takes every run's system, a second-order one among them.
    """

    def applies(self, system: RunSystem, run: RunSpec) -> str | None:
        """Whether the class's stepper can step ``run`` (:meth:`Stepper.applies`).

        Args:
            system: the run's typed system.
            run: the run.

        Returns:
            None when it can, else why not.
        """

    def __call__(self, system: SecondOrderSystem, run: RunSpec) -> Stepper:
        """The stepper made for ``run`` on ``system``.

        Args:
            system: the run's system.
            run: the run.

        Returns:
            The stepper.
        """


class PythonLoop:
    """The time loop of the steppers that step in Python.

    The time loop of the steppers that step in Python: ``step(t, h)`` from each output
    time to the next (:meth:`RunSpec.times`), the boundary after each. Written once for the
    sparse and dense backends.
    """

    times: List[float]
    steps = 0
    time = 0.0
    checkpoints = False
    named: Any = None
    energies_observer: Type[Energies] | None = None
    probes_observer: Callable[[Sequence, Sequence], Observer] | None = None

    def step(self, t: float, h: float) -> None:  # pragma: no cover - the backend's
        """The step from ``t`` to ``t + h``.

        Args:
            t: the step's start (s).
            h: its size (s).
        """
        raise NotImplementedError

    def march(self, at: Boundary) -> None:
        """Step through ``self.times`` (the first the initial time), ``at`` after each.

        Args:
            at: the driver's side of the seam.
        """
        self.loop(at)

    def loop(self, at: Callable[[int, float], None]) -> None:
        """The loop of :meth:`march`, calling ``at(index, t)`` at every step boundary.

        Args:
            at: called at every step boundary (the driver's, or a stepper's own).
        """
        out = self.times
        self.time = out[0]
        at(0, out[0])
        for index in range(1, len(out)):
            t0, self.time = out[index - 1], out[index]
            self.step(t0, self.time - t0)
            self.steps = index
            at(index, self.time)

    def resume(self, ckpt: Checkpoint, stem: str, t_end: float) -> None:
        """Refused: checkpoints are written by the TS path only.

        Args:
            ckpt: the checkpoint.
            stem: the checkpoints' file stem.
            t_end: the run's final time (s).

        Raises:
            ValueError: always.
        """
        raise ValueError("checkpoints are written by the TS path only (stepper='ts')")

    def snapshot(self) -> Tuple[int, float, float, list]:
        """Refused: checkpoints are written by the TS path only."""
        raise ValueError("checkpoints are written by the TS path only (stepper='ts')")

    def extra(self) -> CoupledUnknowns | None:
        """None: no checkpoint is written on this path."""
        return None

    def checkpointed(self) -> None:
        """Nothing: no checkpoint is written on this path."""

    def prepare(self, needs: Needs) -> None:
        """Keep what the observers read.

        Args:
            needs: what they read.
        """
        self.needs: Needs | None = needs  # (None in a subclass until prepared)

    def failure(self, error: BaseException) -> str:
        """The error's own words.

        Args:
            error: what the step raised.

        Returns:
            ``str(error)``.
        """
        return str(error)


class CoupledRecords:
    """The stepper protocol's record, energy and reaction hooks of a coupled run, which no
    one asks of it (its observers read the state): mixed in before the loop's class by the
    TS and the dense coupled steppers."""

    def record(self, t: float) -> Any:
        """Not asked: a coupled run's energies are its own observer's.

        Args:
            t: the time (s).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("a coupled run's energies are observed from its state")

    def energy_products(self, s: Any, q: PETSc.Vec, v: PETSc.Vec,
                        Mv: PETSc.Vec | None = None) -> tuple:
        """Not asked (see :meth:`record`).

        Args:
            s: the record.
            q: the reduced displacement.
            v: the reduced velocity.
            Mv: M v, or None.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("a coupled run's energies are observed from its state")

    def acceleration(self, t: float, q: PETSc.Vec, v: PETSc.Vec,
                     out: PETSc.Vec) -> PETSc.Vec:
        """Not asked: a coupled run has no reactions of prescribed constraints.

        Args:
            t: the time (s).
            q: the reduced displacement.
            v: the reduced velocity.
            out: the vector to fill.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("reactions are not recorded in a coupled run")
