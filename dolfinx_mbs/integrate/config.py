"""A run's options, typed: :class:`RunConfig` and its parts, checked once when made.

:meth:`dolfinx_mbs.Model.integrate` takes the options as keywords (the short form) and makes a
:class:`RunConfig` of them; a run may also be given one made by hand::

    from dolfinx_mbs.integrate import RunConfig, Scheme, Output, Observers
    cfg = RunConfig(t_end=1.0, dt=1e-3, scheme=Scheme(spectral_radius=0.8),
                    output=Output("out/run", every=10),
                    observers=Observers(callback=lambda s: print(s.t)))
    r = model.integrate(cfg)

Each part checks its own values when it is made (a bad value raises ``ValueError`` or
``TypeError`` naming the keyword of :meth:`~dolfinx_mbs.Model.integrate`); what depends on
the model (the formulations a system takes, the stepper that applies) is checked by the path
that runs it. The user's ``callback`` takes one :class:`StepState`, on both paths (prescribed
and computed frames); the older forms ``callback(t, u, v)`` and ``callback(t, frames)`` still
work, with a ``DeprecationWarning`` (:func:`step_callback`).

:data:`RunSystem` (the typed systems a run of prescribed frames steps) is named here for the
modules below the driver, which read it for typing only.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, List, Literal, Mapping, Sequence, Union, get_args

import numpy as np

from dolfinx_mbs import checks

if TYPE_CHECKING:
    from petsc4py import PETSc

    from dolfinx_mbs.systems.drives import Drives
    from dolfinx_mbs.systems.multipliers import SaddlePoint
    from dolfinx_mbs.systems.second_order import SecondOrderSystem
    from dolfinx_mbs.systems.velocity import VelocitySystem

    #: a run's typed system (:meth:`dolfinx_mbs.Model.system`; Hamilton's is a second-order one)
    RunSystem = Union[SecondOrderSystem, VelocitySystem, SaddlePoint]

__all__ = ["RunConfig", "Scheme", "Initial", "Output", "Checkpoints", "Solver", "Observers",
           "StepState", "Formulation", "Constraints", "StepperName", "StabilityMode",
           "step_callback", "given"]

#: the formulations of a run
Formulation = Literal["second-order", "first-order", "hamiltonian"]
#: the constraint forms of a run of prescribed frames
Constraints = Literal["maggi", "multipliers"]
#: the steppers (``"exact"`` and ``"linear"``: prescribed frames only)
StepperName = Literal["auto", "ts", "dense", "exact", "linear"]
#: what the divergence check does
StabilityMode = Literal["warn", "error", "off"]


def _choice(value: object, name: str, kind: Any) -> None:
    """Refuse ``value`` outside the ``Literal`` type ``kind``."""
    allowed = get_args(kind)
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _count(value: object, name: str, what: str) -> None:
    """Refuse ``value`` that is not a positive integer."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer{what}, got {value!r}")


def _flag(value: object, name: str) -> None:
    if value not in (True, False):
        raise ValueError(f"{name} must be True or False, got {value!r}")


@dataclasses.dataclass(frozen=True)
class StepState:
    """What the user's ``callback`` is given at every output step (one argument, both paths).

    Attributes:
        t: the time (s).
        index: the step's number (0: the initial state).
        u: prescribed frames: the full displacement (a PETSc Vec, valid during the call),
            else None.
        v: prescribed frames: the full velocity (as ``u``), else None.
        frames: computed frames: each frame's outputs by name (``{"hub": {"angle": ...,
            "rate": ...}}``), else None.
    """

    t: float
    index: int = 0
    u: PETSc.Vec | None = None
    v: PETSc.Vec | None = None
    frames: Mapping[str, Mapping[str, Any]] | None = None


def _arity(fn: Callable[..., object]) -> int | None:
    """How many positional arguments ``fn`` takes in the older forms (2 or more), or None where
    it is a function of one argument (or of ``*args`` alone), or its signature cannot be read.

    A function that takes two or more positional arguments, required or not (``(t, u=None,
    v=None)``), or one and ``*args`` (``(t, *rest)``), is of an older form: given one
    :class:`StepState` it would read it as ``t``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is p.VAR_POSITIONAL for p in params)
    if len(named) >= 2 or (named and star):
        return max(len(named), 2)
    return None


def step_callback(fn: Callable[..., object], old: str,
                  stacklevel: int = 4) -> Callable[[StepState], object]:
    """The user's ``callback`` as a function of one :class:`StepState`.

    A function of one argument is taken as it is; one of more (the older forms, ``(t, u, v)``
    of a run of prescribed frames and ``(t, frames)`` of a run of computed frames) is
    wrapped, with a ``DeprecationWarning``.

    Args:
        fn: the user's callback.
        old: its older form's arguments, ``"t, u, v"`` or ``"t, frames"``.
        stacklevel: the warning's place (the user's call of :meth:`~dolfinx_mbs.Model.integrate`).

    Returns:
        The callback of one :class:`StepState`.
    """
    if _arity(fn) is None:
        return fn
    warnings.warn(f"callback({old}) is deprecated: give a function of one argument, a "
                  "dolfinx_mbs.integrate.StepState (state.t, state.u, state.v, "
                  "state.frames)", DeprecationWarning, stacklevel=stacklevel)
    if old == "t, u, v":
        return lambda s: fn(s.t, s.u, s.v)
    return lambda s: fn(s.t, s.frames)


@dataclasses.dataclass(frozen=True)
class Scheme:
    """How a run steps.

    Attributes:
        formulation: ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``; None: the
            path's default (:meth:`dolfinx_mbs.Model.integrate`).
        constraints: ``"maggi"`` or ``"multipliers"`` (prescribed frames).
        spectral_radius: generalized-alpha's high-frequency spectral radius in [0, 1], or None.
        stepper: ``"auto"``, ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"``
            (:func:`dolfinx_mbs.integrate.integrate`).
        load_degree: the dense paths' load fit: the polynomials' degree.
        load_frequencies: the dense paths' load fit: angular frequencies (rad/s).
    """

    formulation: Formulation | None = None
    constraints: Constraints = "maggi"
    spectral_radius: float | None = None
    stepper: StepperName = "auto"
    load_degree: int = 2
    load_frequencies: Sequence[float] = ()

    def __post_init__(self) -> None:
        if self.formulation is not None:
            _choice(self.formulation, "formulation", Formulation)
        _choice(self.constraints, "constraints", Constraints)
        _choice(self.stepper, "stepper", StepperName)
        if self.spectral_radius is not None:
            r = checks.real(self.spectral_radius, "spectral_radius")
            if not 0.0 <= r <= 1.0:
                raise ValueError(f"spectral_radius must lie in [0, 1], got "
                                 f"{self.spectral_radius!r}")


@dataclasses.dataclass(frozen=True)
class Initial:
    """Where a run starts.

    Attributes:
        t0: the initial time (s).
        u0: the initial displacement (relative to the frame): None (zero), a Function per
            body, or a PETSc Vec in the full or reduced layout.
        v0: the initial velocity, as ``u0``.
        p0: the initial generalized momentum (Hamilton's form of prescribed frames), as
            ``u0``.
    """

    t0: float = 0.0
    u0: Any = None
    v0: Any = None
    p0: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "t0", checks.real(self.t0, "t0"))

    def given(self) -> tuple:
        """(u0, v0, p0)."""
        return self.u0, self.v0, self.p0


@dataclasses.dataclass(frozen=True)
class Output:
    """What a run writes.

    Attributes:
        stem: the files' stem (``<stem>.csv``, the field files), or None: no files.
        every: the steps between two field outputs (the CSV gets every step).
        progress: a progress bar on rank 0 (tqdm, when installed).
    """

    stem: str | None = None
    every: int = 1
    progress: bool = True

    def __post_init__(self) -> None:
        _count(self.every, "output_every", "")
        object.__setattr__(self, "every", int(self.every))


@dataclasses.dataclass(frozen=True)
class Checkpoints:
    """A run's checkpoints (:mod:`dolfinx_mbs.integrate.checkpoint`).

    Attributes:
        every: write the state needed to continue every this many steps and at the end
            (needs :attr:`Output.stem`), or None.
        restart: continue from the last checkpoint of :attr:`Output.stem`.
    """

    every: int | None = None
    restart: bool = False

    def __post_init__(self) -> None:
        if self.every is not None:
            _count(self.every, "checkpoint_every", " or None")
            object.__setattr__(self, "every", int(self.every))
        _flag(self.restart, "restart")
        object.__setattr__(self, "restart", bool(self.restart))


@dataclasses.dataclass(frozen=True)
class Solver:
    """The run's PETSc options.

    Attributes:
        options: PETSc options for this run without the prefix (``{"ts_type": "bdf"}``), or
            None.
        prefix: the options prefix of the run's solvers.
    """

    options: Mapping[str, object] | None = None
    prefix: str = "mbs_"

    def __post_init__(self) -> None:
        if self.options is not None and not isinstance(self.options, Mapping):
            raise TypeError(f"options must be a dict of PETSc options or None, got "
                            f"{self.options!r}")
        if not isinstance(self.prefix, str):
            raise TypeError(f"prefix must be text, got {self.prefix!r}")


@dataclasses.dataclass(frozen=True)
class Observers:
    """What a run records besides the state.

    Attributes:
        probes: points of the first body, or (body, point) pairs, to record u at.
        energy: record the energies (and, with computed frames, the momenta).
        reactions: True or constraints whose resultant forces are recorded (prescribed
            frames).
        callback: ``callback(state)`` with a :class:`StepState` at every output step,
            collectively on every rank; or None.
        stability: the divergence check: ``"warn"``, ``"error"`` or ``"off"`` (prescribed
            frames).
        drives: record the forces and torques that drive the prescribed frames.
    """

    probes: Sequence[Any] = ()
    energy: bool = True
    reactions: bool | Sequence[Any] = False
    callback: Callable[..., object] | None = None
    stability: StabilityMode = "warn"
    drives: bool = False

    def __post_init__(self) -> None:
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable (one StepState) or None, got "
                             f"{self.callback!r}")
        _choice(self.stability, "stability", StabilityMode)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A run's options (see the module docstring), checked when made.

    Attributes:
        t_end: the final time (s).
        dt: the step (s): positive, at most ``t_end - t0``.
        scheme: how it steps.
        initial: where it starts.
        output: what it writes.
        checkpoints: its checkpoints.
        solver: its PETSc options.
        observers: what it records.
    """

    t_end: float
    dt: float
    scheme: Scheme = Scheme()
    initial: Initial = Initial()
    output: Output = Output()
    checkpoints: Checkpoints = Checkpoints()
    solver: Solver = Solver()
    observers: Observers = Observers()

    def __post_init__(self) -> None:
        # numpy scalars too (a float32 t_end from a parameter array is a time like any other)
        for name, part in (("scheme", Scheme), ("initial", Initial), ("output", Output),
                           ("checkpoints", Checkpoints), ("solver", Solver),
                           ("observers", Observers)):
            if not isinstance(getattr(self, name), part):
                raise TypeError(f"{name} must be a dolfinx_mbs.integrate.{part.__name__}, got "
                                f"{getattr(self, name)!r}")
        t_end, dt = checks.real(self.t_end, "t_end"), checks.real(self.dt, "dt")
        t0 = self.initial.t0
        if dt <= 0.0:
            raise ValueError(f"dt must be positive, got {dt!r}")
        if t_end <= t0:
            raise ValueError(f"t_end must exceed t0 ({t0}), got {t_end!r}")
        if dt > (t_end - t0) * (1.0 + 1e-12):
            raise ValueError(f"dt={dt!r} exceeds the run's length t_end - t0 = {t_end - t0!r}: "
                             "the run would take one shorter step of the length instead; give "
                             "a dt at most t_end - t0")
        object.__setattr__(self, "t_end", t_end)
        object.__setattr__(self, "dt", dt)

    @property
    def t0(self) -> float:
        """The initial time (s)."""
        return self.initial.t0


@dataclasses.dataclass(frozen=True)
class Recording:
    """What a run's observers read of its options (made by the paths of a :class:`RunConfig`;
    internal).

    Attributes:
        probes: :attr:`Observers.probes`.
        output: :attr:`Output.stem`.
        output_every: :attr:`Output.every`.
        progress: :attr:`Output.progress`.
        reactions: :attr:`Observers.reactions`.
        energy: :attr:`Observers.energy`.
        callback: the callback of one :class:`StepState` (:func:`step_callback`), or None.
        stability: :attr:`Observers.stability` (``"off"`` on the coupled path).
        multigrid: the step solver is multigrid (the divergence check's eigensolver).
        drives: the :class:`~dolfinx_mbs.systems.drives.Drives` recorded, or None.
    """

    probes: Sequence[Any] = ()
    output: str | None = None
    output_every: int = 1
    progress: bool = True
    reactions: bool | Sequence[Any] = False
    energy: bool = True
    callback: Callable[[StepState], object] | None = None
    stability: StabilityMode = "warn"
    multigrid: bool = False
    drives: Drives | None = None


def _plain(value: object) -> object:
    """``value`` as the plain Python its default is spelled in: a NumPy scalar as its item;
    an empty sequence or mapping as None (no entries: as given none)."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        return item()
    if isinstance(value, (Sequence, Mapping)) and not isinstance(value, str) and not value:
        return None
    size = getattr(value, "size", None)
    return None if size == 0 else value


def _same(value: object, default: object) -> bool:
    if value is default:
        return True
    value, default = _plain(value), _plain(default)
    if value is None and (default is None or default is False):
        return True
    simple = (str, int, float, bool, tuple, type(None))
    return isinstance(value, simple) and isinstance(default, simple) and value == default \
        and not (isinstance(value, float) and math.isnan(value))


#: the keywords of :meth:`dolfinx_mbs.Model.integrate` whose names are not their fields'
_KEYWORDS = {("Output", "stem"): "output", ("Output", "every"): "output_every",
             ("Checkpoints", "every"): "checkpoint_every"}


def given(part: Any, names: Sequence[str] | None = None) -> List[str]:
    """The fields of a config part given other values than their defaults.

    Args:
        part: a :class:`Scheme`, :class:`Initial`, ... (a frozen dataclass).
        names: the fields to look at (None: all).

    Returns:
        Their keywords of :meth:`dolfinx_mbs.Model.integrate`, in the order of the fields.
    """
    out = []
    for f in dataclasses.fields(part):
        if names is not None and f.name not in names:
            continue
        if not _same(getattr(part, f.name), f.default):
            out.append(_KEYWORDS.get((type(part).__name__, f.name), f.name))
    return out
