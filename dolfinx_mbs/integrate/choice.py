"""Which stepper takes a run: the one place where the path is chosen and its thresholds set.

``stepper="auto"`` takes, in this order: PETSc TS (:mod:`dolfinx_mbs.integrate.ts`) for what
only it steps (multipliers, velocity rows, nonlinear strain: :func:`~dolfinx_mbs.integrate.
stepper.ts_only`), for checkpoints, for the prescribed frames' drives and for any PETSc option
given but the step solver's; the sparse path (:mod:`dolfinx_mbs.integrate.sparse`) when the
step solver's options alone are given and it applies; the dense path
(:mod:`dolfinx_mbs.integrate.dense`) up to :data:`DENSE_MAX` unknowns for a constant frame
state, :data:`DENSE_MAX_VARYING` for frames changing in time whose operators are combinations
of constant reduced matrices and whose loads change through the frames and gravity only; else
the sparse path where it applies, else TS. A stepper named by the user is checked by its own
``applies`` (an error naming why, on every rank: the reasons are the system's, the same on
every rank).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict

from dolfinx_mbs.integrate.dense.stepper import BatchStepper, DenseStepper, ExactStepper
from dolfinx_mbs.integrate.dense.varying import applies as varying_applies
from dolfinx_mbs.integrate.dense.varying import loads_steady
from dolfinx_mbs.integrate.sparse.alpha2 import SparseAlpha2
from dolfinx_mbs.integrate.sparse.midpoint import SparseMidpoint
from dolfinx_mbs.integrate.sparse.stepper import SOLVER_OPTIONS, SparseStepper
from dolfinx_mbs.integrate.stepper import (
    RunSpec,
    Stepper,
    StepperClass,
    steps_in_python,
    ts_only,
)
from dolfinx_mbs.integrate.ts.stepper import TSStepper
from dolfinx_mbs.petsc_options import given_options
from dolfinx_mbs.systems.records import constant_frame

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem

__all__ = ["STEPPERS", "DENSE_MAX", "DENSE_MAX_VARYING", "choose", "make"]


STEPPERS = ("auto", "ts", "dense", "exact", "linear")

#: Largest reduced systems (unknowns) that ``integrate(stepper="auto")`` steps in dense form:
#: for a constant frame state (matrices gathered and factorized once; second-order form, loads
#: assembled per step: 0.62-0.85x TS's time up to 100 unknowns, 0.68x at 200, 1.58x at 400;
#: bench/results/dense.md, idle machine), and for frames that change in time (operators
#: combined from stacks gathered once, a whole run's steps formed in batch,
#: :mod:`dolfinx_mbs.integrate.dense.batch`: O(n^3) a step with a larger constant than a sparse LU;
#: bench/dense.py --size-load constant, the spun-up rod with its loads combined from unit
#: loads, one BLAS thread: 0.14x TS's time at 20 unknowns, 0.33x at 40, 0.52x at 60, 1.28x at
#: 80, 2.72x at 100, under load 7 (bench/results/dense.md, 21:47 on 2026-11-23); the reduced
#: KRB strip, 10 unknowns: bench/results/reduction.md).
DENSE_MAX = 300
DENSE_MAX_VARYING = 60


def _dense(system: RunSystem) -> StepperClass:
    """The dense path's stepper of ``system``.

    The dense path's stepper of ``system``: in batch where its frames change in time as
    combinations of constant reduced matrices, step by step else (whose ``applies`` says
    why a system the path cannot step is refused).
    """
    return BatchStepper if steps_in_python(system) and not constant_frame(system) and \
        varying_applies(system) else DenseStepper


def _sparse(run: RunSpec) -> StepperClass:
    return SparseMidpoint if run.formulation == "hamiltonian" else SparseAlpha2


def _auto(system: RunSystem, run: RunSpec) -> str:
    given = set(given_options(run.prefix)) | {k for k in (run.options or {})
                                              if k != "ts_alpha_radius"}
    if run.checkpoints or run.drives or not steps_in_python(system) or \
            any(not k.startswith(SOLVER_OPTIONS) for k in given):
        return "ts"
    linear = "linear" if SparseStepper.applies(system, run) is None else "ts"
    if given:  # the step solver's options only: the linear path reads them
        return linear
    limit = DENSE_MAX if constant_frame(system) else \
        DENSE_MAX_VARYING if varying_applies(system) and loads_steady(system) else 0
    return "dense" if system.n_reduced <= limit else linear


def choose(system: RunSystem, run: RunSpec, stepper: str) -> str:
    """The path of ``run`` on ``system``: ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"``.

    Args:
        system: the run's typed system.
        run: the run.
        stepper: the user's ``stepper`` argument (:data:`STEPPERS`).

    Returns:
        The path (``"auto"`` resolved; see the module docstring).

    Raises:
        ValueError: an unknown ``stepper``, or one that cannot step the run (why, named).
    """
    if stepper not in STEPPERS:
        raise ValueError(f"stepper must be one of {STEPPERS}, got {stepper!r}")
    if stepper == "auto":
        return _auto(system, run)
    if stepper == "ts":
        return stepper
    kinds: Dict[str, StepperClass] = {"dense": _dense(system), "exact": ExactStepper,
                                      "linear": _sparse(run)}
    why = kinds[stepper].applies(system, run)
    if why is not None and stepper == "linear":
        raise ValueError(f"stepper='linear' cannot step a run with {why}: use "
                         "stepper='ts' or 'auto'")
    if why is not None:
        raise ValueError(f"stepper={stepper!r}: a system with {why} steps with PETSc TS only "
                         "(stepper='ts' or 'auto')")
    if run.drives:
        raise ValueError(f"stepper={stepper!r}: the frames' drives (drives=True) are "
                         "recorded on the TS path only (stepper='ts' or 'auto')")
    if run.checkpoints:
        raise ValueError(f"stepper={stepper!r}: checkpoints (checkpoint_every=, "
                         "restart=) are written by the TS path only (stepper='ts')")
    return stepper


def make(system: RunSystem, run: RunSpec, path: str) -> Stepper:
    """The stepper of ``path`` (:func:`choose`) for ``run`` on ``system``.

    Args:
        system: the run's typed system.
        run: the run.
        path: ``"ts"``, ``"dense"``, ``"exact"`` or ``"linear"`` (:func:`choose`).

    Returns:
        The stepper, made for the run.

    Raises:
        ValueError: a path that steps in Python for a system that only TS steps (which
            :func:`choose` does not give).
    """
    if path == "ts":
        return TSStepper(system, run)
    if not steps_in_python(system):
        raise ValueError(f"stepper={path!r}: a system with {ts_only(system)} steps with PETSc "
                         "TS only (stepper='ts' or 'auto')")
    kinds: Dict[str, StepperClass] = {"dense": _dense(system), "exact": ExactStepper,
                                      "linear": _sparse(run)}
    return kinds[path](system, run)
